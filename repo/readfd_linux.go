//go:build linux

package repo

import (
	"io/fs"
	"path"
	"time"

	"golang.org/x/sys/unix"
)

// readFD reads and closes fd if it is a regular file of at most limit
// bytes: fstat, then reads up to the size fstat gave. A file appended to
// meanwhile is read as it was, which is what a snapshot of a tree means.
// Reading thousands of small files is what a rule over a source tree does,
// so this makes no call it does not need.
func readFD(fd int, limit int64, alloc func(int64) []byte) ([]byte, error) {
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, ErrNotRegular
	}
	if st.Size > limit {
		return nil, &TooLargeError{Size: st.Size, Limit: limit}
	}
	var buf []byte
	if alloc != nil {
		buf = alloc(st.Size)
	} else {
		buf = make([]byte, st.Size)
	}
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return buf[:n:n], nil
}

// fileStat is an fs.FileInfo from a stat of a descriptor.
type fileStat struct {
	name    string
	size    int64
	mode    fs.FileMode
	modTime time.Time
	sys     unix.Stat_t
}

func newFileStat(rel string, st *unix.Stat_t) *fileStat {
	fi := &fileStat{name: path.Base(rel), size: st.Size, sys: *st,
		modTime: time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec))}
	fi.mode = fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		fi.mode |= fs.ModeDir
	case unix.S_IFLNK:
		fi.mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		fi.mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		fi.mode |= fs.ModeSocket
	case unix.S_IFCHR:
		fi.mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		fi.mode |= fs.ModeDevice
	}
	if st.Mode&unix.S_ISUID != 0 {
		fi.mode |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISGID != 0 {
		fi.mode |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		fi.mode |= fs.ModeSticky
	}
	return fi
}

func (fi *fileStat) Name() string       { return fi.name }
func (fi *fileStat) Size() int64        { return fi.size }
func (fi *fileStat) Mode() fs.FileMode  { return fi.mode }
func (fi *fileStat) ModTime() time.Time { return fi.modTime }
func (fi *fileStat) IsDir() bool        { return fi.mode.IsDir() }
func (fi *fileStat) Sys() any           { return &fi.sys }
