//go:build !unix

package repo

import (
	"os"
	"sync"

	"github.com/gofrs/flock"
)

// Where there is no flock(2), a lock is taken by its path.
var held sync.Map // *os.File -> *flock.Flock

func lockFile(f *os.File) (bool, error) {
	l := flock.New(f.Name())
	ok, err := l.TryLock()
	if ok {
		held.Store(f, l)
	}
	return ok, err
}

func unlockFile(f *os.File) error {
	if l, ok := held.LoadAndDelete(f); ok {
		return l.(*flock.Flock).Unlock()
	}
	return nil
}
