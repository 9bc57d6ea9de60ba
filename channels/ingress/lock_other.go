//go:build !unix

package ingress

import "os"

func openNoFollow(path string) (*os.File, error) { return os.Open(path) }

// lockFile is a no-op where flock is missing: bbolt's own lock, taken
// next, still keeps a second process out.
func lockFile(*os.File) error { return nil }
