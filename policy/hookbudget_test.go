package policy

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

// budgetConfig is a CLI config with a tiny budget of rule time and
// per-call limits no single call reaches.
const budgetConfig = "version: \"0.5.0\"\nrouting:\n  graph:\n    hookLimits: {steps: 1000000000000, seconds: 3600}\n    hookBudget: {seconds: 0.05}\n"

// manyNames registers one cheap rule that passes (some milliseconds of
// work) under n names, all attached at implementation's exit.
func manyNames(n int) (hooks, rules string) {
	var h, r strings.Builder
	h.WriteString("    modules:\n      - path: .the-loop/hooks/rules.star\n    attach:\n")
	r.WriteString("def _cheap(ctx):\n    n = 0\n    for i in range(200000):\n        n += i\n    return ok()\n\n")
	for i := range n {
		fmt.Fprintf(&h, "      - {hook: x-rule-%d, node: implementation}\n", i)
		fmt.Fprintf(&r, "hook(\"x-rule-%d\", _cheap)\n", i)
	}
	return h.String(), r.String()
}

// TestTheHookBudgetBoundsAWholeCheck: one cheap rule under thirty names
// at one node, over many items, takes each item past the whole budget, so
// every item blocks naming it however the items share the cores, and the
// engine says the budget ran out.
func TestTheHookBudgetBoundsAWholeCheck(t *testing.T) {
	hooks, rules := manyNames(30)
	files := map[string]string{".the-loop/hooks/rules.star": rules}
	var items []string
	for i := range 12 {
		id := fmt.Sprintf("item-%02d", i)
		items = append(items, id)
		files["docs/specs/"+id+"/tasks.md"] = "---\nstatus: approved\n---\n## Task list\n\n- [x] done\n"
		files["docs/specs/"+id+"/graph-state.json"] = `{"version": 1, "workItem": "` + id + `", "currentNode": "implementation"}`
	}
	root := hookRepo(t, hooks, files)
	e := openRepo(t, root, budgetConfig)
	if total, spent := e.HookBudgetSpent(); spent || total.Seconds() != 0.05 {
		t.Fatalf("before: %s, spent %v", total, spent)
	}
	reps, err := e.Check(items, false, Selector{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rep := range reps {
		for _, n := range rep.Nodes {
			if n.Node != "implementation" {
				continue
			}
			text := strings.Join(n.Messages, " ")
			if n.Status != "block" || !strings.Contains(text, "the budget of 50ms of rule time (all repository hooks together)") {
				t.Errorf("%s: %s %q, want a block naming the budget", rep.WorkItem, n.Status, text)
			}
		}
	}
	if _, spent := e.HookBudgetSpent(); !spent {
		t.Error("the engine does not say the budget ran out")
	}
	// The next engine, in the same process, has a budget of its own.
	if _, spent := openRepo(t, root, "").HookBudgetSpent(); spent {
		t.Error("a new engine starts with the budget spent")
	}
}

// TestAModuleThatBurnsItsBudgetAsItLoadsIsNoAnswerForTheNext: a top level
// that runs the budget out fails the load naming it, and that failure is
// not kept for the process: an engine with a budget to spare loads the
// modules itself.
func TestAModuleThatBurnsItsBudgetAsItLoadsIsNoAnswerForTheNext(t *testing.T) {
	root := hookRepo(t, attachToImplementation, map[string]string{
		".the-loop/hooks/rules.star": "def _burn():\n    n = 0\n    for i in range(1000000):\n        n += i\n\n_burn()\nhook(\"x-rule\", lambda ctx: ok())\n",
	})
	_, err := openRepo(t, root, budgetConfig).Runtime("item", Selector{})
	if !errors.Is(err, graph.ErrBudgetSpent) || !strings.Contains(err.Error(), "exceeded the budget of 50ms") {
		t.Fatalf("got %v", err)
	}
	roomy := strings.Replace(budgetConfig, "seconds: 0.05", "seconds: 600", 1)
	if _, err := openRepo(t, root, roomy).Runtime("item", Selector{}); err != nil {
		t.Errorf("the next engine: %v", err)
	}
}

func TestHookBudgetReadsTheOperatorsSetting(t *testing.T) {
	for _, c := range []struct {
		config string
		want   string
	}{
		{"", "1m0s"},
		{"routing:\n  graph:\n    hookBudget: {seconds: 2.5}\n", "2.5s"},
		{"routing:\n  graph:\n    hookBudget: {}\n", "1m0s"},
		{"routing:\n  graph:\n    hookBudget: {seconds: 86400}\n", "24h0m0s"},
	} {
		c.config = "version: \"0.5.0\"\n" + c.config
		cli, err := LoadCLIConfig(writeCLI(t, t.TempDir(), c.config))
		if err != nil {
			t.Fatalf("%q: %v", c.config, err)
		}
		if got := cli.HookBudget().String(); got != c.want {
			t.Errorf("%q: %s, want %s", c.config, got, c.want)
		}
	}
	for _, bad := range []string{"hookBudget: {seconds: 0}", "hookBudget: {seconds: 86401}", "hookBudget: {second: 5}", "hookBudget: 60"} {
		_, err := LoadCLIConfig(writeCLI(t, t.TempDir(), "version: \"0.5.0\"\nrouting:\n  graph:\n    "+bad+"\n"))
		var ce *graph.ConfigError
		if !errors.As(err, &ce) || !strings.HasPrefix(ce.Key, "routing.graph.hookBudget") {
			t.Errorf("%s: got %v, want a config error at routing.graph.hookBudget", bad, err)
		}
	}
}
