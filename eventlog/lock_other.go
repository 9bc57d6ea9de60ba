//go:build !unix

package eventlog

import "os"

// lockLog takes no lock where flock does not exist: a record is still one
// write, and a torn one is still cut back, though a writer appending
// between the two could then lose its record.
func lockLog(*os.File) error { return nil }
