package graph

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Budget bounds the time repository hooks spend in one evaluation, all
// calls together: each call is bounded on its own (steps, a deadline), but
// a checkout can attach one slow-but-passing rule under many names, at
// many nodes, over many items. Each call counts from when it starts
// running to when its goroutine ends (an abandoned call keeps counting).
// Calls side by side count as the processor time they can have had: the
// time passed times how many run, or how many cores there are when fewer
// (a machine running eight calls on two cores spends two seconds of them
// a second). It is rule time, not the evaluation's wall time.
//
// Once the budget runs out it stays out: the calls running at that moment
// are stopped and every later one is refused without running. Which calls
// those are depends on timing; that it ran out is recorded (Out), so a
// caller can make the answer a failure whatever the calls' verdicts were.
//
// A nil *Budget is unlimited. A Budget is safe for concurrent use.
type Budget struct {
	total time.Duration
	now   func() time.Time
	cores func() int

	mu      sync.Mutex
	spent   time.Duration // charged up to last
	last    time.Time
	running map[*span]struct{}
	timer   *time.Timer
	out     atomic.Bool
}

type span struct{ stop func() }

// NewBudget returns a budget of total rule time; total <= 0 is unlimited
// (nil).
func NewBudget(total time.Duration) *Budget {
	if total <= 0 {
		return nil
	}
	return &Budget{total: total, now: time.Now, cores: cores, running: map[*span]struct{}{}}
}

// cores is how many calls can run at once: GOMAXPROCS, or the machine's
// processors when fewer.
func cores() int { return max(1, min(runtime.GOMAXPROCS(0), runtime.NumCPU())) }

// Total is the budget's size; zero for a nil (unlimited) budget.
func (b *Budget) Total() time.Duration {
	if b == nil {
		return 0
	}
	return b.total
}

// Out reports whether the budget has run out.
func (b *Budget) Out() bool { return b != nil && b.out.Load() }

// Begin starts a span of rule time. stop is called at most once, on some
// other goroutine, should the budget run out while the span runs; end,
// called once when the work is over, stops the span's charging. ok is
// false, and nothing is started, when the budget has already run out.
func (b *Budget) Begin(stop func()) (end func(), ok bool) {
	if b == nil {
		return func() {}, true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.charge()
	b.settle()
	if b.out.Load() {
		return nil, false
	}
	s := &span{stop: stop}
	b.running[s] = struct{}{}
	b.settle()
	var once sync.Once
	return func() { once.Do(func() { b.end(s) }) }, true
}

func (b *Budget) end(s *span) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.charge()
	delete(b.running, s)
	b.settle()
}

// charge, with mu held, adds the rule time since last: the time passed
// times the calls running, at most the cores.
func (b *Budget) charge() {
	now := b.now()
	if n := min(len(b.running), b.cores()); n > 0 && !b.last.IsZero() {
		b.spent += now.Sub(b.last) * time.Duration(n)
	}
	b.last = now
}

// settle, with mu held and just charged, works out what is left: when
// nothing is, the budget is out and every running span is stopped; else a
// timer is set for when the running spans, at their present number, will
// have used it up.
func (b *Budget) settle() {
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	if b.out.Load() {
		return
	}
	left := b.total - b.spent
	if left <= 0 {
		b.out.Store(true)
		for s := range b.running {
			if s.stop != nil {
				go s.stop()
			}
		}
		return
	}
	if n := min(len(b.running), b.cores()); n > 0 {
		b.timer = time.AfterFunc(left/time.Duration(n)+time.Millisecond, func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.charge()
			b.settle()
		})
	}
}

// ErrBudgetSpent is wrapped by the error of a load that a spent Budget
// stopped: it says nothing about the modules, so it is not to be kept as
// their answer. Its text is part of what such an error says.
var ErrBudgetSpent = errors.New("rule time (all repository hooks together)")
