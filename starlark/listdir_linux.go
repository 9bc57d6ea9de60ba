//go:build linux

package starlark

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"unsafe"
)

// direntBufs are getdents buffers, one per walking goroutine at a time.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// listDir calls visit with the name and kind of each entry of the
// directory at path, except . and .., and returns how many there were. It
// refuses to follow a symbolic link put where the directory was, so a walk
// never leaves the tree it started in.
//
// A glob over a source tree lists thousands of entries and keeps few of
// them, so this reads the raw records and allocates nothing per entry:
// the name visit sees lives in a reused buffer and is valid only during
// the call (a caller that keeps it copies it).
func listDir(path string, visit func(name string, kind entryKind)) (int, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	count := 0
	for {
		n, err := syscall.Getdents(fd, buf)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return count, &os.PathError{Op: "getdents", Path: path, Err: err}
		case n <= 0:
			return count, nil
		}
		// Each record: inode (8 bytes), offset (8), length (2), type (1),
		// then the name, NUL-terminated and padded.
		for off := 0; off+19 <= n; {
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen < 19 || off+reclen > n {
				return count, &os.PathError{Op: "getdents", Path: path, Err: syscall.EIO}
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
			s := unsafe.String(&name[0], len(name))
			visit(s, direntKind(path, s, typ))
		}
	}
}

func direntKind(dir, name string, typ byte) entryKind {
	switch typ {
	case syscall.DT_DIR:
		return kindDir
	case syscall.DT_REG:
		return kindRegular
	case syscall.DT_UNKNOWN:
		// Some file systems do not say; ask, without following a link.
		fi, err := os.Lstat(filepath.Join(dir, name))
		switch {
		case err != nil:
		case fi.IsDir():
			return kindDir
		case fi.Mode().IsRegular():
			return kindRegular
		}
	}
	return kindOther
}
