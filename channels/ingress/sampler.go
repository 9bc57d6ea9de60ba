package ingress

import (
	"sync"
	"time"
)

// rejectsPerSecond is how many refusals a second are written to the logs;
// the others are counted, and the next one written says how many.
const rejectsPerSecond = 10

// sampler lets at most n events a second through, counting the others.
type sampler struct {
	mu     sync.Mutex
	n      int
	second time.Time
	used   int
	unsaid int
	now    func() time.Time
}

func newSampler(n int) *sampler { return &sampler{n: n, now: time.Now} }

// allow reports whether an event may be written now and, when it may, how
// many were not since the last one that was.
func (s *sampler) allow() (unsaid int, ok bool) {
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
