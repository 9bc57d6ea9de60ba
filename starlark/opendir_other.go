//go:build !unix

package starlark

import "os"

// openDir opens the directory at path. Without O_NOFOLLOW the walk relies
// on each entry's type, as filepath.WalkDir does.
func openDir(path string) (*os.File, error) { return os.Open(path) }
