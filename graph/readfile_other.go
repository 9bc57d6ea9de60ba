//go:build !unix

package graph

import (
	"io/fs"
	"os"
)

// readRegular is the portable form of the unix fast path.
func readRegular(path string, max int64) ([]byte, error) {
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return nil, err
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, ErrSymlink
	case !fi.Mode().IsRegular():
		return nil, ErrNotRegular
	case fi.Size() > max:
		return nil, &TooLargeError{Size: fi.Size(), Max: max}
	}
	return os.ReadFile(path)
}
