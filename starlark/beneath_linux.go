//go:build linux

package starlark

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// beneath opens files by repository path relative to a descriptor on the
// repository root, with openat2's RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS:
// the kernel refuses, in the same call that opens the file, any path that
// would leave the root or pass through a symbolic link. A read this way
// needs no checking beforehand and cannot be raced by a directory swapped
// for a link meanwhile. Where openat2 is missing (Linux before 5.6, or a
// seccomp filter refusing it) it reports itself unavailable and callers
// check paths themselves.
type beneath struct {
	once sync.Once
	root *os.File // an O_PATH descriptor; nil when it could not be opened
	fd   int
	off  atomic.Bool
}

// available reports whether reads through b are in effect, opening the
// root on first use.
func (b *beneath) available(root string) bool {
	b.once.Do(func() {
		fd, err := syscall.Open(root, unix.O_PATH|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != nil {
			b.off.Store(true)
			return
		}
		// An *os.File, so that the descriptor is closed with the
		// repository's host when that is collected.
		b.root, b.fd = os.NewFile(uintptr(fd), root), fd
	})
	return !b.off.Load()
}

// open opens the cleaned repository path rel for reading. ok is false
// when openat2 is unavailable; a path through a symbolic link is
// errSymlink, so that the caller can resolve it the slow way.
func (b *beneath) open(root, rel string) (fd int, err error, ok bool) {
	if !b.available(root) {
		return -1, nil, false
	}
	how := unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	for {
		fd, err = unix.Openat2(b.fd, rel, &how)
		if err != unix.EINTR && err != unix.EAGAIN {
			break
		}
	}
	runtime.KeepAlive(b.root)
	switch {
	case err == nil:
		return fd, nil, true
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM), errors.Is(err, unix.EINVAL):
		b.off.Store(true)
		return -1, nil, false
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV):
		return -1, errSymlink, true
	}
	return -1, &pathError{op: "open", path: rel, err: err}, true
}

// readFile reads the regular file at the cleaned repository path rel, of at
// most max bytes, into a's buffers. checked reports whether the open itself
// kept to the repository without following a link; when it is false the
// file was opened by host path, refusing only a final symbolic link, and
// the caller must check the directories above it.
func (c *confined) readFile(rel string, max int64, a *arena) (data []byte, err error, checked bool) {
	fd, err, ok := c.beneath.open(c.root, rel)
	if !ok {
		data, err := readRegular(c.abs(rel), max, a)
		return data, err, false
	}
	if err != nil {
		return nil, err, true
	}
	data, err = readOpen(fd, rel, max, a)
	return data, err, true
}

// checksPaths reports whether readFile keeps to the repository by itself.
func (c *confined) checksPaths() bool { return c.beneath.available(c.root) }
