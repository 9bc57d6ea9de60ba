//go:build unix

package ingress

import (
	"bytes"
	"net"
	"syscall"
)

// requestWaiting reports whether c's socket holds, unread, the whole head
// of a request (its headers up to the blank line): a caller that sent it
// at once, whose request the server is about to read. buf is scratch
// space; nothing is consumed.
func requestWaiting(c net.Conn, buf []byte) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	// Control, not Read: the server's goroutine holds the read lock
	// while it waits on the socket, and this must not wait for it.
	n := 0
	raw.Control(func(fd uintptr) {
		n, _, _ = syscall.Recvfrom(int(fd), buf, syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	})
	return n > 0 && bytes.Contains(buf[:n], []byte("\r\n\r\n"))
}
