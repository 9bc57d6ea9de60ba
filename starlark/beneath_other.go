//go:build !linux

package starlark

// beneath is Linux's openat2 confinement; elsewhere reads go by host path
// and callers check the directories above them.
type beneath struct{}

// readFile reads the regular file at the cleaned repository path rel, of at
// most max bytes, by host path, refusing a final symbolic link; checked is
// always false: the caller must check the directories above it.
func (c *confined) readFile(rel string, max int64, a *arena) (data []byte, err error, checked bool) {
	data, err = readRegular(c.abs(rel), max, a)
	return data, err, false
}

// checksPaths reports whether readFile keeps to the repository by itself.
func (c *confined) checksPaths() bool { return false }

// refresh is called at the start of each hook call; nothing to do here.
func (c *confined) refresh() {}
