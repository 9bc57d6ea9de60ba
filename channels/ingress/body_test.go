package ingress

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestWhenThereIsNoRoomANewcomerCutsTheHolderOfTheMost(t *testing.T) {
	now := time.Now()
	old := now.Add(-time.Hour)
	type read struct {
		addr  string
		start time.Time
		done  bool
	}
	cases := []struct {
		name     string
		held     []read
		newcomer string
		want     int // index, -1 for none
	}{
		{"another address holds more: its oldest is cut",
			[]read{{"a", now, false}, {"b", now.Add(-time.Millisecond), false}, {"b", now.Add(-2 * time.Millisecond), false}}, "c", 2},
		{"no address holds more than the newcomer's and all are quick: none is cut",
			[]read{{"a", now, false}, {"b", now, false}}, "a", -1},
		{"behind a proxy, one address: a read slower than a payload sent at once is cut",
			[]read{{"p", now, false}, {"p", old, false}, {"p", now, false}}, "p", 1},
		{"a read already done is never cut",
			[]read{{"b", old, true}, {"b", old, true}, {"a", now, false}}, "a", -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newBodyReader(1<<10, Limits{MaxReading: len(c.held)})
			var slots []*bodySlot
			for _, h := range c.held {
				slots = append(slots, b.hold(h.addr, h.start, h.done))
			}
			b.mu.Lock()
			vs := b.victimsLocked(&bodySlot{addr: c.newcomer, claim: 1}, 1, 0)
			b.mu.Unlock()
			var v *bodySlot
			if len(vs) == 1 {
				v = vs[0]
			} else if len(vs) > 1 {
				t.Fatalf("cut %d reads to make room for 1 byte", len(vs))
			}
			got := -1
			for i, s := range slots {
				if s == v {
					got = i
				}
			}
			if got != c.want {
				t.Errorf("cut %d, want %d", got, c.want)
			}
		})
	}
}

// bodyServer answers 200 with the length of the body it read through a
// BodyReader under l, or the BodyError's status.
func bodyServer(t *testing.T, l Limits) (addr string, b *BodyReader) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b = newBodyReader(1<<20, l)
	tab := newConnTable(ln, 64, nil)
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, release, berr := b.Read(w, r)
			if berr != nil {
				http.Error(w, berr.Msg, berr.Status)
				return
			}
			defer release()
			fmt.Fprint(w, len(body))
		}),
		ConnState:   tab.connState,
		ConnContext: connContext,
	}
	go srv.Serve(tab)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), b
}

// trickle sends a request whose body of n bytes comes a byte every gap,
// from the loopback address from, and returns the status it is answered
// with and whether it was answered before the whole body was sent.
func trickle(t *testing.T, addr, from string, n int, gap time.Duration) (status chan int) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// A safety net, not a measure: the server must answer long before.
	c.SetDeadline(time.Now().Add(60 * time.Second))
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", n)
	status = make(chan int, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			status <- 0
			return
		}
		resp.Body.Close()
		status <- resp.StatusCode
	}()
	go func() {
		for range n {
			if _, err := c.Write([]byte{'x'}); err != nil {
				return
			}
			time.Sleep(gap)
		}
	}()
	return status
}

func quick(t *testing.T, addr, from, body string) (int, string) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	client := http.Client{Transport: &http.Transport{DialContext: d.DialContext}, Timeout: 60 * time.Second}
	resp, err := client.Post("http://"+addr+"/", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(got))
}

// The total timeout is an hour here: only the pace can cut the trickle,
// which would take over an hour to send at a byte a second.
func TestABodySentSlowerThanTheMinimumRateIsCutAfterItsGrace(t *testing.T) {
	addr, _ := bodyServer(t, Limits{BodyTimeout: time.Hour, BodyGrace: 200 * time.Millisecond, MinBodyRate: 100})
	if got := <-trickle(t, addr, "127.0.0.1", 4000, time.Second); got != http.StatusBadRequest {
		t.Errorf("a body at a byte a second, want at least 100: got %d, want 400", got)
	}
	if code, body := quick(t, addr, "127.0.0.1", `{"a":1}`); code != http.StatusOK || body != "7" {
		t.Errorf("a body sent at once: %d %q, want 200 and its length", code, body)
	}
}

// Two callers trickling hold all the room, at a pace the rate allows; a
// delivery sent at once, from another address and from theirs, is read,
// and one of them is cut.
func TestATrickledBodyGivesWayToADeliverySentAtOnce(t *testing.T) {
	for _, from := range []string{"127.0.0.2", "127.0.0.1"} {
		t.Run("from "+from, func(t *testing.T) {
			addr, b := bodyServer(t, Limits{MaxReading: 2, BodyTimeout: time.Hour, MinBodyRate: 1, SlotWait: time.Minute})
			// Each claims the largest body: two fill the room.
			a1 := trickle(t, addr, "127.0.0.1", 1<<20, 100*time.Millisecond)
			a2 := trickle(t, addr, "127.0.0.1", 1<<20, 100*time.Millisecond)
			for {
				b.mu.Lock()
				n := len(b.held)
				b.mu.Unlock()
				if n == 2 {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			if code, body := quick(t, addr, from, `{"delivery":true}`); code != http.StatusOK || body != "17" {
				t.Errorf("the delivery: %d %q, want 200 and its length", code, body)
			}
			select {
			case got := <-a1:
				if got != http.StatusServiceUnavailable {
					t.Errorf("the trickle cut: %d, want 503", got)
				}
			case got := <-a2:
				if got != http.StatusServiceUnavailable {
					t.Errorf("the trickle cut: %d, want 503", got)
				}
			}
		})
	}
}

// Small claims fit many to the room, but not without bound: once as many
// reads as allowed are held, a newcomer from another address cuts one of
// the address holding them.
func TestManySmallClaimsAreBoundedInNumberToo(t *testing.T) {
	b := newBodyReader(1<<10, Limits{MaxReading: 1})
	for range readsPerBody {
		b.holdClaim("a", 1)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+1 > int64(b.limits.MaxReading)*b.max {
		t.Fatal("the claims fill the room: the test is not of the count")
	}
	vs := b.victimsLocked(&bodySlot{addr: "c", claim: 1}, 0, 1)
	if len(vs) != 1 || vs[0].addr != "a" {
		t.Errorf("cut %v, want one of a's reads", vs)
	}
	if vs := b.victimsLocked(&bodySlot{addr: "a", claim: 1}, 0, 1); vs != nil {
		t.Errorf("a newcomer from a cut its own fresh reads: %v", vs)
	}
}
