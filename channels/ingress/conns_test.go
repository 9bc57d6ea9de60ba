package ingress

import (
	"net"
	"net/http"
	"testing"
	"time"
)

// fakeListener hands out the connections sent on it.
type fakeListener struct{ conns chan net.Conn }

func (l *fakeListener) Accept() (net.Conn, error) {
	c, ok := <-l.conns
	if !ok {
		return nil, net.ErrClosed
	}
	return c, nil
}
func (l *fakeListener) Close() error   { return nil }
func (l *fakeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// fakeConn is a connection from addr that records its closing.
type fakeConn struct {
	net.Conn
	addr   string
	closed chan struct{}
}

func newFakeConn(addr string) *fakeConn {
	a, _ := net.Pipe()
	return &fakeConn{Conn: a, addr: addr, closed: make(chan struct{})}
}

func (c *fakeConn) RemoteAddr() net.Addr {
	ap, _ := net.ResolveTCPAddr("tcp", c.addr)
	return ap
}

func (c *fakeConn) Close() error {
	select {
	case <-c.closed:
	default:
		close(c.closed)
	}
	return c.Conn.Close()
}

func (c *fakeConn) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// In each case the table holds max connections, some holding a body slot
// ("slot"), oldest first; a newcomer arrives. Want is which is closed:
// one held, or the newcomer itself.
func TestAFullTableClosesTheOldestOfTheAddressHoldingTheMost(t *testing.T) {
	type held struct {
		addr string
		slot bool
	}
	cases := []struct {
		name     string
		held     []held
		newcomer string
		want     int // index into held; -1 is the newcomer
	}{
		{"one address holds most: its oldest goes",
			[]held{{"192.0.2.9:1", false}, {"192.0.2.1:1", false}, {"192.0.2.1:2", false}, {"192.0.2.1:3", false}}, "198.51.100.7:1", 1},
		{"the newcomer's own address holds most: its own oldest goes",
			[]held{{"192.0.2.9:1", false}, {"192.0.2.1:1", false}, {"192.0.2.1:2", false}, {"192.0.2.8:3", false}}, "192.0.2.1:9", 1},
		{"a connection holding a body slot is passed over",
			[]held{{"192.0.2.1:1", true}, {"192.0.2.1:2", false}, {"192.0.2.1:3", true}, {"192.0.2.9:1", false}}, "198.51.100.7:1", 1},
		{"behind a proxy, one address: the oldest goes",
			[]held{{"10.0.0.1:1", false}, {"10.0.0.1:2", false}, {"10.0.0.1:3", false}, {"10.0.0.1:4", false}}, "10.0.0.1:5", 0},
		{"every one holding a body slot: the newcomer is closed",
			[]held{{"192.0.2.1:1", true}, {"192.0.2.1:2", true}, {"192.0.2.1:3", true}, {"192.0.2.9:1", true}}, "198.51.100.7:1", -1},
		{"one IPv6 network counts as one address",
			[]held{{"[2001:db8::1]:1", false}, {"192.0.2.1:1", false}, {"[2001:db8::2]:1", false}, {"192.0.2.1:2", false}}, "[2001:db8::3]:1", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ln := &fakeListener{conns: make(chan net.Conn, len(c.held)+1)}
			shed := 0
			tab := newConnTable(ln, len(c.held), func(string) { shed++ })
			var fakes []*fakeConn
			var tconns []*tableConn
			for _, h := range c.held {
				f := newFakeConn(h.addr)
				fakes = append(fakes, f)
				ln.conns <- f
				nc, err := tab.Accept()
				if err != nil {
					t.Fatal(err)
				}
				tc := nc.(*tableConn)
				tab.connState(tc, http.StateNew)
				if h.slot {
					tab.connState(tc, http.StateActive)
					tc.protect(true)
				}
				tconns = append(tconns, tc)
				time.Sleep(time.Millisecond) // each older than the next
			}
			nf := newFakeConn(c.newcomer)
			ln.conns <- nf
			if c.want == -1 {
				close(ln.conns)
				if _, err := tab.Accept(); err == nil {
					t.Fatal("the newcomer was accepted")
				}
				if !nf.isClosed() {
					t.Error("the newcomer was not closed")
				}
			} else if _, err := tab.Accept(); err != nil {
				t.Fatal(err)
			}
			for i, f := range fakes {
				if f.isClosed() != (i == c.want) {
					t.Errorf("connection %d (%s) closed: %v, want %v", i, c.held[i].addr, f.isClosed(), i == c.want)
				}
			}
			if shed != 1 {
				t.Errorf("%d counted as shed, want 1", shed)
			}
			if got := tab.open(); got > len(c.held) {
				t.Errorf("%d open, over the table's %d", got, len(c.held))
			}
			if c.want >= 0 {
				select {
				case <-tconns[c.want].shedding():
				default:
					t.Error("the connection closed was not told")
				}
			}
		})
	}
}

func TestAClosedConnectionGivesBackItsPlaceOnce(t *testing.T) {
	ln := &fakeListener{conns: make(chan net.Conn, 4)}
	tab := newConnTable(ln, 2, nil)
	for _, a := range []string{"192.0.2.1:1", "192.0.2.1:2"} {
		ln.conns <- newFakeConn(a)
	}
	a, _ := tab.Accept()
	b, _ := tab.Accept()
	a.Close()
	a.Close()
	if got := tab.open(); got != 1 {
		t.Fatalf("%d open after one of two closed twice, want 1", got)
	}
	b.Close()
	if got := tab.open(); got != 0 {
		t.Errorf("%d open, want 0", got)
	}
}

func TestRemoteAddressesAreCountedPerHostAndPerIPv6Network(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.1:443":            "192.0.2.1",
		"[2001:db8:1:2:3::4]:443":  "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::]:80": "2001:db8:1:2::/64",
		"[::ffff:192.0.2.1]:80":    "192.0.2.1",
		"not an address":           "not an address",
	} {
		if got := hostOfString(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
