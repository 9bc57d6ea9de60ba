package ingress

import (
	"cmp"
	"context"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// connTable is a listener that holds at most max connections open. It
// never makes a newcomer wait in the kernel's backlog, where GitHub's
// connection would sit behind thousands of callers sending their headers
// a line a second: when it is full, it closes the oldest connection of
// the remote address that holds the most, counting the newcomer, among
// those that do not hold a body slot (still sending their request's
// headers, idle between requests, or waiting for a slot). Only when every
// connection holds one is the newcomer closed instead; there are far fewer
// slots than connections. The server's ConnState hook and the body reader
// (through the request's context) tell it which connections hold one.
type connTable struct {
	net.Listener
	max    int
	onShed func(addr string)

	mu     sync.Mutex
	conns  map[*tableConn]struct{}
	byAddr map[string]int
	peek   []byte // scratch for requestWaiting
}

func newConnTable(ln net.Listener, max int, onShed func(addr string)) *connTable {
	if onShed == nil {
		onShed = func(string) {}
	}
	return &connTable{Listener: ln, max: max, onShed: onShed, conns: map[*tableConn]struct{}{}, byAddr: map[string]int{}}
}

// tableConn is a connection the table holds.
type tableConn struct {
	net.Conn
	t    *connTable
	addr string
	// Guarded by t.mu.
	since     time.Time // when it last changed state
	protected bool      // holds a body slot, until it is answered
	removed   bool
	shed      chan struct{} // closed when the table closes it
}

// connKey is the request context's key of the *tableConn it came on.
type connKey struct{}

// connOf is the table's connection r came on, or nil.
func connOf(r *http.Request) *tableConn {
	c, _ := r.Context().Value(connKey{}).(*tableConn)
	return c
}

// connContext is the server's ConnContext hook.
func connContext(ctx context.Context, nc net.Conn) context.Context {
	if c, ok := nc.(*tableConn); ok {
		return context.WithValue(ctx, connKey{}, c)
	}
	return ctx
}

// protect marks c as holding a body slot, or no longer.
func (c *tableConn) protect(on bool) {
	if c == nil {
		return
	}
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	c.protected = on
}

// shedding is closed when the table closes c to make room; nil for none.
func (c *tableConn) shedding() <-chan struct{} {
	if c == nil {
		return nil
	}
	return c.shed
}

func (c *tableConn) Close() error {
	c.t.remove(c)
	return c.Conn.Close()
}

func (t *connTable) Accept() (net.Conn, error) {
	for {
		nc, err := t.Listener.Accept()
		if err != nil {
			return nil, err
		}
		c := &tableConn{Conn: nc, t: t, addr: hostOf(nc.RemoteAddr()), since: time.Now(), shed: make(chan struct{})}
		if victim, ok := t.add(c); ok {
			if victim != nil {
				t.onShed(victim.addr)
				close(victim.shed)
				victim.Conn.Close()
			}
			return c, nil
		}
		t.onShed(c.addr)
		nc.Close()
	}
}

// add takes c in, choosing a victim to close when the table is full; false
// when there is none, and c must be closed instead.
func (t *connTable) add(c *tableConn) (victim *tableConn, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.conns) >= t.max {
		t.byAddr[c.addr]++ // the newcomer counts toward its address
		victim = t.victimLocked()
		t.byAddr[c.addr]--
		if victim == nil {
			return nil, false
		}
		t.removeLocked(victim)
	}
	t.conns[c] = struct{}{}
	t.byAddr[c.addr]++
	return victim, true
}

// victimLocked chooses the connection to close: of those not protected,
// the oldest of the address holding the most, passing over one whose
// whole request head is waiting in its socket (sent at once, the server
// not yet come to it: under load a fresh connection from a quick caller
// can be the oldest of its address before its goroutine runs).
func (t *connTable) victimLocked() *tableConn {
	cands := make([]*tableConn, 0, len(t.conns))
	for v := range t.conns {
		if !v.protected {
			cands = append(cands, v)
		}
	}
	slices.SortFunc(cands, func(a, b *tableConn) int {
		if n := cmp.Compare(t.byAddr[b.addr], t.byAddr[a.addr]); n != 0 {
			return n
		}
		return a.since.Compare(b.since)
	})
	if t.peek == nil {
		t.peek = make([]byte, peekSize)
	}
	for i, v := range cands {
		if i >= maxPeeks || !requestWaiting(v.Conn, t.peek) {
			return v
		}
	}
	if len(cands) > 0 {
		return cands[0]
	}
	return nil
}

// peekSize covers a request head of the server's MaxHeaderBytes and its
// request line; maxPeeks bounds the sockets looked into for one newcomer.
const (
	peekSize = 66 << 10
	maxPeeks = 16
)

func (t *connTable) remove(c *tableConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.removeLocked(c)
}

func (t *connTable) removeLocked(c *tableConn) {
	if c.removed {
		return
	}
	c.removed = true
	delete(t.conns, c)
	if t.byAddr[c.addr]--; t.byAddr[c.addr] <= 0 {
		delete(t.byAddr, c.addr)
	}
}

// connState is the server's ConnState hook: a connection answered, or
// waiting for its next request, holds no slot.
func (t *connTable) connState(nc net.Conn, s http.ConnState) {
	c, ok := nc.(*tableConn)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	// From its head read to its answer a request is the server's work,
	// except while it waits for a body slot (see BodyReader.Read).
	c.protected = s == http.StateActive
	c.since = time.Now()
}

// open is the number of connections held.
func (t *connTable) open() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.conns)
}

// hostOf is a remote address without its port, what one caller holds
// being counted per host. An IPv6 address counts as its /64, the least a
// single machine is given, so that one caller cannot be many by choosing
// addresses in its own network.
func hostOf(a net.Addr) string {
	if a == nil {
		return ""
	}
	return hostOfString(a.String())
}

func hostOfString(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
