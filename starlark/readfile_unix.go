//go:build unix

package starlark

import (
	"errors"
	"syscall"
)

// readRegular reads path whole if it is a regular file of at most max
// bytes, without following a symbolic link in its last element: open,
// fstat, read, close, and nothing else. Reading thousands of small files is
// what a repository hook over a source tree does, and os.ReadFile's extra
// calls per file (registering the descriptor with the poller, probing
// past the end) are most of its cost.
func readRegular(path string, max int64, a *arena) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	switch {
	case errors.Is(err, syscall.ELOOP):
		return nil, errSymlink
	case err != nil:
		return nil, &pathError{op: "open", path: path, err: err}
	}
	return readOpen(fd, path, max, a)
}

// readOpen reads and closes fd, opened on path (named in errors), if it is
// a regular file of at most max bytes.
func readOpen(fd int, path string, max int64, a *arena) ([]byte, error) {
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, &pathError{op: "stat", path: path, err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, errNotRegular
	}
	if st.Size > max {
		return nil, &tooLargeError{Size: st.Size, Max: max}
	}
	// The size fstat gave; a file being appended to meanwhile is read as it
	// was, which is what a snapshot of the tree means anyway.
	buf := a.alloc(st.Size)
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &pathError{op: "read", path: path, err: err}
		}
		if m == 0 {
			break
		}
		n += m
	}
	if int64(n) > max {
		return nil, &tooLargeError{Size: int64(n), Max: max}
	}
	return buf[:n:n], nil
}
