package ingress

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// BodyReader reads the bodies of the requests an endpoint of serve takes,
// under the bounds every endpoint shares: each body may be read into
// memory before its signature can be checked, and nobody has to prove
// anything to send one. So at most Limits.MaxReading are read at once (a
// request waits up to Limits.SlotWait for a slot), each must keep
// Limits.MinBodyRate after Limits.BodyGrace and arrive within
// Limits.BodyTimeout, and none may be over its endpoint's limit.
//
// When every slot is taken, a newcomer takes the slot of the oldest read
// of the remote address holding the most slots, if that address holds
// more than the newcomer's own, or else of any read held longer than a
// payload sent at once takes: a caller trickling bodies on many
// connections cannot keep a delivery out. It is safe for concurrent use.
type BodyReader struct {
	max    int64
	limits Limits

	mu    sync.Mutex
	held  map[*bodySlot]struct{}
	freed chan struct{} // closed, and replaced, when a slot is given back
}

// bodySlot is a body being read.
type bodySlot struct {
	addr  string
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
	s := &bodySlot{addr: hostOfString(r.RemoteAddr), start: time.Now(), cut: func() { _ = rc.SetReadDeadline(time.Now()) }}
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

// acquire waits up to SlotWait for a slot for s, taking one from another
// read when every slot is held (see BodyReader).
func (b *BodyReader) acquire(s *bodySlot, shed <-chan struct{}) bool {
	wait := time.NewTimer(b.limits.SlotWait)
	defer wait.Stop()
	recheck := time.NewTicker(slowRead / 4)
	defer recheck.Stop()
	var cut *bodySlot // the read this one cut, until it gives its slot back
	for {
		b.mu.Lock()
		if len(b.held) < b.limits.MaxReading {
			b.held[s] = struct{}{}
			b.mu.Unlock()
			return true
		}
		if _, waiting := b.held[cut]; !waiting {
			cut = b.victimLocked(s.addr)
		}
		freed := b.freed
		b.mu.Unlock()
		if cut != nil {
			cut.evict()
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

// victimLocked chooses the read a newcomer from addr may cut, or nil.
func (b *BodyReader) victimLocked(addr string) *bodySlot {
	count := map[string]int{}
	for h := range b.held {
		count[h.addr]++
	}
	var victim *bodySlot
	for h := range b.held {
		if !h.cuttable() {
			continue
		}
		if count[h.addr] <= count[addr] && time.Since(h.start) < slowRead {
			continue
		}
		if victim == nil || count[h.addr] > count[victim.addr] ||
			count[h.addr] == count[victim.addr] && h.start.Before(victim.start) {
			victim = h
		}
	}
	return victim
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
	close(b.freed)
	b.freed = make(chan struct{})
}
