package ingress

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// connTable is a listener that holds at most max connections open. It
// never makes a newcomer wait in the kernel's backlog, where GitHub's
// connection would sit behind thousands of callers sending their headers
// a line a second: when it is full, it closes a connection that is not
// the server's work (one still sending its request's head, idle between
// requests, or waiting for a body slot), the oldest of the remote address
// that holds the most, counting the newcomer. Only when every connection
// is the server's work is the newcomer closed instead; a request is that
// only from its head's arrival to its answer, and the body slots, far
// fewer than the connections, bound how long. The server's ConnState hook
// and the body reader (through the request's context) say which
// connections are.
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
	protected bool      // the server's work: its head read, not waiting for a slot
	waiting   bool      // in a handler, waiting for a body slot
	removed   bool
	shed      chan struct{} // closed when the table closes it

	// headRead: the server has read a whole request head off it and not
	// yet said so (StateActive). Set by Read, on the server's goroutine,
	// which also resets it; the table reads it.
	headRead atomic.Bool
	tail     [3]byte // the last bytes Read saw, for a terminator split across reads
	tailLen  int
}

// Read notes when a whole request head has been read while the connection
// is between requests: from then until the server marks it active it is
// a request being served, not a caller still sending.
func (c *tableConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && !c.headRead.Load() {
		var probe [headProbe]byte
		k := copy(probe[:], c.tail[:c.tailLen])
		k += copy(probe[k:], b[:min(n, headProbe-k)])
		if bytes.Contains(probe[:k], headEnd) || bytes.Contains(b[:n], headEnd) {
			c.headRead.Store(true)
		}
		c.tailLen = copy(c.tail[:], b[max(0, n-3):n])
	}
	return n, err
}

var headEnd = []byte("\r\n\r\n")

const headProbe = 16

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

// protect marks c as the server's work, or as waiting for a body slot.
func (c *tableConn) protect(on bool) {
	if c == nil {
		return
	}
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	c.protected, c.waiting = on, !on
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

// victimLocked chooses the connection to close. First a connection still
// sending its request's head or idle, then one waiting for a body slot
// (which gives up within SlotWait anyway); of those, the oldest of the
// address holding the most. A connection whose whole request head has
// arrived, in the server's buffer or waiting in its socket, is passed
// over: under load a quick caller's fresh connection can be the oldest of
// its address before its goroutine runs.
func (t *connTable) victimLocked() *tableConn {
	if t.peek == nil {
		t.peek = make([]byte, peekSize)
	}
	// One pass per try, not a sort: this runs for every connection
	// accepted while the table is full, which is when accepting fast
	// matters most.
	var passed map[*tableConn]bool
	for try := 0; ; try++ {
		var best *tableConn
		for v := range t.conns {
			// headRead means something only between requests: once
			// active, what Read sees is a body.
			if v.protected || (!v.waiting && v.headRead.Load()) || passed[v] {
				continue
			}
			if best == nil || t.sheddableBefore(v, best) {
				best = v
			}
		}
		if best == nil || best.waiting || try >= maxPeeks || !requestWaiting(best.Conn, t.peek) {
			return best
		}
		if passed == nil {
			passed = map[*tableConn]bool{}
		}
		passed[best] = true
	}
}

// sheddableBefore orders the connections a full table may close: those
// still sending their head or idle before those waiting for room, then
// the address holding the most, then the oldest.
func (t *connTable) sheddableBefore(a, b *tableConn) bool {
	if a.waiting != b.waiting {
		return !a.waiting
	}
	if na, nb := t.byAddr[a.addr], t.byAddr[b.addr]; na != nb {
		return na > nb
	}
	return a.since.Before(b.since)
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
	c.protected, c.waiting = s == http.StateActive, false
	c.since = time.Now()
	if s == http.StateIdle {
		c.headRead.Store(false)
		c.tailLen = 0
	}
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
