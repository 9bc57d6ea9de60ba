package ingress

import "time"

// hold takes a slot for a read from addr that started at start, done when
// its body is read, as if a request held it.
func (b *BodyReader) hold(addr string, start time.Time, done bool) *bodySlot {
	s := &bodySlot{addr: addr, start: start, done: done, cut: func() {}}
	b.mu.Lock()
	b.held[s] = struct{}{}
	b.mu.Unlock()
	return s
}
