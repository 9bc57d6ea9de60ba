package ingress

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// DefaultMaxQueueFile bounds the queue file. The queue holds deliveries
// waiting and the ids of those processed, so it stays small; Accept
// answers 503 before the file would pass it, and a file over it on open is
// not one serve wrote, so it is moved aside unread.
const DefaultMaxQueueFile = 1 << 30

// A damaged queue file: why it cannot be opened safely. OpenQueue moves
// such a file aside and starts with an empty queue.
type damaged struct{ why string }

func (d *damaged) Error() string { return d.why }

func damagef(format string, a ...any) error { return &damaged{fmt.Sprintf(format, a...)} }

// The parts of bbolt's file format (version 2) the check reads. bbolt
// maps the file into memory and follows the page numbers it finds there
// without bounds: a page number past the end of the file is a fault that
// kills the process, not an error. So the file is walked here first, with
// reads that can only fail, before bbolt is given it.
const (
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	pageHeaderSize   = 16 // id uint64, flags uint16, count uint16, overflow uint32
	elementSize      = 16 // a branch's (pos, ksize, pgid) or a leaf's (flags, pos, ksize, vsize)
	metaSize         = 64
	branchPage       = 0x01
	leafPage         = 0x02
	metaPage         = 0x04
	freelistPage     = 0x10
	bucketLeafFlag   = 0x01
	noFreelist       = ^uint64(0)
	maxTreeDepth     = 64 // a B+tree of a file under the bound is a few levels deep
	minPageSize      = 512
	maxPageSize      = 64 << 10
	inBucketSize     = 16 // root pgid, sequence
	freelistOverflow = 0xFFFF
)

// bbolt writes its numbers in the machine's order.
var ne = binary.NativeEndian

// boltMeta is the part of a meta page the check uses.
type boltMeta struct {
	pageSize uint32
	root     uint64
	freelist uint64
	hwm      uint64 // pages in use: every page number is below it
	txid     uint64
}

// parseMeta reads the meta page at the start of b, or says why it is not
// one.
func parseMeta(b []byte) (boltMeta, error) {
	if len(b) < pageHeaderSize+metaSize {
		return boltMeta{}, errors.New("short meta page")
	}
	if ne.Uint16(b[8:]) != metaPage {
		return boltMeta{}, errors.New("not a meta page")
	}
	m := b[pageHeaderSize : pageHeaderSize+metaSize]
	if ne.Uint32(m[0:]) != boltMagic {
		return boltMeta{}, errors.New("not a bbolt file (bad magic)")
	}
	if v := ne.Uint32(m[4:]); v != boltVersion {
		return boltMeta{}, fmt.Errorf("bbolt format version %d, want %d", v, boltVersion)
	}
	h := fnv.New64a()
	h.Write(m[:56])
	if h.Sum64() != ne.Uint64(m[56:]) {
		return boltMeta{}, errors.New("meta page checksum mismatch")
	}
	return boltMeta{
		pageSize: ne.Uint32(m[8:]),
		root:     ne.Uint64(m[16:]),
		freelist: ne.Uint64(m[32:]),
		hwm:      ne.Uint64(m[40:]),
		txid:     ne.Uint64(m[48:]),
	}, nil
}

// fileChecker walks a bbolt file through ReadAt.
type fileChecker struct {
	r       io.ReaderAt
	size    int64
	meta    boltMeta
	visited map[uint64]bool
}

// checkBoltFile walks every page the file's current meta page reaches (the
// buckets' trees, their nested buckets and the freelist) and returns a
// *damaged error for the first page number past the end of the file or its
// high-water mark, page of the wrong kind, element outside its page, or
// page reached twice. Its work is bounded by the file's size: each page is
// read at most once.
func checkBoltFile(r io.ReaderAt, size int64) error {
	m, err := pickMeta(r, size)
	if err != nil {
		return err
	}
	ps := int64(m.pageSize)
	if m.hwm < 4 || m.hwm > uint64(size/ps) {
		return damagef("the file has %d pages of %d bytes, and its meta page says %d: it was truncated", size/ps, ps, m.hwm)
	}
	c := &fileChecker{r: r, size: size, meta: m, visited: map[uint64]bool{0: true, 1: true}}
	if m.freelist != noFreelist {
		if err := c.checkFreelist(m.freelist); err != nil {
			return err
		}
	}
	return c.checkTree(m.root, 0)
}

// pickMeta chooses the meta page bbolt would: of the two, the valid one
// with the later transaction. The second sits one page in, and the page
// size is the first's; when the first is unreadable, the sizes bbolt can
// write are tried.
func pickMeta(r io.ReaderAt, size int64) (boltMeta, error) {
	buf := make([]byte, pageHeaderSize+metaSize)
	read := func(off int64) (boltMeta, error) {
		if off+int64(len(buf)) > size {
			return boltMeta{}, errors.New("past the end of the file")
		}
		if _, err := r.ReadAt(buf, off); err != nil {
			return boltMeta{}, err
		}
		m, err := parseMeta(buf)
		if err == nil && (m.pageSize < minPageSize || m.pageSize > maxPageSize || m.pageSize&(m.pageSize-1) != 0) {
			err = fmt.Errorf("page size %d", m.pageSize)
		}
		return m, err
	}
	m0, err0 := read(0)
	var m1 boltMeta
	err1 := errors.New("no second meta page")
	if err0 == nil {
		m1, err1 = read(int64(m0.pageSize))
		if err1 == nil && m1.pageSize != m0.pageSize {
			err1 = errors.New("its page size differs from the first's")
		}
	} else {
		for ps := int64(minPageSize); ps <= maxPageSize && err1 != nil; ps *= 2 {
			if m1, err1 = read(ps); err1 == nil && int64(m1.pageSize) != ps {
				err1 = errors.New("its page size is not its offset")
			}
		}
	}
	switch {
	case err0 != nil && err1 != nil:
		return boltMeta{}, damagef("neither meta page can be read (%v; %v)", err0, err1)
	case err0 != nil:
		return m1, nil
	case err1 != nil || m0.txid >= m1.txid:
		return m0, nil
	default:
		return m1, nil
	}
}

// page reads page id and its overflow, checking its header.
func (c *fileChecker) page(id uint64) ([]byte, uint16, error) {
	if id < 2 || id >= c.meta.hwm {
		return nil, 0, damagef("page %d is past the file's %d pages", id, c.meta.hwm)
	}
	if c.visited[id] {
		return nil, 0, damagef("page %d is reached twice", id)
	}
	ps := int64(c.meta.pageSize)
	head := make([]byte, pageHeaderSize)
	if _, err := c.r.ReadAt(head, int64(id)*ps); err != nil {
		return nil, 0, fmt.Errorf("read page %d: %w", id, err)
	}
	if got := ne.Uint64(head); got != id {
		return nil, 0, damagef("page %d says it is page %d", id, got)
	}
	overflow := uint64(ne.Uint32(head[12:]))
	if id+overflow >= c.meta.hwm {
		return nil, 0, damagef("page %d runs %d pages past the file's %d", id, overflow, c.meta.hwm)
	}
	for i := id; i <= id+overflow; i++ {
		if c.visited[i] {
			return nil, 0, damagef("page %d is reached twice", i)
		}
		c.visited[i] = true
	}
	b := make([]byte, int64(overflow+1)*ps)
	if _, err := c.r.ReadAt(b, int64(id)*ps); err != nil {
		return nil, 0, fmt.Errorf("read page %d: %w", id, err)
	}
	return b, ne.Uint16(b[8:]), nil
}

func (c *fileChecker) checkFreelist(id uint64) error {
	b, flags, err := c.page(id)
	if err != nil {
		return err
	}
	if flags != freelistPage {
		return damagef("page %d should be the freelist, and has flags %#x", id, flags)
	}
	n, start := uint64(ne.Uint16(b[10:])), uint64(pageHeaderSize)
	if n == freelistOverflow {
		n, start = ne.Uint64(b[pageHeaderSize:]), pageHeaderSize+8
	}
	if n > (uint64(len(b))-start)/8 {
		return damagef("the freelist on page %d lists %d pages, more than it holds", id, n)
	}
	for i := range n {
		if p := ne.Uint64(b[start+8*i:]); p < 2 || p >= c.meta.hwm {
			return damagef("the freelist on page %d lists page %d, past the file's %d", id, p, c.meta.hwm)
		}
	}
	return nil
}

// checkTree checks the B+tree whose root is page id, and the buckets it
// holds.
func (c *fileChecker) checkTree(id uint64, depth int) error {
	if depth > maxTreeDepth {
		return damagef("page %d is nested more than %d deep", id, maxTreeDepth)
	}
	b, flags, err := c.page(id)
	if err != nil {
		return err
	}
	switch flags {
	case branchPage:
		n, err := elements(b, id)
		if err != nil {
			return err
		}
		if n == 0 {
			return damagef("branch page %d is empty", id)
		}
		for i := range n {
			e := b[pageHeaderSize+i*elementSize:]
			if _, err := span(b, pageHeaderSize+i*elementSize, ne.Uint32(e[0:]), ne.Uint32(e[4:]), id); err != nil {
				return err
			}
			if err := c.checkTree(ne.Uint64(e[8:]), depth+1); err != nil {
				return err
			}
		}
		return nil
	case leafPage:
		return c.checkLeaf(b, id, depth, false)
	default:
		return damagef("page %d should be a branch or a leaf, and has flags %#x", id, flags)
	}
}

// checkLeaf checks a leaf page's elements, and the buckets they hold: an
// inline bucket (a page inside the value) or another tree. An inline
// bucket holds no buckets.
func (c *fileChecker) checkLeaf(b []byte, id uint64, depth int, inline bool) error {
	n, err := elements(b, id)
	if err != nil {
		return err
	}
	for i := range n {
		off := pageHeaderSize + i*elementSize
		e := b[off:]
		ksize, vsize := ne.Uint32(e[8:]), ne.Uint32(e[12:])
		kv, err := span(b, off, ne.Uint32(e[4:]), ksize+vsize, id)
		if ksize+vsize < ksize {
			err = damagef("page %d: element %d's sizes overflow", id, i)
		}
		if err != nil {
			return err
		}
		if ne.Uint32(e[0:])&bucketLeafFlag == 0 {
			continue
		}
		if inline {
			return damagef("page %d: an inline bucket holds a bucket", id)
		}
		v := kv[ksize:]
		if len(v) < inBucketSize {
			return damagef("page %d: bucket %d's header is short", id, i)
		}
		if root := ne.Uint64(v); root != 0 {
			if err := c.checkTree(root, depth+1); err != nil {
				return err
			}
			continue
		}
		page := v[inBucketSize:]
		if len(page) < pageHeaderSize || ne.Uint16(page[8:]) != leafPage {
			return damagef("page %d: inline bucket %d is not a leaf", id, i)
		}
		if err := c.checkLeaf(page, id, depth+1, true); err != nil {
			return err
		}
	}
	return nil
}

// elements is the count of b's elements, checked to fit in b.
func elements(b []byte, id uint64) (int, error) {
	n := int(ne.Uint16(b[10:]))
	if pageHeaderSize+n*elementSize > len(b) {
		return 0, damagef("page %d has %d elements, more than it holds", id, n)
	}
	return n, nil
}

// span is the length bytes at pos past the element at off, checked to lie
// in b.
func span(b []byte, off int, pos, length uint32, id uint64) ([]byte, error) {
	start := uint64(off) + uint64(pos)
	if end := start + uint64(length); end > uint64(len(b)) {
		return nil, damagef("page %d: an element's key or value runs past the page", id)
	}
	return b[start : start+uint64(length)], nil
}

// inspectFile says whether the file at path can be given to bbolt: nil
// when it is missing (a new queue) or a regular file of at most max bytes
// whose pages check, a *damaged error when it is not, ErrLocked when
// another process holds it, and any other error when it cannot be read.
// It never opens anything but a regular file, and never follows a link.
func inspectFile(path string, max int64) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode()&os.ModeSymlink != 0:
		return damagef("it is a symbolic link, not a regular file")
	case fi.IsDir():
		return damagef("it is a directory, not a regular file")
	case !fi.Mode().IsRegular():
		return damagef("it is a %s, not a regular file", fi.Mode().Type())
	case fi.Size() == 0:
		return damagef("it is empty: it was truncated, and what it held is lost")
	case fi.Size() > max:
		return damagef("it is %d bytes, over the %d a queue may take", fi.Size(), max)
	}
	f, err := openNoFollow(path)
	if err != nil {
		return err
	}
	defer f.Close()
	// Another serve may be writing it: its lock is waited for, as bbolt
	// would, and while it is held here nobody writes.
	if err := lockFile(f); err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !os.SameFile(fi, st) || !st.Mode().IsRegular() {
		return errors.New("the file was replaced while it was checked; start again")
	}
	return checkBoltFile(f, st.Size())
}
