//go:build linux

package repo

import (
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// dirCursor is a Reader's descriptor of the directory it reads in.
type dirCursor struct {
	b *beneath
	// dir is the directory of the last read, as its path gave it ("" for
	// the root); seen is false before the first.
	dir  string
	seen bool
	// fd is dir's descriptor: -1 while dir has been read in only once,
	// and noDir once opening it failed (every read in it then goes the
	// whole way, which says why). It is held apart from the cursor, for
	// the cleanup that closes it if the Reader is dropped without Close.
	fd *int
}

const noDir = -2

func newDirCursor(b *beneath) *dirCursor {
	d := &dirCursor{b: b, fd: new(int)}
	*d.fd = -1
	runtime.AddCleanup(d, func(fd *int) {
		if *fd >= 0 {
			unix.Close(*fd)
		}
	}, d.fd)
	return d
}

// read reads the file at rel, a path isCleanFile accepts, from its
// directory's descriptor; ok is false when it did not, and the whole way
// must: the first read in a directory, and any open refused.
func (d *dirCursor) read(rel string, limit int64, alloc func(int64) []byte) (data []byte, err error, ok bool) {
	dir, name := "", rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		dir, name = rel[:i], rel[i+1:]
	}
	if !d.seen || dir != d.dir {
		// One file of a directory is cheaper read the whole way than by
		// opening the directory first.
		d.close()
		d.dir, d.seen = dir, true
		return nil, nil, false
	}
	if *d.fd == -1 {
		d.open()
	}
	if *d.fd == noDir {
		return nil, nil, false
	}
	how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: resolveBeneath}
	fd, err := retryingOpen(func() (int, error) { return openat2(*d.fd, name, &how) })
	if err != nil {
		// A link (ELOOP) is followed the whole way, which refuses it if it
		// leads out; any other refusal is the whole way's to word.
		return nil, nil, false
	}
	data, err = readFD(fd, limit, alloc)
	return data, err, true
}

// open opens d.dir beneath the root, as any path is.
func (d *dirCursor) open() {
	dir := d.dir
	if dir == "" {
		dir = "."
	}
	fd, err := d.b.open(dir, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		fd = noDir
	}
	*d.fd = fd
}

// close releases the descriptor and forgets the directory.
func (d *dirCursor) close() {
	if *d.fd >= 0 {
		unix.Close(*d.fd)
	}
	*d.fd, d.dir, d.seen = -1, "", false
}
