//go:build unix

package repo

import (
	"errors"
	"syscall"
)

// openNonblock keeps an open of a FIFO from waiting for a writer, and of
// a terminal from becoming the controlling one.
const openNonblock = syscall.O_NONBLOCK | syscall.O_NOCTTY

// ErrNotDir is a path through something that is not a directory, as
// ReadFile and ListDir report it; Stat and Lstat report it as
// fs.ErrNotExist, since such a path names nothing.
var ErrNotDir error = syscall.ENOTDIR

// openNoFollow refuses a final symbolic link.
const openNoFollow = syscall.O_NOFOLLOW

// isLoop reports an open refused because its last element is a link.
func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }
