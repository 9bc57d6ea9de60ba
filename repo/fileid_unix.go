//go:build unix

package repo

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// FileID is what makes a file itself, whatever path reached it: its
// device and inode. ok is false when fi does not say.
func FileID(fi fs.FileInfo) (dev, ino uint64, ok bool) {
	switch st := fi.Sys().(type) {
	case *unix.Stat_t:
		return uint64(st.Dev), uint64(st.Ino), true
	case *syscall.Stat_t:
		return uint64(st.Dev), uint64(st.Ino), true
	}
	return 0, 0, false
}
