//go:build unix

package eventlog

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockLog takes an exclusive flock on the log's descriptor, waiting for
// another writer's record: a writer must know where its record starts to
// cut a torn one back, and another process appending in between would
// move that. Closing the descriptor releases it.
func lockLog(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			return err
		}
	}
}
