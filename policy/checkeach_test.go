package policy

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

func TestCheckEachHandsOverEveryReportInItemOrder(t *testing.T) {
	root := t.TempDir()
	writeBenchRepo(t, root, 60)
	e, err := Open(Options{Repo: root, Events: discard{}})
	if err != nil {
		t.Fatal(err)
	}
	items, _ := e.Items()
	var got []string
	if err := e.CheckEach(items, false, Selector{}, func(r *graph.StatusReport) error {
		got = append(got, r.WorkItem)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, items) {
		t.Errorf("reports came as %v, items are %v", got, items)
	}
}

func TestCheckEachStopsWhenTheCallerDoes(t *testing.T) {
	root := t.TempDir()
	writeBenchRepo(t, root, 40)
	e, err := Open(Options{Repo: root, Events: discard{}})
	if err != nil {
		t.Fatal(err)
	}
	items, _ := e.Items()
	stop := errors.New("the reader went away")
	n := 0
	err = e.CheckEach(items, false, Selector{}, func(*graph.StatusReport) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 3 {
		t.Errorf("got %v after %d reports, want the caller's error after 3", err, n)
	}
}

// TestCheckEachSaysAnErrorOfEveryItemBeforeAnyReport: a loop that does not
// build with the repository's hooks fails every item alike, and a caller
// that writes reports as they come must hear it before it has written one.
func TestCheckEachSaysAnErrorOfEveryItemBeforeAnyReport(t *testing.T) {
	root := hookRepo(t, "    modules:\n      - path: h.star\n", map[string]string{
		"h.star":                 "hook(\"validate-artifacts\", lambda ctx: ok())\n",
		"docs/specs/other/.keep": "",
	})
	e := openRepo(t, root, "")
	items, _ := e.Items()
	handed := 0
	err := e.CheckEach(items, false, Selector{}, func(*graph.StatusReport) error { handed++; return nil })
	var ce *graph.ConfigError
	if !errors.As(err, &ce) || handed != 0 {
		t.Errorf("got %v after %d reports; want the configuration error before any", err, handed)
	}
}

// TestInOrderHoldsNoMoreThanItMayAhead evaluates items on four workers,
// the later ones faster, and counts what is evaluated and not yet handed
// over: never more than ahead.
func TestInOrderHoldsNoMoreThanItMayAhead(t *testing.T) {
	items := make([]string, 500)
	for i := range items {
		items[i] = fmt.Sprint(i)
	}
	const ahead = 6
	var started, handed, most atomic.Int64
	eval := func(item string) (*graph.StatusReport, error) {
		held := started.Add(1) - handed.Load()
		for {
			m := most.Load()
			if held <= m || most.CompareAndSwap(m, held) {
				break
			}
		}
		if item == "13" {
			return nil, errors.New("item 13's own error")
		}
		return &graph.StatusReport{WorkItem: item}, nil
	}
	var order []string
	err := inOrder(items, 4, ahead, eval, func(i int, r *graph.StatusReport, err error) error {
		handed.Add(1)
		if err != nil {
			order = append(order, "error "+items[i])
			return nil
		}
		order = append(order, r.WorkItem)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(items)
	want[13] = "error 13"
	if !slices.Equal(order, want) {
		t.Errorf("handed over out of order: %v", order)
	}
	if m := most.Load(); m > ahead {
		t.Errorf("%d items were held at once, more than %d", m, ahead)
	}
}
