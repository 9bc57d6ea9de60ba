package repo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Errors a confined operation fails with, inside an *fs.PathError.
var (
	// ErrOutside: the path is absolute, climbs out with "..", or reaches
	// outside the checkout through a symbolic link.
	ErrOutside = errors.New("leads outside the checkout")
	// ErrNotRegular: a read met a directory, a FIFO, a device or a socket.
	ErrNotRegular = errors.New("not a regular file")
)

// TooLargeError is a read refused by its size: Size is what the file holds
// (or at least holds), Limit what the caller allowed.
type TooLargeError struct{ Size, Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%d bytes, over the limit of %d", e.Size, e.Limit)
}

// Checkout is one repository checkout opened for confined access. The zero
// value is not usable; use Open. A Checkout is immutable and safe for
// concurrent use; copies made by WithSpecDir share its descriptors.
type Checkout struct {
	root    string   // absolute, symbolic links resolved
	specRel string   // the spec root, cleaned and slash-separated; "" when unset
	dir     *os.Root // the portable confinement, and every write
	fast    *beneath // Linux's openat2 on a root descriptor; nil elsewhere
	mem     *memTree // the files of a checkout held in memory; nil on disk
}

// Open opens the directory at root as a checkout. root is the operator's
// choice (a flag, the working directory), so a link leading to it is
// followed; everything below it is confined.
func Open(root string) (*Checkout, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("open checkout %s: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("open checkout %s: %w", root, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("open checkout %s: %w", root, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("open checkout %s: not a directory", root)
	}
	dir, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("open checkout %s: %w", root, err)
	}
	return &Checkout{root: real, dir: dir, fast: openBeneath(real)}, nil
}

// Root is the checkout's absolute path, symbolic links resolved.
func (c *Checkout) Root() string { return c.root }

// Close releases the checkout's descriptors. A checkout that is simply
// dropped releases them when it is collected.
func (c *Checkout) Close() error {
	if c.mem != nil {
		return nil
	}
	c.fast.close()
	return c.dir.Close()
}

// Clean checks rel lexically and returns it cleaned: "." for the root, else
// a slash-separated path that stays inside. It does not look at the disk.
func Clean(rel string) (string, error) {
	switch {
	case rel == "":
		return "", errors.New("an empty path")
	case strings.ContainsRune(rel, 0):
		return "", fmt.Errorf("%q contains a NUL byte", rel)
	case strings.HasPrefix(rel, "/") || filepath.IsAbs(rel) || filepath.VolumeName(rel) != "":
		return "", &fs.PathError{Op: "resolve", Path: rel, Err: fmt.Errorf("%w: it is absolute; paths are relative to the repository root", ErrOutside)}
	}
	p := path.Clean(rel)
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", &fs.PathError{Op: "resolve", Path: rel, Err: ErrOutside}
	}
	return p, nil
}

// Abs is the host path of a cleaned repository path.
func (c *Checkout) Abs(rel string) string {
	if rel == "" || rel == "." {
		return c.root
	}
	return c.root + string(filepath.Separator) + filepath.FromSlash(rel)
}

// Rel is the repository path of a host path under the root, judged
// lexically; ok is false for one outside it.
func (c *Checkout) Rel(abs string) (rel string, ok bool) {
	r, err := filepath.Rel(c.root, abs)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) {
		return "", false
	}
	return filepath.ToSlash(r), true
}

// Display names a host path for a message: repository-relative when it
// lies under the root, else as given.
func (c *Checkout) Display(abs string) string {
	if rel, ok := c.Rel(abs); ok {
		return rel
	}
	return abs
}

// pathErr wraps err for rel, keeping an *fs.PathError's Err.
func pathErr(op, rel string, err error) error {
	return &fs.PathError{Op: op, Path: rel, Err: Cause(err)}
}

// lookupErr is pathErr for a path looked up (Stat, Lstat): one through
// something that is not a directory names nothing, and says so as
// fs.ErrNotExist.
func lookupErr(op, rel string, err error) error {
	if errors.Is(err, ErrNotDir) {
		err = fs.ErrNotExist
	}
	return pathErr(op, rel, err)
}

// Cause is err without the *fs.PathError that wraps it: what went wrong,
// for a message that names the path itself.
func Cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
