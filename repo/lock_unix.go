//go:build unix

package repo

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes an exclusive flock on f without waiting: the same lock
// gofrs/flock takes by path, taken here on the descriptor the checkout
// opened, so that no path is resolved twice.
func lockFile(f *os.File) (bool, error) {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch err {
		case nil:
			return true, nil
		case unix.EINTR:
			continue
		case unix.EWOULDBLOCK:
			return false, nil
		}
		return false, err
	}
}

func unlockFile(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_UN) }
