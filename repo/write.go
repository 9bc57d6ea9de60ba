package repo

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
)

// writable refuses op on rel in a checkout held in memory: every write
// method asks it first, so none reaches the descriptors only a checkout on
// disk has.
func (c *Checkout) writable(op, rel string) error {
	if c.mem != nil {
		return &fs.PathError{Op: op, Path: rel, Err: ErrReadOnly}
	}
	return nil
}

// MkdirAll creates the directory rel and any parents it lacks, inside the
// checkout.
func (c *Checkout) MkdirAll(rel string) error {
	p, err := Clean(rel)
	if err != nil {
		return err
	}
	if err := c.writable("mkdir", rel); err != nil {
		return err
	}
	if err := c.dir.MkdirAll(p, 0o755); err != nil {
		return pathErr("mkdir", rel, c.outside(err))
	}
	return nil
}

// Mkdir creates the directory rel inside the checkout; its parent must
// exist. Anything already at rel, a link included, is an error wrapping
// fs.ErrExist: of two callers creating the same directory, exactly one
// succeeds.
func (c *Checkout) Mkdir(rel string) error {
	p, err := Clean(rel)
	if err != nil {
		return err
	}
	if err := c.writable("mkdir", rel); err != nil {
		return err
	}
	if err := c.dir.Mkdir(p, 0o755); err != nil {
		return pathErr("mkdir", rel, c.outside(err))
	}
	return nil
}

// WriteFile replaces the file at rel with data, atomically: a temporary
// file beside it is written, synced and renamed over it, and the directory
// synced, so a crash leaves the old file or the new one and never a torn
// one. A link at rel is replaced, never written through; the directory is
// created when missing.
func (c *Checkout) WriteFile(rel string, data []byte, perm fs.FileMode) (err error) {
	p, err := Clean(rel)
	if err != nil {
		return err
	}
	if p == "." {
		return &fs.PathError{Op: "write", Path: rel, Err: ErrNotRegular}
	}
	if err := c.writable("write", rel); err != nil {
		return err
	}
	dir := path.Dir(p)
	if err := c.dir.MkdirAll(dir, 0o755); err != nil {
		return pathErr("write", rel, c.outside(err))
	}
	f, tmp, err := c.createTemp(dir, path.Base(p))
	if err != nil {
		return pathErr("write", rel, c.outside(err))
	}
	defer func() {
		if err != nil {
			f.Close()
			c.dir.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return pathErr("write", rel, err)
	}
	if err = f.Chmod(perm); err != nil {
		return pathErr("write", rel, err)
	}
	if err = f.Sync(); err != nil {
		return pathErr("sync", rel, err)
	}
	if err = f.Close(); err != nil {
		return pathErr("write", rel, err)
	}
	if err = c.dir.Rename(tmp, p); err != nil {
		return pathErr("replace", rel, c.outside(err))
	}
	if d, derr := c.dir.Open(dir); derr == nil {
		d.Sync() // makes the rename durable; best effort where unsupported
		d.Close()
	}
	return nil
}

// tempTarget reads the name of a temporary file WriteFile makes,
// ".<target>.<number>.tmp", and returns the target's name; ok is false for
// any other name. A plain scan rather than a regular expression keeps repo a
// leaf that pays nothing at start-up.
func tempTarget(name string) (target string, ok bool) {
	rest, ok := strings.CutSuffix(name, ".tmp")
	if !ok || !strings.HasPrefix(rest, ".") {
		return "", false
	}
	dot := strings.LastIndexByte(rest, '.')
	digits := rest[dot+1:]
	if dot < 2 || digits == "" || strings.Trim(digits, "0123456789") != "" {
		return "", false
	}
	return rest[1:dot], true
}

func (c *Checkout) createTemp(dir, base string) (*os.File, string, error) {
	for range 100 {
		tmp := path.Join(dir, "."+base+"."+strconv.FormatUint(uint64(rand.Uint32()), 10)+".tmp")
		f, err := c.dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|openNoFollow, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, tmp, err
	}
	return nil, "", fmt.Errorf("no free temporary name beside %s", base)
}

// CleanTemps removes the temporary files writers killed mid-write left in
// the directory rel, those stale says may go, and returns their names.
// stale is given the name of the file the temporary one was for and how
// long ago it was last written; only a caller that holds the lock every
// writer of that file takes may say yes to a fresh one.
func (c *Checkout) CleanTemps(rel string, stale func(target string, age time.Duration) bool) ([]string, error) {
	p, err := Clean(rel)
	if err != nil || c.mem != nil {
		return nil, err // nothing is ever written in memory, so nothing is left half-written
	}
	entries, err := c.ReadDir(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		target, ok := tempTarget(e.Name)
		if e.Kind != KindRegular || !ok {
			continue
		}
		name := path.Join(p, e.Name)
		fi, err := c.dir.Lstat(name)
		if err != nil || !stale(target, time.Since(fi.ModTime())) {
			continue
		}
		if err := c.dir.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, pathErr("remove", name, err)
		}
		removed = append(removed, e.Name)
	}
	return removed, nil
}

// Lock is an advisory file lock on a file in the checkout, shared with
// every process that locks the same file.
type Lock struct {
	c   *Checkout
	rel string
	f   *os.File // open while the lock is held
}

// Locker returns the lock on the file rel, creating its directory. The
// file is opened through the checkout's confinement and locked by that
// descriptor, so a committed link where the lock file or a directory
// above it should be cannot make the-loop create or lock a file
// elsewhere.
func (c *Checkout) Locker(rel string) (*Lock, error) {
	p, err := Clean(rel)
	if err != nil {
		return nil, err
	}
	if err := c.writable("lock", rel); err != nil {
		return nil, err
	}
	if err := c.dir.MkdirAll(path.Dir(p), 0o755); err != nil {
		return nil, pathErr("lock", rel, c.outside(err))
	}
	return &Lock{c: c, rel: p}, nil
}

// TryLock takes the lock if it is free, without waiting. A lock file that
// is a symbolic link is refused (ErrLink), never opened.
func (l *Lock) TryLock() (bool, error) {
	if l.f != nil {
		return true, nil
	}
	f, err := l.c.openLockFile(l.rel)
	if err != nil {
		if isLoop(err) {
			err = ErrLink
		}
		return false, pathErr("lock", l.rel, l.c.outside(err))
	}
	ok, err := lockFile(f)
	if err != nil || !ok {
		f.Close()
		if err != nil {
			return false, pathErr("lock", l.rel, err)
		}
		return false, nil
	}
	l.f = f
	return true, nil
}

// Unlock releases the lock.
func (l *Lock) Unlock() error {
	if l.f == nil {
		return nil
	}
	err := unlockFile(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

// openLockFile opens (creating) the lock file rel for locking, refusing a
// final link.
func (c *Checkout) openLockFile(rel string) (*os.File, error) {
	return c.openFinal(rel, os.O_CREATE|os.O_RDWR|openNonblock, 0o644)
}

// openFinal opens rel with flags, refusing a final link (ErrLink).
func (c *Checkout) openFinal(rel string, flags int, perm fs.FileMode) (*os.File, error) {
	if c.fast != nil {
		return c.fast.openFinal(rel, flags, uint64(perm.Perm()))
	}
	f, err := c.dir.OpenFile(rel, flags, perm)
	if err != nil {
		return nil, err
	}
	// os.Root follows a link that stays inside; this open never does.
	if fi, err := c.dir.Lstat(rel); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		f.Close()
		return nil, ErrLink
	}
	return f, nil
}

// WriteFileWithin is WriteFile for a file its reader reads up to limit
// bytes: data over limit is refused, a *TooLargeError in a *fs.PathError,
// and nothing is written, so that nothing writes a file its reader would
// then refuse.
func (c *Checkout) WriteFileWithin(rel string, data []byte, perm fs.FileMode, limit int64) error {
	if int64(len(data)) > limit {
		return &fs.PathError{Op: "write", Path: rel, Err: &TooLargeError{Size: int64(len(data)), Limit: limit}}
	}
	return c.WriteFile(rel, data, perm)
}

// AppendFile adds data at the end of the file at rel with one write call,
// then syncs it, creating the file with perm (and its directory) when
// missing: a record appended this way is whole or absent after a crash
// unless the crash tears the write itself, and durable once AppendFile
// returns. A link at rel is refused (ErrLink), never written through, and
// anything but a regular file is refused (ErrNotRegular). The descriptor
// is O_APPEND, but only a lock every appender takes serializes appends of
// different processes on every file system: the caller holds one. A write
// the disk takes only part of (ENOSPC, EFBIG, a short write) is cut back
// to where the file ended, so that the next record never runs on from
// half of this one.
func (c *Checkout) AppendFile(rel string, data []byte, perm fs.FileMode) error {
	return c.AppendFileWithin(rel, data, perm, 0)
}

// AppendFileWithin is AppendFile for a file its reader reads up to limit
// bytes (0: no limit): an append that would take the file past limit is
// refused, a *TooLargeError in a *fs.PathError, and nothing is written.
func (c *Checkout) AppendFileWithin(rel string, data []byte, perm fs.FileMode, limit int64) (err error) {
	p, err := Clean(rel)
	if err != nil {
		return err
	}
	if p == "." {
		return &fs.PathError{Op: "append", Path: rel, Err: ErrNotRegular}
	}
	if err := c.writable("append", rel); err != nil {
		return err
	}
	dir := path.Dir(p)
	if err := c.dir.MkdirAll(dir, 0o755); err != nil {
		return pathErr("append", rel, c.outside(err))
	}
	_, statErr := c.dir.Lstat(p)
	created := errors.Is(statErr, fs.ErrNotExist)
	f, err := c.openFinal(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE|openNonblock, perm)
	if err != nil {
		if isLoop(err) {
			err = ErrLink
		}
		return pathErr("append", rel, c.outside(err))
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = pathErr("append", rel, cerr)
		}
	}()
	fi, err := f.Stat()
	if err != nil {
		return pathErr("append", rel, err)
	}
	if !fi.Mode().IsRegular() {
		return &fs.PathError{Op: "append", Path: rel, Err: ErrNotRegular}
	}
	end := fi.Size()
	if limit > 0 && end+int64(len(data)) > limit {
		return &fs.PathError{Op: "append", Path: rel, Err: &TooLargeError{Size: end + int64(len(data)), Limit: limit}}
	}
	if n, err := f.Write(data); err != nil || n != len(data) {
		if err == nil {
			err = io.ErrShortWrite
		}
		if n > 0 {
			if terr := f.Truncate(end); terr != nil {
				err = fmt.Errorf("%w (%d of %d bytes written, and cutting them off failed: %w)", err, n, len(data), terr)
			}
		}
		return pathErr("append", rel, err)
	}
	if err := f.Sync(); err != nil {
		return pathErr("sync", rel, err)
	}
	if created {
		if d, derr := c.dir.Open(dir); derr == nil {
			d.Sync() // makes the file's creation durable; best effort where unsupported
			d.Close()
		}
	}
	return nil
}
