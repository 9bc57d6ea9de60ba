//go:build linux

package repo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// errNotListed is listFolder's answer on a filesystem whose listing may
// not stand in for lookups.
var errNotListed = errors.New("not listed: the checkout's filesystem decides lookups itself")

// direntBufs are getdents buffers, one per listing goroutine at a time.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// list reads the directory's raw records.
func (b *beneath) list(rel string, visit func(string, Kind)) (int, error) {
	fd, err := b.open(rel, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	return listFD(fd, -1, visit)
}

// listFolder lists rel as list does, but stops once it has seen more than
// most entries (when most >= 0). It opens rel through its "." entry:
// listing a directory needs read permission on it, looking a name up in it
// search permission, and a listing stands in for lookups only where both
// would be granted. Resolving "." inside rel is a lookup in rel, so the
// kernel asks for both in the one open, where asking faccessat would be a
// second system call for every folder. That holds on the filesystems
// kernelChecked names, and the open may not leave the root's (another
// filesystem mounted beneath it may be of another type), so a folder
// elsewhere is not listed: its names are looked up one by one.
func (b *beneath) listFolder(rel string, most int, visit func(string, Kind)) (n int, err error) {
	if !b.lists {
		return 0, errNotListed
	}
	dot := rel + "/." // not path.Join, which would clean the "." away
	if rel == "." {
		dot = rel
	}
	how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: resolveBeneath | unix.RESOLVE_NO_XDEV}
	fd, err := b.openat2(dot, &how)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	return listFD(fd, most, visit)
}

// listFD reads the raw records of the directory open at fd, stopping
// once it has seen more than most entries when most >= 0.
func listFD(fd, most int, visit func(string, Kind)) (int, error) {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	count := 0
	for {
		n, err := unix.Getdents(fd, buf)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return count, err
		case n <= 0:
			return count, nil
		}
		// Each record: inode (8 bytes), offset (8), length (2), type (1),
		// then the name, NUL-terminated and padded.
		for off := 0; off+19 <= n; {
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen < 19 || off+reclen > n {
				return count, unix.EIO
			}
			typ := buf[off+18]
			name := buf[off+19 : off+reclen]
			off += reclen
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if len(name) == 0 || string(name) == "." || string(name) == ".." {
				continue
			}
			count++
			if most >= 0 && count > most {
				return count, nil
			}
			s := unsafe.String(&name[0], len(name))
			visit(s, direntKind(fd, s, typ))
		}
	}
}

func direntKind(dirfd int, name string, typ byte) Kind {
	switch typ {
	case unix.DT_DIR:
		return KindDir
	case unix.DT_REG:
		return KindRegular
	case unix.DT_UNKNOWN:
		// Some file systems do not say; ask, without following a link.
		var st unix.Stat_t
		if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			return KindOther
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			return KindDir
		case unix.S_IFREG:
			return KindRegular
		}
	}
	return KindOther
}
