package starlark

// entryKind is what a glob needs to know of a directory entry.
type entryKind uint8

const (
	kindOther   entryKind = iota // a symbolic link, a device, a pipe...
	kindDir                      // a directory (not a link to one)
	kindRegular                  // a regular file
)
