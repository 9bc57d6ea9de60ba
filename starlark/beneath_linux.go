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
// seccomp filter refusing it) the probe says so once and callers check
// paths themselves.
type beneath struct {
	mu     sync.Mutex // serialises refresh
	probed bool
	off    bool                    // openat2 is unavailable here
	root   atomic.Pointer[rootDir] // nil when off or not yet opened
}

// rootDir is an O_PATH descriptor on the repository root and the identity
// of the directory it was opened on. An *os.File, so that the descriptor
// is closed when the last reader lets go of it.
type rootDir struct {
	f        *os.File
	fd       int
	dev, ino uint64
}

const beneathResolve = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// refresh makes sure the descriptor is on the directory now at root: a
// long-running process may see a checkout replaced, and reads must follow
// the tree glob lists. Called at the start of each hook call; one stat.
func (b *beneath) refresh(root string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.off {
		return
	}
	var st syscall.Stat_t
	if err := syscall.Stat(root, &st); err != nil {
		b.root.Store(nil)
		return
	}
	if cur := b.root.Load(); cur != nil && cur.dev == uint64(st.Dev) && cur.ino == st.Ino {
		return
	}
	fd, err := syscall.Open(root, unix.O_PATH|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		b.root.Store(nil)
		return
	}
	d := &rootDir{f: os.NewFile(uintptr(fd), root), fd: fd, dev: uint64(st.Dev), ino: st.Ino}
	if !b.probed {
		// Once per process and root: does the kernel let us at all? Later
		// errors are about the file asked for.
		b.probed = true
		how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: beneathResolve}
		pfd, err := openat2(fd, ".", &how)
		if err != nil {
			b.off = true
			d.f.Close()
			return
		}
		syscall.Close(pfd)
	}
	b.root.Store(d)
}

// open opens the cleaned repository path rel for reading. ok is false when
// openat2 is unavailable; a path through a symbolic link is errSymlink, so
// that the caller can resolve it the slow way.
func (b *beneath) open(root, rel string) (fd int, err error, ok bool) {
	d := b.root.Load()
	if d == nil {
		b.mu.Lock()
		probed := b.probed
		b.mu.Unlock()
		if probed {
			return -1, nil, false
		}
		b.refresh(root)
		if d = b.root.Load(); d == nil {
			return -1, nil, false
		}
	}
	how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY, Resolve: beneathResolve}
	fd, err = openat2(d.fd, rel, &how)
	runtime.KeepAlive(d.f)
	switch {
	case err == nil:
		return fd, nil, true
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV):
		return -1, errSymlink, true
	}
	return -1, &pathError{op: "open", path: rel, err: err}, true
}

// openat2 retries only an interrupted call: EAGAIN from a file lease
// would not clear by retrying.
func openat2(dirfd int, path string, how *unix.OpenHow) (int, error) {
	for {
		fd, err := unix.Openat2(dirfd, path, how)
		if err != unix.EINTR {
			return fd, err
		}
	}
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
func (c *confined) checksPaths() bool {
	if c.beneath.root.Load() == nil {
		c.beneath.refresh(c.root)
	}
	return c.beneath.root.Load() != nil
}

// refresh is called at the start of each hook call; see beneath.refresh.
func (c *confined) refresh() { c.beneath.refresh(c.root) }
