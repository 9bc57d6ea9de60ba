//go:build !unix

package ingress

import "net"

func requestWaiting(net.Conn, []byte) bool { return false }
