//go:build linux

package repo

import (
	"io/fs"
	"os"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// beneath opens paths relative to a descriptor on the checkout's root with
// openat2: RESOLVE_BENEATH makes the kernel refuse, in the same call that
// opens the file, any path that would leave the root (a "..", an absolute
// link, a relative link climbing out) while following links that stay
// inside; RESOLVE_NO_MAGICLINKS refuses /proc's. Nothing is checked
// beforehand, so nothing can be swapped in between a check and the open.
type beneath struct {
	f  *os.File // owns fd; closed when the last Checkout sharing it goes
	fd int
	// lists says whether a folder's listing may stand in for looking its
	// names up (listFolder): the root is on a filesystem whose lookups
	// the kernel itself permits or refuses.
	lists bool
}

const resolveBeneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS

// haveOpenat2 probes once per process whether the kernel, and any seccomp
// filter in front of it, lets us call openat2 at all.
var haveOpenat2 = sync.OnceValue(func() bool {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: resolveBeneath}
	fd, err := unix.Openat2(unix.AT_FDCWD, ".", &how)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
})

// openBeneath returns the fast path for root, or nil where openat2 is
// unavailable and the portable path must serve.
func openBeneath(root string) *beneath {
	if !haveOpenat2() {
		return nil
	}
	fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	var st unix.Statfs_t
	lists := unix.Fstatfs(fd, &st) == nil && kernelChecked(st.Type)
	return &beneath{f: os.NewFile(uintptr(fd), root), fd: fd, lists: lists}
}

// kernelChecked reports whether a filesystem of type magic leaves a
// lookup's permission to the kernel's own check of the directory's mode,
// so that the open that lists a folder (listFolder) is refused exactly
// where a lookup in it would be. A FUSE server, for one, may decide each
// lookup itself, and the kernel then lets "." through unasked; a network
// filesystem's server may refuse what the mode allows.
func kernelChecked(magic int64) bool {
	switch uint32(magic) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.OVERLAYFS_SUPER_MAGIC, unix.F2FS_SUPER_MAGIC:
		return true
	}
	return false
}

func (b *beneath) close() {
	if b != nil {
		b.f.Close()
	}
}

// raceRetries bounds how often an open beneath the root is tried again
// when the kernel could not tell whether a ".." escaped (EAGAIN).
const raceRetries = 8

// open opens the cleaned repository path rel.
func (b *beneath) open(rel string, flags int) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: resolveBeneath}
	fd, err := b.openat2(rel, &how)
	if err == unix.EXDEV {
		return -1, ErrOutside
	}
	return fd, err
}

// openat2 opens rel beneath the root, trying again where the kernel asks
// to: an interrupted call, and, a few times, EAGAIN, which under
// RESOLVE_BENEATH means a rename or mount anywhere on the machine raced a
// ".." being resolved (a link inside the checkout pointing up, say). A
// file lease's EAGAIN does not clear, so after the retries it stands.
func (b *beneath) openat2(rel string, how *unix.OpenHow) (int, error) {
	return retryingOpen(func() (int, error) {
		fd, err := openat2(b.fd, rel, how)
		runtime.KeepAlive(b.f)
		return fd, err
	})
}

// retryingOpen calls open until it neither is interrupted nor, more than
// raceRetries times, answers EAGAIN.
func retryingOpen(open func() (int, error)) (int, error) {
	races := 0
	for {
		fd, err := open()
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN && races < raceRetries:
			races++
			continue
		}
		return fd, err
	}
}

// openat2 is unix.Openat2 without its allocation: the path goes to the
// kernel from a buffer on the stack, not a copy made on the heap, when it
// is short, as a repository path almost always is. A check opens every
// file of a tree this way.
func openat2(dirfd int, rel string, how *unix.OpenHow) (int, error) {
	var buf [256]byte
	if len(rel) >= len(buf) {
		return unix.Openat2(dirfd, rel, how)
	}
	if strings.IndexByte(rel, 0) >= 0 {
		return -1, unix.EINVAL // as unix.BytePtrFromString says
	}
	copy(buf[:], rel) // and a NUL after it: buf is zeroed
	r, _, errno := unix.Syscall6(unix.SYS_OPENAT2, uintptr(dirfd), uintptr(unsafe.Pointer(&buf[0])),
		uintptr(unsafe.Pointer(how)), unsafe.Sizeof(*how), 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}

// openLock opens (creating) the lock file rel without following a final
// link.
func (b *beneath) openLock(rel string) (*os.File, error) {
	return b.openFinal(rel, unix.O_CREAT|unix.O_RDWR|unix.O_NONBLOCK, 0o644)
}

// openFinal opens rel with flags, refusing a final link (ErrLink): the file
// itself, never what a link names.
func (b *beneath) openFinal(rel string, flags int, mode uint64) (*os.File, error) {
	how := unix.OpenHow{Flags: uint64(flags | unix.O_NOFOLLOW | unix.O_CLOEXEC), Mode: mode, Resolve: resolveBeneath}
	fd, err := b.openat2(rel, &how)
	switch {
	case err == nil:
		return os.NewFile(uintptr(fd), rel), nil
	case err == unix.EXDEV:
		return nil, ErrOutside
	case err == unix.ELOOP:
		return nil, ErrLink
	}
	return nil, err
}

// read reads the regular file at rel.
func (b *beneath) read(rel string, limit int64, alloc func(int64) []byte) ([]byte, error) {
	fd, err := b.open(rel, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY)
	if err != nil {
		return nil, err
	}
	return readFD(fd, limit, alloc)
}

// stat describes rel; follow decides whether a final link is followed
// (inside the root only) or described itself.
func (b *beneath) stat(rel string, follow bool) (fs.FileInfo, error) {
	flags := unix.O_PATH
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := b.open(rel, flags)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	return newFileStat(rel, &st), nil
}
