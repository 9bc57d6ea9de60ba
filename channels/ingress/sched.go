package ingress

import (
	"strconv"
	"sync"
	"time"
)

// job is one queued delivery waiting for a worker.
type job struct {
	seq  uint64
	id   string
	lane string
	// tries is how many times this run has processed it and failed.
	tries int
	// resumed: an earlier run queued it.
	resumed bool
}

// laneOf is the lane a delivery is serialized in: its work item, or a lane
// of its own when it names none (nothing orders those).
func laneOf(item string, seq uint64) string {
	if item == "" {
		return "\x00" + strconv.FormatUint(seq, 10)
	}
	return item
}

// scheduler hands queued deliveries to workers: one lane at a time per
// lane, in the order they were added, lanes taking turns.
type scheduler struct {
	mu      sync.Mutex
	cond    sync.Cond
	lanes   map[string][]job // a lane's jobs, head first; the head is running when the lane is busy
	busy    map[string]bool
	ready   []string // lanes with a job and no worker, oldest first
	pending int      // jobs added and not finished
	stopped bool
	timers  map[*time.Timer]bool // pauses before a job is taken again
}

func newScheduler() *scheduler {
	s := &scheduler{lanes: map[string][]job{}, busy: map[string]bool{}, timers: map[*time.Timer]bool{}}
	s.cond.L = &s.mu
	return s
}

// add appends j to its lane. Jobs of one lane must be added in acceptance
// order.
func (s *scheduler) add(j job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending++
	q := s.lanes[j.lane]
	s.lanes[j.lane] = append(q, j)
	if len(q) == 0 && !s.busy[j.lane] {
		s.ready = append(s.ready, j.lane)
		s.cond.Signal()
	}
}

// take waits for a lane with work and no worker and returns its head; false
// once the scheduler is stopped.
func (s *scheduler) take() (job, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.ready) == 0 && !s.stopped {
		s.cond.Wait()
	}
	if s.stopped {
		return job{}, false
	}
	lane := s.ready[0]
	s.ready[0] = ""
	s.ready = s.ready[1:]
	s.busy[lane] = true
	return s.lanes[lane][0], true
}

// finish retires the head of j's lane, which take returned, and puts the
// lane back in turn when it has more.
func (s *scheduler) finish(j job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending--
	delete(s.busy, j.lane)
	q := s.lanes[j.lane][1:]
	if len(q) == 0 {
		delete(s.lanes, j.lane)
		return
	}
	s.lanes[j.lane] = q
	s.ready = append(s.ready, j.lane)
	s.cond.Signal()
}

// later gives j, which take returned, back to its lane's head after d:
// the lane stays busy until then, so nothing behind j overtakes it.
func (s *scheduler) later(j job, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	s.lanes[j.lane][0] = j
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.timers, t)
		if s.stopped {
			return
		}
		delete(s.busy, j.lane)
		s.ready = append(s.ready, j.lane)
		s.cond.Signal()
	})
	s.timers[t] = true
}

// stop makes every take, waiting or to come, return false. Jobs not taken
// stay where they are: in the queue file.
func (s *scheduler) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	for t := range s.timers {
		t.Stop()
	}
	clear(s.timers)
	s.cond.Broadcast()
}

// len is the number of jobs added and not finished.
func (s *scheduler) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending
}

func (s *scheduler) isStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}
