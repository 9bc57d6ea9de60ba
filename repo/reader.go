package repo

// Reader reads files of a checkout one after another, for one goroutine
// at a time: what a rule over a source tree does, thousands of small files
// a directory at a time. Its reads are Checkout.ReadFileTo's, with the same
// confinement, results and errors; only their cost differs.
//
// On Linux, once two reads in a row are in the same directory, a Reader
// holds a descriptor of that directory, opened like any path (beneath the
// root, following links only while they stay inside), and opens the
// directory's files from it by name, refusing a link. Opening one name
// costs the kernel less than resolving the whole path beneath the root
// again. Whatever that open refuses (a link, which may lead anywhere; a
// name that is not there) is read again the whole way, so that the
// answer, and the error, are the whole way's.
//
// The zero value is not usable; use Checkout.Reader. Close releases the
// descriptor it holds; a Reader dropped without Close releases it when
// it is collected.
type Reader struct {
	c  *Checkout
	at *dirCursor // nil where every read goes the whole way
}

// Reader returns a Reader of c's files.
func (c *Checkout) Reader() *Reader {
	r := &Reader{c: c}
	if c.fast != nil {
		r.at = newDirCursor(c.fast)
	}
	return r
}

// ReadFileTo is Checkout.ReadFileTo.
func (r *Reader) ReadFileTo(rel string, limit int64, alloc func(size int64) []byte) ([]byte, error) {
	if r.at != nil && isCleanFile(rel) {
		if data, err, ok := r.at.read(rel, limit, alloc); ok {
			if err != nil {
				return nil, pathErr("read", rel, err)
			}
			return data, nil
		}
	}
	return r.c.ReadFileTo(rel, limit, alloc)
}

// Close releases the directory descriptor the Reader holds, if any. The
// Reader may be used again afterwards, and is then as new.
func (r *Reader) Close() {
	if r.at != nil {
		r.at.close()
	}
}

// isCleanFile reports whether rel is a path Clean returns unchanged and
// that names something below the root: relative, without an empty, "."
// or ".." element and without a NUL. Such a path means the same whether
// it is resolved from the root or its directory from the root and its
// last element from that directory.
func isCleanFile(rel string) bool {
	// A byte loop: it runs for every file a rule reads.
	start := 0
	for i := 0; i <= len(rel); i++ {
		if i < len(rel) && rel[i] != '/' {
			if rel[i] == 0 {
				return false
			}
			continue
		}
		switch rel[start:i] {
		case "", ".", "..":
			return false
		}
		start = i + 1
	}
	return true
}
