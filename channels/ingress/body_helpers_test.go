package ingress

import "time"

// hold takes room for a body of the largest size for a read from addr that started at start, done when
// its body is read, as if a request held it.
func (b *BodyReader) hold(addr string, start time.Time, done bool) *bodySlot {
	s := &bodySlot{addr: addr, claim: b.max, start: start, done: done, cut: func() {}}
	b.mu.Lock()
	b.held[s] = struct{}{}
	b.used += s.claim
	b.mu.Unlock()
	return s
}

// holdClaim is hold for a body claiming claim bytes.
func (b *BodyReader) holdClaim(addr string, claim int64) *bodySlot {
	s := b.hold(addr, time.Now(), false)
	b.mu.Lock()
	b.used += claim - s.claim
	s.claim = claim
	b.mu.Unlock()
	return s
}
