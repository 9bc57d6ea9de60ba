package graph

import (
	"sync"
	"testing"
	"time"
)

// fakeClock is a budget's clock that moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) read() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) pass(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func budgetWith(total time.Duration) (*Budget, *fakeClock) {
	c := &fakeClock{now: time.Unix(1e9, 0)}
	b := NewBudget(total)
	b.now = c.read
	b.cores = func() int { return 4 }
	return b, c
}

func TestABudgetAddsUpSpansOneAfterAnother(t *testing.T) {
	for _, c := range []struct {
		name  string
		spans []time.Duration
		out   bool
	}{
		{"under", []time.Duration{3 * time.Second, 3 * time.Second, 3 * time.Second}, false},
		{"exactly", []time.Duration{5 * time.Second, 5 * time.Second}, true},
		{"many small", []time.Duration{2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, false},
		{"one long", []time.Duration{time.Hour}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, clock := budgetWith(10 * time.Second)
			for i, d := range c.spans {
				end, ok := b.Begin(nil)
				if !ok {
					t.Fatalf("span %d refused before the budget ran out", i)
				}
				clock.pass(d)
				end()
			}
			if b.Out() != c.out {
				t.Errorf("Out() = %v, want %v", b.Out(), c.out)
			}
			if _, ok := b.Begin(nil); ok == c.out {
				t.Errorf("a span after: ok %v, want %v", ok, !c.out)
			}
		})
	}
}

// TestSpansSideBySideEachCountForTheirOwnTime: three spans running four
// seconds on four cores are twelve seconds of rule time.
func TestSpansSideBySideEachCountForTheirOwnTime(t *testing.T) {
	b, clock := budgetWith(10 * time.Second)
	stopped := make(chan int, 3)
	var ends []func()
	for i := range 3 {
		end, ok := b.Begin(func() { stopped <- i })
		if !ok {
			t.Fatal("refused")
		}
		ends = append(ends, end)
	}
	// Three spans of four seconds each are twelve seconds of rule time,
	// though only four passed.
	clock.pass(4 * time.Second)
	if _, ok := b.Begin(nil); ok {
		t.Error("a fourth span began after twelve seconds of a ten-second budget")
	}
	if !b.Out() {
		t.Fatal("the budget is not out")
	}
	got := map[int]bool{}
	for range 3 {
		got[<-stopped] = true
	}
	if len(got) != 3 {
		t.Errorf("stopped %v, want all three running spans", got)
	}
	for _, end := range ends {
		end()
		end() // a second end charges nothing and does not panic
	}
}

func TestRunningSpansAreStoppedWhenTheirTimeRunsOut(t *testing.T) {
	// Real time: a budget of a millisecond and a span that waits until it
	// is stopped. It cannot pass unless the budget stops it by itself.
	b := NewBudget(time.Millisecond)
	stopped := make(chan struct{})
	end, ok := b.Begin(func() { close(stopped) })
	if !ok {
		t.Fatal("refused")
	}
	<-stopped
	end()
	if !b.Out() {
		t.Error("stopped, but not out")
	}
}

func TestANilBudgetIsUnlimited(t *testing.T) {
	var b *Budget
	if NewBudget(0) != nil {
		t.Error("NewBudget(0) is not unlimited")
	}
	end, ok := b.Begin(nil)
	if !ok || b.Out() || b.Total() != 0 {
		t.Error("a nil budget limits")
	}
	end()
}

// TestMoreSpansThanCoresCountAsTheCoresTime: eight spans running on four
// cores for two seconds are eight seconds, not sixteen: a span waiting for
// a core spends none.
func TestMoreSpansThanCoresCountAsTheCoresTime(t *testing.T) {
	b, clock := budgetWith(10 * time.Second)
	var ends []func()
	for range 8 {
		end, ok := b.Begin(nil)
		if !ok {
			t.Fatal("refused")
		}
		ends = append(ends, end)
	}
	clock.pass(2 * time.Second)
	for _, end := range ends {
		end()
	}
	if b.Out() {
		t.Fatal("out after eight seconds of a ten-second budget")
	}
	end, _ := b.Begin(nil)
	clock.pass(2 * time.Second)
	end()
	if !b.Out() {
		t.Error("not out after ten seconds")
	}
}
