package starlark

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/the-loop/the-loop/graph"
)

// budgetLimits let a call run long on its own: only the budget stops it.
var budgetLimits = Limits{Steps: 1 << 40, Deadline: time.Minute, ReadBytes: 1 << 10, ReadTotal: 4 << 10, Heap: 64 << 20}

const spinner = "def _spin(ctx):\n    for i in range(1 << 40):\n        pass\n    return ok()\n\n" +
	"def _cheap(ctx):\n    n = 0\n    for i in range(2000):\n        n += i\n    return ok()\n\n" +
	"hook(\"x-h\", _spin)\nhook(\"x-fine\", lambda ctx: ok())\nhook(\"x-cheap\", _cheap)\n"

func budgeted(root string, b *graph.Budget) *graph.Context {
	c := gctx(root)
	c.Budget = b
	return c
}

func TestAHookThatOutrunsTheBudgetIsStoppedAndTheRestAreNotRun(t *testing.T) {
	root := writeTree(t, map[string]string{hooksFile: spinner})
	table, err := Load([]Module{declared}, Options{Repo: root, Limits: budgetLimits})
	if err != nil {
		t.Fatal(err)
	}
	b := graph.NewBudget(50 * time.Millisecond)
	r, err := table["x-h"].Run(budgeted(root, b))
	wantLimitBlock(t, r, err, "x-h exceeded the budget of 50ms of rule time (all repository hooks together)")
	if !b.Out() {
		t.Error("the budget is not out")
	}
	for _, name := range []string{"x-fine", "x-cheap", "x-h"} {
		r, err := table[name].Run(budgeted(root, b))
		if err != nil {
			t.Fatal(err)
		}
		want := name + " was not run: the budget of 50ms of rule time (all repository hooks together) is spent"
		if r.Status != graph.StatusBlock || r.Retriable || len(r.Messages) != 1 || r.Messages[0].Text != want {
			t.Errorf("%s after the budget: %+v, want a block saying %q", name, r, want)
		}
	}
	// Another evaluation's budget is its own.
	if r := mustRun(t, table, "x-fine", root); r.Status != graph.StatusPass {
		t.Errorf("x-fine without a budget: %+v", r)
	}
}

// TestCheapHooksAddUpToTheBudget: one cheap rule that passes, called over
// and over side by side (one rule under many names, over many items),
// runs out the budget, and from then on every call is a block naming it.
func TestCheapHooksAddUpToTheBudget(t *testing.T) {
	root := writeTree(t, map[string]string{hooksFile: spinner})
	table, err := Load([]Module{declared}, Options{Repo: root, Limits: budgetLimits})
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 8} {
		b := graph.NewBudget(time.Second)
		var mu sync.Mutex
		passed, blocked := 0, 0
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				// Far more calls than the budget covers; each stops once it
				// has seen a block, and then must see only blocks.
				sawBlock := false
				for range 1_000_000 {
					r, err := table["x-cheap"].Run(budgeted(root, b))
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					switch {
					case r.Status == graph.StatusPass && !sawBlock:
						passed++
					case r.Status == graph.StatusBlock && strings.Contains(r.Messages[0].Text, "budget of 1s"):
						blocked++
						sawBlock = true
					default:
						t.Errorf("after a budget block: %+v", r)
					}
					mu.Unlock()
					if sawBlock && b.Out() {
						return
					}
				}
			})
		}
		wg.Wait()
		// Alone, the first calls pass (each takes a tiny part of the
		// budget); eight side by side on a loaded machine may all be
		// stopped.
		if !b.Out() || (workers == 1 && passed == 0) || blocked == 0 {
			t.Errorf("%d workers: out %v, %d passed, %d blocked", workers, b.Out(), passed, blocked)
		}
	}
}

// TestModuleTopLevelsAreChargedToTheBudget: a module that burns its time
// as it loads runs the budget out; the load fails naming it (wrapping
// graph.ErrBudgetSpent, so that nobody keeps it as the modules' answer),
// and a load with the budget already spent runs no top level at all.
func TestModuleTopLevelsAreChargedToTheBudget(t *testing.T) {
	burner := "def _burn():\n    for i in range(1 << 40):\n        pass\n\n_burn()\nhook(\"x-h\", lambda ctx: ok())\n"
	root := writeTree(t, map[string]string{hooksFile: burner, ".the-loop/hooks/other.star": "hook(\"x-other\", lambda ctx: ok())\n"})
	other := Module{Path: ".the-loop/hooks/other.star", File: declared.File, Line: 9}
	b := graph.NewBudget(50 * time.Millisecond)
	_, err := Load([]Module{declared, other}, Options{Repo: root, Limits: budgetLimits, Budget: b})
	if !errors.Is(err, graph.ErrBudgetSpent) || !strings.Contains(err.Error(), "module .the-loop/hooks/rules.star exceeded the budget of 50ms of rule time (all repository hooks together) as it loaded") {
		t.Errorf("got %v", err)
	}
	_, err = Load([]Module{other}, Options{Repo: root, Limits: budgetLimits, Budget: b})
	if !errors.Is(err, graph.ErrBudgetSpent) || !strings.Contains(err.Error(), "module .the-loop/hooks/other.star was not run: the budget of 50ms") {
		t.Errorf("with the budget spent: %v", err)
	}
	if _, err := Load([]Module{other}, Options{Repo: root, Limits: budgetLimits, Budget: graph.NewBudget(time.Minute)}); err != nil {
		t.Errorf("with a budget of its own: %v", err)
	}
}
