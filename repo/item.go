package repo

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// WithSpecDir returns a copy of the checkout whose spec root, the directory
// holding one folder per work item, is rel. The directory need not exist;
// if it does, it must resolve inside the checkout.
func (c *Checkout) WithSpecDir(rel string) (*Checkout, error) {
	p, err := Clean(rel)
	if err != nil {
		return nil, err
	}
	if _, err := c.Stat(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	cp := *c
	cp.specRel = p
	return &cp, nil
}

// SpecDir is the spec root, repository-relative ("docs/specs").
func (c *Checkout) SpecDir() string { return c.specRel }

// ValidID reports whether id can name a work item: one path element, not
// "." or "..", with no separator or NUL in it.
func ValidID(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, "/\\\x00")
}

// Item is a work item whose id and folder have been checked: the folder is
// a directory inside the checkout.
type Item struct {
	// ID is the spec folder's name.
	ID string
	// Dir is the spec folder, repository-relative and slash-separated.
	Dir string
}

// ItemError is a work item that cannot be addressed.
type ItemError struct {
	ID  string
	Dir string // repository-relative; "" when the id itself is refused
	Err error
}

func (e *ItemError) Error() string {
	switch {
	case e.Dir == "":
		return fmt.Sprintf("work item id %q: want the name of a folder in the spec directory, not a path", e.ID)
	case errors.Is(e.Err, fs.ErrNotExist):
		return fmt.Sprintf("work item %q: no spec folder at %s", e.ID, e.Dir)
	case errors.Is(e.Err, ErrOutside):
		return fmt.Sprintf("work item %q: its folder %s leads outside the checkout; a work item must live inside the repository", e.ID, e.Dir)
	}
	return fmt.Sprintf("work item %q: %s: %v", e.ID, e.Dir, e.Err)
}

func (e *ItemError) Unwrap() error { return e.Err }

// ItemDir is where the work item id's folder is, without looking.
func (c *Checkout) ItemDir(id string) string { return path.Join(c.specRel, id) }

// Item checks id and its folder once: the id names one folder in the spec
// root, and that folder is a directory inside the checkout.
func (c *Checkout) Item(id string) (Item, error) {
	if !ValidID(id) {
		return Item{}, &ItemError{ID: id}
	}
	it := Item{ID: id, Dir: c.ItemDir(id)}
	fi, err := c.Stat(it.Dir)
	switch {
	case err != nil:
		return it, &ItemError{ID: id, Dir: it.Dir, Err: Cause(err)}
	case !fi.IsDir():
		return it, &ItemError{ID: id, Dir: it.Dir, Err: errors.New("not a directory")}
	}
	return it, nil
}

// CreateItem makes the folder of the new work item id in the spec root,
// and the spec root itself when it is missing, inside the checkout: an id
// Item refuses is refused here too, and a spec root or folder that would
// lead outside the checkout is never created through. A folder already
// there (made by a writer racing this one) is taken as it is, if Item
// accepts it.
func (c *Checkout) CreateItem(id string) (Item, error) {
	if err := c.Creatable(id); err != nil {
		return Item{ID: id, Dir: c.ItemDir(id)}, err
	}
	it := Item{ID: id, Dir: c.ItemDir(id)}
	if err := c.MkdirAll(c.specRel); err != nil {
		return it, &ItemError{ID: id, Dir: it.Dir, Err: Cause(err)}
	}
	if err := c.Mkdir(it.Dir); err != nil && !errors.Is(err, fs.ErrExist) {
		return it, &ItemError{ID: id, Dir: it.Dir, Err: Cause(err)}
	}
	return c.Item(id)
}

// Creatable reports whether CreateItem(id) can make the folder without
// writing anything first, so that a verb can refuse before it writes
// anything else: the id is a folder's name, nothing is at the folder's
// place but a directory (not a file, not a link to nothing), and each part
// of the spec root that is there is a directory inside the checkout.
func (c *Checkout) Creatable(id string) error {
	if !ValidID(id) {
		return &ItemError{ID: id}
	}
	dir := c.ItemDir(id)
	fail := func(err error) error { return &ItemError{ID: id, Dir: dir, Err: err} }
	parts := strings.Split(dir, "/")
	for i := range parts {
		p := path.Join(parts[:i+1]...)
		if p == "." {
			continue
		}
		if _, err := c.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			return nil // nothing below it can be there either
		} else if err != nil {
			return fail(Cause(err))
		}
		fi, err := c.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fail(fmt.Errorf("%sa link to nothing", what(p, dir)))
		case err != nil:
			return fail(Cause(err))
		case !fi.IsDir():
			return fail(fmt.Errorf("%snot a directory", what(p, dir)))
		}
	}
	return nil
}

// what names p in an error about dir: nothing when it is dir itself.
func what(p, dir string) string {
	if p == dir {
		return ""
	}
	return p + " is "
}

// Items lists the work items: the spec root's subdirectories, sorted,
// links to directories inside the checkout included (Item accepts them
// too). A missing spec root is an error wrapping fs.ErrNotExist.
func (c *Checkout) Items() ([]string, error) {
	entries, err := c.ReadDir(c.specRel)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		switch e.Kind {
		case KindDir:
			out = append(out, e.Name)
		case KindOther:
			if c.IsDir(path.Join(c.specRel, e.Name)) {
				out = append(out, e.Name)
			}
		}
	}
	return out, nil
}
