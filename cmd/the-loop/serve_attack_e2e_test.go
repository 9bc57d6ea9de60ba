package main

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/the-loop/the-loop/channels/ingress"
)

// attacker is an unauthenticated caller on loopback holding what it can
// of serve: connections sending their headers a line a second, and
// requests with a signature header shaped right whose bodies trickle,
// some a byte at a time, some just over the minimum pace for as long as
// the body deadline allows. Each worker dials again as soon as serve
// closes it, so the pressure never lets up.
type attacker struct {
	addr    string
	stop    chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
	dials   atomic.Int64
	open    atomic.Int64 // connections this side holds open
	maxOpen atomic.Int64
}

func newAttacker(addr string) *attacker { return &attacker{addr: addr, stop: make(chan struct{})} }

func (a *attacker) stopped() bool {
	select {
	case <-a.stop:
		return true
	default:
		return false
	}
}

// pause waits d, false once the attack is over.
func (a *attacker) pause(d time.Duration) bool {
	select {
	case <-a.stop:
		return false
	case <-time.After(d):
		return true
	}
}

// run starts n workers that each, on one connection at a time, send what
// first writes, then what next writes every gap until serve closes it.
func (a *attacker) run(n int, first func(i int) string, next func(i int) string, gap time.Duration) {
	for w := range n {
		a.wg.Go(func() {
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, Timeout: 5 * time.Second}
			for !a.stopped() {
				c, err := d.Dial("tcp", a.addr)
				if err != nil {
					if !a.pause(50 * time.Millisecond) {
						return
					}
					continue
				}
				a.dials.Add(1)
				if n := a.open.Add(1); n > a.maxOpen.Load() {
					a.maxOpen.Store(n)
				}
				// Serve closing its side shows as a failed write only
				// once the kernel has heard of it: a read notices first.
				closed := make(chan struct{})
				go func() {
					buf := make([]byte, 512)
					for {
						if _, err := c.Read(buf); err != nil {
							close(closed)
							return
						}
					}
				}()
				_, err = c.Write([]byte(first(w)))
				for i := 0; err == nil; i++ {
					select {
					case <-a.stop:
						err = net.ErrClosed
						continue
					case <-closed:
						err = net.ErrClosed
						continue
					case <-time.After(gap):
					}
					_, err = c.Write([]byte(next(i)))
				}
				c.Close()
				a.open.Add(-1)
			}
		})
	}
}

func (a *attacker) end() {
	a.once.Do(func() { close(a.stop) })
	a.wg.Wait()
}

// fdBudget is how many descriptors this process may still open, leaving
// room for the test itself.
func fdBudget(t *testing.T) int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 1000
	}
	return int(rl.Cur) - 500
}

// GitHub's signed deliveries are answered 202 within its 10 s while an
// attacker on loopback holds thousands of half-sent headers and trickles
// bodies on many connections, at once: from an address of their own (as
// GitHub's are on the internet) and from the attacker's own address (as
// everything is behind a reverse proxy).
func TestServeAnswersSignedDeliveriesWhileAnAttackerHoldsConnectionsAndBodies(t *testing.T) {
	if testing.Short() {
		t.Skip("a load test")
	}
	if raceEnabled {
		// The race detector slows this process, which is both the
		// attacker and the stand-in for GitHub (serve is a plain build):
		// it can neither press serve nor send a request at once.
		t.Skip("a load test: run it without -race")
	}
	budget := fdBudget(t)
	// Thousands of header holders where the machine allows: several times
	// serve's connection table.
	headers := min(3000, budget*3/4)
	tricklers := min(120, budget/8)
	if headers < 4*ingress.DefaultMaxConns/2 {
		t.Skipf("ulimit -n leaves %d descriptors: too few to outnumber serve's %d connections", budget, ingress.DefaultMaxConns)
	}
	p := newServeProc(t)
	p.start()
	addr := fmt.Sprintf("127.0.0.1:%d", p.port)
	a := newAttacker(addr)
	defer a.end()

	halfHeader := func(int) string { return "POST /gh-webhook HTTP/1.1\r\nHost: x\r\n" }
	headerLine := func(i int) string { return fmt.Sprintf("X-Pad-%d: y\r\n", i) }
	a.run(headers, halfHeader, headerLine, time.Second)

	fakeSig := "sha256=" + strings.Repeat("ab", 32)
	signedHead := func(n int) func(int) string {
		return func(w int) string {
			return fmt.Sprintf("POST /gh-webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"+
				"X-GitHub-Event: issue_comment\r\nX-GitHub-Delivery: attack-%d\r\n%s: %s\r\nContent-Length: %d\r\n\r\n{",
				w, ingress.HeaderSignature256, fakeSig, n)
		}
	}
	// A byte every 100 ms, and 8 KiB every 100 ms (just over the minimum
	// pace) of a body as large as GitHub's largest.
	a.run(tricklers/2, signedHead(100_000), func(int) string { return " " }, 100*time.Millisecond)
	pad := strings.Repeat(" ", 8<<10)
	a.run(tricklers-tricklers/2, signedHead(ingress.MaxBody), func(int) string { return pad }, 100*time.Millisecond)
	// A body nobody reads (the wrong media type), trickled, to hold a
	// connection after its answer.
	a.run(20, func(w int) string {
		return "POST /gh-webhook HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n"
	}, func(int) string { return " " }, 100*time.Millisecond)

	// The attack is under way once serve's table is full several times
	// over from the attacker's side.
	deadline := time.Now().Add(30 * time.Second)
	for a.dials.Load() < int64(headers) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // the trickles take their slots
	t.Logf("attacker: %d header holders, %d tricklers; %d connections opened, at most %d open at once",
		headers, tricklers, a.dials.Load(), a.maxOpen.Load())
	if a.maxOpen.Load() <= int64(ingress.DefaultMaxConns) {
		t.Fatalf("the attacker never held more than %d connections: the test does not press serve", a.maxOpen.Load())
	}

	var ids []string
	for _, src := range []struct{ name, from string }{{"own address", "127.0.0.2"}, {"the attacker's address", "127.0.0.1"}} {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for i := range 12 {
			id := fmt.Sprintf("gh-%s-%d", src.from, i)
			ids = append(ids, id)
			wg.Go(func() {
				// One at a time per sender, a few senders: GitHub's pace.
				time.Sleep(time.Duration(i%4) * 100 * time.Millisecond)
				code, err := deliverSigned(src.from, p.base(), id)
				if code != http.StatusAccepted {
					mu.Lock()
					t.Errorf("from %s: delivery %s: %d %v, want 202 within 10 s", src.name, id, code, err)
					mu.Unlock()
				}
			})
			if i%4 == 3 {
				wg.Wait()
			}
		}
		wg.Wait()
	}
	a.end()
	if missing := p.received(ids); len(missing) > 0 {
		t.Errorf("answered 202 and not in the event log: %v", missing)
	}
	if code := p.stop(); code != 0 {
		t.Errorf("serve exited %d", code)
	}
	if t.Failed() {
		t.Logf("serve's stderr:\n%s", tail(p.stderr.String(), 40))
	}
}

func tail(s string, lines int) string {
	l := strings.Split(s, "\n")
	return strings.Join(l[max(0, len(l)-lines):], "\n")
}
