//go:build !unix

package repo

import "io/fs"

// FileID is what makes a file itself; ok is false where the platform does
// not say.
func FileID(fs.FileInfo) (dev, ino uint64, ok bool) { return 0, 0, false }
