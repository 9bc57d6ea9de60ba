package starlark

import (
	"errors"
	"fmt"
)

// Errors readRegular returns.
var (
	// errSymlink: the path's last element is a symbolic link.
	errSymlink = errors.New("is a symbolic link")
	// errNotRegular: the path is a directory, a device, a pipe...
	errNotRegular = errors.New("is not a regular file")
)

// tooLargeError is a file over readRegular's bound.
type tooLargeError struct{ Size, Max int64 }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("is %d bytes; a read is limited to %d", e.Size, e.Max)
}

type pathError struct {
	op, path string
	err      error
}

func (e *pathError) Error() string { return e.op + " " + e.path + ": " + e.err.Error() }
func (e *pathError) Unwrap() error { return e.err }
