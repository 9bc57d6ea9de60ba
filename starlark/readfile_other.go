//go:build !unix

package starlark

import (
	"io/fs"
	"os"
)

// readRegular is the portable form of the unix fast path.
func readRegular(path string, max int64, _ *arena) ([]byte, error) {
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return nil, err
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, errSymlink
	case !fi.Mode().IsRegular():
		return nil, errNotRegular
	case fi.Size() > max:
		return nil, &tooLargeError{Size: fi.Size(), Max: max}
	}
	return os.ReadFile(path)
}
