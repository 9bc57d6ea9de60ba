package repo

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
)

// ReadFile reads the regular file at the repository path rel, of at most
// limit bytes.
func (c *Checkout) ReadFile(rel string, limit int64) ([]byte, error) {
	return c.ReadFileTo(rel, limit, nil)
}

// ReadFileTo is ReadFile reading into a buffer alloc returns for the
// file's size, for a caller that cuts many small reads from larger blocks.
// The result is alloc's buffer, trimmed to what was read.
func (c *Checkout) ReadFileTo(rel string, limit int64, alloc func(size int64) []byte) ([]byte, error) {
	p, err := Clean(rel)
	if err != nil {
		return nil, err
	}
	if p == "." {
		return nil, &fs.PathError{Op: "read", Path: rel, Err: ErrNotRegular}
	}
	var data []byte
	switch {
	case c.mem != nil:
		data, err = c.mem.read(p, limit, alloc)
	case c.fast != nil:
		data, err = c.fast.read(p, limit, alloc)
	default:
		data, err = c.portableRead(p, limit, alloc)
	}
	if err != nil {
		return nil, pathErr("read", rel, c.outside(err))
	}
	return data, nil
}

// Stat describes what rel names, following a symbolic link that stays
// inside the checkout.
func (c *Checkout) Stat(rel string) (fs.FileInfo, error) { return c.stat(rel, true) }

// Lstat is Stat that describes a final symbolic link itself.
func (c *Checkout) Lstat(rel string) (fs.FileInfo, error) { return c.stat(rel, false) }

func (c *Checkout) stat(rel string, follow bool) (fs.FileInfo, error) {
	p, err := Clean(rel)
	if err != nil {
		return nil, err
	}
	var fi fs.FileInfo
	switch {
	case c.mem != nil:
		fi, err = c.mem.stat(p)
	case c.fast != nil:
		fi, err = c.fast.stat(p, follow)
	case follow:
		fi, err = c.dir.Stat(p)
	default:
		fi, err = c.dir.Lstat(p)
	}
	if err != nil {
		return nil, lookupErr("stat", rel, c.outside(err))
	}
	return fi, nil
}

// Exists reports whether rel names something, following links inside the
// checkout. A path that does not exist is false; one that leads outside
// is an error.
func (c *Checkout) Exists(rel string) (bool, error) {
	_, err := c.Stat(rel)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, err
}

// IsRegular reports whether rel is a regular file inside the checkout.
func (c *Checkout) IsRegular(rel string) bool {
	fi, err := c.Stat(rel)
	return err == nil && fi.Mode().IsRegular()
}

// IsDir reports whether rel is a directory inside the checkout.
func (c *Checkout) IsDir(rel string) bool {
	fi, err := c.Stat(rel)
	return err == nil && fi.IsDir()
}

// portableRead is ReadFileTo through os.Root.
func (c *Checkout) portableRead(rel string, limit int64, alloc func(int64) []byte) ([]byte, error) {
	f, err := c.dir.OpenFile(rel, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpenFile(f, limit, alloc)
}

// readOpenFile reads f if it is a regular file of at most limit bytes.
func readOpenFile(f *os.File, limit int64, alloc func(int64) []byte) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, ErrNotRegular
	}
	if fi.Size() > limit {
		return nil, &TooLargeError{Size: fi.Size(), Limit: limit}
	}
	var buf []byte
	if alloc != nil {
		buf = alloc(fi.Size())
	} else {
		buf = make([]byte, fi.Size())
	}
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	return buf[:n:n], nil
}

// ReadRegular reads a file of the operator's (a CLI config, an event
// file) by host path with the same care as a checkout's: a regular file
// only, opened without blocking, of at most limit bytes. Links are
// followed: the operator named it.
func ReadRegular(name string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := readOpenFile(f, limit, nil)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	return data, nil
}

// rootEscape is the error os.Root reports for a path that leaves it,
// which it does not export.
var rootEscape = sync.OnceValue(func() error {
	r, err := os.OpenRoot(os.TempDir())
	if err != nil {
		return nil
	}
	defer r.Close()
	_, err = r.Stat("../x")
	return Cause(err)
})

// outside translates os.Root's escape error into ErrOutside.
func (c *Checkout) outside(err error) error {
	if err == nil || errors.Is(err, ErrOutside) {
		return err
	}
	if e := rootEscape(); e != nil && (errors.Is(err, e) || strings.Contains(err.Error(), e.Error())) {
		return ErrOutside
	}
	return err
}
