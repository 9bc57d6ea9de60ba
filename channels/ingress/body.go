package ingress

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// BodyReader reads the bodies of the requests an endpoint of serve takes,
// under the bounds every endpoint shares: each body may be read into
// memory before its signature can be checked, and nobody has to prove
// anything to send one. So the bodies read at once may claim at most
// Limits.MaxReading times the endpoint's limit: each claims its
// Content-Length, or the limit when it has none. A request waits up to
// Limits.SlotWait for room, each body must keep Limits.MinBodyRate after
// Limits.BodyGrace and arrive within Limits.BodyTimeout, and none may be
// over the endpoint's limit.
//
// When there is no room, a newcomer cuts reads to make it: of those of a
// remote address claiming more than the newcomer's own, or else of those
// held longer than a payload sent at once takes, the largest claim first,
// then the oldest. A caller trickling bodies on many connections holds
// room only by claiming it, and what claims the most gives way first;
// GitHub's deliveries claim a few KiB. It is safe for concurrent use.
type BodyReader struct {
	max    int64
	limits Limits

	mu    sync.Mutex
	held  map[*bodySlot]struct{}
	used  int64         // the claims of held
	freed chan struct{} // closed, and replaced, when a slot is given back
}

// bodySlot is a body being read.
type bodySlot struct {
	addr  string
	claim int64 // bytes of room it holds
	start time.Time
	// cut makes the read fail now; guarded by mu with done, so that it is
	// never called once the read has given its slot back.
	mu      sync.Mutex
	cut     func()
	done    bool
	evicted bool
}

// NewBodyReader reads bodies of at most max bytes, under the default
// Limits.
func NewBodyReader(max int64) *BodyReader { return newBodyReader(max, Limits{}) }

func newBodyReader(max int64, l Limits) *BodyReader {
	return &BodyReader{max: max, limits: l.withDefaults(), held: map[*bodySlot]struct{}{}, freed: make(chan struct{})}
}

// BodyError is a body that was not read: the status to answer with, the
// reason a rejected event gives (RejectUnavailable, RejectTooLarge,
// RejectInvalidPayload) and what to tell the caller.
type BodyError struct {
	Status int
	Reason string
	Msg    string
}

// Read reads r's body. On success the caller holds a read slot until it
// calls release. On failure the connection is closed once answered: what
// is left of the body is not waited for.
func (b *BodyReader) Read(w http.ResponseWriter, r *http.Request) (body []byte, release func(), _ *BodyError) {
	rc := http.NewResponseController(w)
	fail := func(e *BodyError) ([]byte, func(), *BodyError) {
		// The server would otherwise wait for the rest of the body (up
		// to 256 KiB) to keep the connection: a trickler's way to hold
		// it after its answer.
		w.Header().Set("Connection", "close")
		_ = rc.SetReadDeadline(time.Now())
		return nil, nil, e
	}
	claim := b.max
	if r.ContentLength >= 0 && r.ContentLength < claim {
		claim = r.ContentLength
	}
	s := &bodySlot{addr: hostOfString(r.RemoteAddr), claim: claim, start: time.Now(), cut: func() { _ = rc.SetReadDeadline(time.Now()) }}
	conn := connOf(r)
	// Waiting for a slot, it may be closed to make room for a newcomer:
	// what it waits for is what others hold.
	conn.protect(false)
	if !b.acquire(s, conn.shedding()) {
		return fail(&BodyError{http.StatusServiceUnavailable, RejectUnavailable, "too many requests being read at once; try again"})
	}
	// Holding one, it is not: there are far fewer slots than connections.
	conn.protect(true)
	release = func() { b.release(s) }
	s.start = time.Now()
	body, err := io.ReadAll(http.MaxBytesReader(w, &paced{r: r.Body, s: s, rc: rc, l: b.limits}, b.max))
	if err != nil {
		release()
		conn.protect(false)
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			return fail(&BodyError{http.StatusRequestEntityTooLarge, RejectTooLarge, fmt.Sprintf("body over %d bytes", b.max)})
		}
		if s.wasEvicted() {
			return fail(&BodyError{http.StatusServiceUnavailable, RejectUnavailable, "the body was too slow while others waited; try again"})
		}
		return fail(&BodyError{http.StatusBadRequest, RejectInvalidPayload, "the body could not be read, or arrived too slowly"})
	}
	s.finish()
	return body, release, nil
}

// paced reads a body under a deadline that moves with what has arrived:
// BodyGrace, then a second for each MinBodyRate bytes, never past
// BodyTimeout from the start.
type paced struct {
	r    io.ReadCloser
	s    *bodySlot
	rc   *http.ResponseController
	l    Limits
	read int64
	last time.Time // the deadline last set
}

func (p *paced) Close() error { return p.r.Close() }

func (p *paced) Read(buf []byte) (int, error) {
	d := p.s.start.Add(p.l.BodyGrace + time.Duration(float64(p.read)/float64(p.l.MinBodyRate)*float64(time.Second)))
	if limit := p.s.start.Add(p.l.BodyTimeout); d.After(limit) {
		d = limit
	}
	if !d.Equal(p.last) {
		p.s.mu.Lock()
		if !p.s.evicted {
			_ = p.rc.SetReadDeadline(d)
		}
		p.s.mu.Unlock()
		p.last = d
	}
	n, err := p.r.Read(buf)
	p.read += int64(n)
	return n, err
}

func (s *bodySlot) wasEvicted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.evicted
}

// acquire waits up to SlotWait for room for s, cutting other reads when
// there is none (see BodyReader).
func (b *BodyReader) acquire(s *bodySlot, shed <-chan struct{}) bool {
	wait := time.NewTimer(b.limits.SlotWait)
	defer wait.Stop()
	recheck := time.NewTicker(slowRead / 4)
	defer recheck.Stop()
	budget := int64(b.limits.MaxReading) * b.max
	// Small claims are many to a budget: their number is bounded too, so
	// that the connections reading them stay far fewer than the table's.
	maxHeld := readsPerBody * b.limits.MaxReading
	var cut []*bodySlot // the reads this one cut, until they give their room back
	for {
		b.mu.Lock()
		if b.used+s.claim <= budget && len(b.held) < maxHeld {
			b.held[s] = struct{}{}
			b.used += s.claim
			b.mu.Unlock()
			return true
		}
		cut = slices.DeleteFunc(cut, func(c *bodySlot) bool { _, ok := b.held[c]; return !ok })
		var freeing int64
		for _, c := range cut {
			freeing += c.claim
		}
		var more []*bodySlot
		if needBytes, needReads := b.used-freeing+s.claim-budget, len(b.held)-len(cut)+1-maxHeld; needBytes > 0 || needReads > 0 {
			more = b.victimsLocked(s, needBytes, needReads)
			cut = append(cut, more...)
		}
		freed := b.freed
		b.mu.Unlock()
		for _, c := range more {
			c.evict()
		}
		select {
		case <-freed:
		case <-recheck.C: // a read may have become slow enough to cut
		case <-wait.C:
			return false
		case <-shed:
			return false
		}
	}
}

// victimsLocked chooses reads a newcomer s may cut to free need bytes and
// reads; nil when those it may cut would not free enough.
func (b *BodyReader) victimsLocked(s *bodySlot, need int64, reads int) []*bodySlot {
	claims := map[string]int64{}
	for h := range b.held {
		claims[h.addr] += h.claim
	}
	var cands []*bodySlot
	for h := range b.held {
		if !h.cuttable() {
			continue
		}
		if claims[h.addr] <= claims[s.addr] && time.Since(h.start) < slowRead {
			continue
		}
		cands = append(cands, h)
	}
	slices.SortFunc(cands, func(x, y *bodySlot) int {
		if n := cmp.Compare(claims[y.addr], claims[x.addr]); n != 0 {
			return n
		}
		if n := cmp.Compare(y.claim, x.claim); n != 0 {
			return n
		}
		return x.start.Compare(y.start)
	})
	var out []*bodySlot
	for _, h := range cands {
		if need <= 0 && reads <= 0 {
			break
		}
		out = append(out, h)
		need -= h.claim
		reads--
	}
	if need > 0 || reads > 0 {
		return nil
	}
	return out
}

// cuttable: s is still reading, and has not been cut.
func (s *bodySlot) cuttable() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.done && !s.evicted
}

// finish marks s's body read: there is nothing left to cut.
func (s *bodySlot) finish() {
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
}

// evict cuts s's read, unless it is done.
func (s *bodySlot) evict() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || s.evicted {
		return
	}
	s.evicted = true
	s.cut()
}

func (b *BodyReader) release(s *bodySlot) {
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.held[s]; !ok {
		return
	}
	delete(b.held, s)
	b.used -= s.claim
	close(b.freed)
	b.freed = make(chan struct{})
}
