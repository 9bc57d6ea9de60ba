//go:build unix

package starlark

import "syscall"

// errNotDir is a path through something that is not a directory: for a
// hook, a path that does not exist.
var errNotDir error = syscall.ENOTDIR
