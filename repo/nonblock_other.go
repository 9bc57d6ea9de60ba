//go:build !unix

package repo

import "errors"

const openNonblock = 0

// ErrNotDir: see nonblock_unix.go.
var ErrNotDir = errors.New("not a directory")

const openNoFollow = 0

func isLoop(error) bool { return false }
