//go:build unix

package ingress

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// openNoFollow opens path for reading, refusing a link, and without
// waiting on a FIFO.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// lockFile takes the lock bbolt holds on an open queue file, waiting up to
// a second as bbolt does; ErrLocked when another process keeps it. It is
// released when f is closed.
func lockFile(f *os.File) error {
	deadline := time.Now().Add(time.Second)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return err
		}
		if time.Now().After(deadline) {
			return ErrLocked
		}
		time.Sleep(50 * time.Millisecond)
	}
}
