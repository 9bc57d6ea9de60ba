package repo

import (
	"errors"
	"io/fs"
	"slices"
)

// Kind is what a walk needs to know of a directory entry.
type Kind uint8

const (
	KindOther   Kind = iota // a symbolic link, a device, a FIFO...
	KindDir                 // a directory (not a link to one)
	KindRegular             // a regular file
)

// ErrLink is a symbolic link met where none is followed: a lock file.
var ErrLink = errors.New("a symbolic link, which is not followed here")

// ListDir calls visit with the name and kind of each entry of the
// directory at rel (but . and ..) and returns how many there were. The
// directory is reached like any path, following links only while they stay
// inside; its entries are reported as they are (a link is KindOther), so
// a walk that descends into KindDir entries only follows no link.
//
// visit's name may be a view of a reused buffer, valid only during the
// call: a caller that keeps it copies it. A glob over a source tree lists
// thousands of entries and keeps few, so on Linux this reads the raw
// records and allocates nothing per entry.
func (c *Checkout) ListDir(rel string, visit func(name string, kind Kind)) (int, error) {
	p, err := Clean(rel)
	if err != nil {
		return 0, err
	}
	var n int
	switch {
	case c.mem != nil:
		n, err = c.mem.list(p, visit)
	case c.fast != nil:
		n, err = c.fast.list(p, visit)
	default:
		n, err = c.portableList(p, visit)
	}
	if err != nil {
		return n, pathErr("list", rel, c.outside(err))
	}
	return n, nil
}

func (c *Checkout) portableList(rel string, visit func(string, Kind)) (int, error) {
	f, err := c.dir.Open(rel)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	for _, e := range entries {
		visit(e.Name(), KindOf(e.Type()))
	}
	return len(entries), err
}

// KindOf is the Kind of an entry of mode m.
func KindOf(m fs.FileMode) Kind {
	switch {
	case m.IsDir():
		return KindDir
	case m.IsRegular():
		return KindRegular
	}
	return KindOther
}

// Entry is one directory entry ReadDir lists.
type Entry struct {
	Name string
	Kind Kind
}

// ReadDir lists the directory at rel, sorted by name. Its entries are as
// ListDir reports them.
func (c *Checkout) ReadDir(rel string) ([]Entry, error) {
	var out []Entry
	_, err := c.ListDir(rel, func(name string, kind Kind) {
		out = append(out, Entry{Name: string(append([]byte(nil), name...)), Kind: kind})
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b Entry) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out, nil
}
