package ingress

import (
	"sync"
	"time"
)

// RejectsPerSecond is how many refusals a second an endpoint writes to the
// logs; the others are counted, and the next one written says how many.
// Anyone can be refused, as often as they like.
const RejectsPerSecond = 10

// Sampler lets at most n events a second through, counting the others. It
// is safe for concurrent use.
type Sampler struct {
	mu     sync.Mutex
	n      int
	second time.Time
	used   int
	unsaid int
	now    func() time.Time
}

// NewSampler lets n events a second through.
func NewSampler(n int) *Sampler { return &Sampler{n: n, now: time.Now} }

// Allow reports whether an event may be written now and, when it may, how
// many were not since the last one that was.
func (s *Sampler) Allow() (unsaid int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sec := s.now().Truncate(time.Second); !sec.Equal(s.second) {
		s.second, s.used = sec, 0
	}
	if s.used >= s.n {
		s.unsaid++
		return 0, false
	}
	s.used++
	unsaid, s.unsaid = s.unsaid, 0
	return unsaid, true
}
