package graph

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
)

// ranCount counts the runs of the repository hooks of reportOnlyRuntime.
type ranCount struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *ranCount) hook(name string, r Result, err error) Hook {
	return HookFunc(func(ctx *Context) (Result, error) {
		c.mu.Lock()
		c.n[name]++
		c.mu.Unlock()
		return r, err
	})
}

// reportOnlyRuntime is findings.yaml with the repository's rules attached:
// two that block and one that warns after build's shipped deny (and its
// shipped ok), one that fails to run, one after review's waiting gate, one
// at mute that counts its runs. The item is forced to at.
func reportOnlyRuntime(t *testing.T, at string, all bool) (*Runtime, *ranCount) {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "docs/specs/item"), 0o755)
	co, err := checkoutOf(t, dir).WithSpecDir("docs/specs")
	if err != nil {
		t.Fatal(err)
	}
	c := &ranCount{n: map[string]int{}}
	hooks := map[string]Hook{
		"x-style": c.hook("x-style", Block("x-style",
			Message{Text: "heading not in title case", Path: "docs/specs/item/spec.md", Line: 3, Severity: SeverityError},
			Message{Text: "trailing space", Path: "docs/specs/item/spec.md", Line: 9, Column: 4, Severity: SeverityError}), nil),
		"x-licence": c.hook("x-licence", Block("x-licence", Errorf("main.go has no licence header")), nil),
		"x-warns": c.hook("x-warns", Result{Status: StatusPass, Hook: "x-warns", Messages: []Message{
			{Text: "prefer ADR numbering", Severity: SeverityWarning},
			{Text: "looked at 2 files", Severity: SeverityInfo},
		}}, nil),
		"x-broken": c.hook("x-broken", Result{}, errors.New("step budget spent")),
		"x-sign":   c.hook("x-sign", Result{Status: StatusWait, Hook: "x-sign", Messages: []Message{{Text: "the board has not signed", Severity: SeverityError}}}, nil),
		"x-count":  c.hook("x-count", Block("x-count", Errorf("counted")), nil),
	}
	g, err := Apply(mustCompile(t, "testdata/findings.yaml"), hooks, []Attachment{
		{Hook: "x-style", Node: "build"},
		{Hook: "x-warns", Node: "build"},
		{Hook: "x-licence", Node: "build"},
		{Hook: "x-broken", Node: "build"},
		{Hook: "x-count", Node: "mute"},
		{Hook: "x-sign", Node: "review"},
	})
	if err != nil {
		t.Fatal(err)
	}
	rt := &Runtime{Checkout: co, Graph: g, Events: &recorder{}}
	if at != "" {
		if _, err := rt.Force("item", at, "test", "me"); err != nil {
			t.Fatal(err)
		}
	}
	rt.AllFindings = all
	return rt, c
}

func reportOnlyStatus(t *testing.T, at string, all bool) (*StatusReport, *ranCount) {
	t.Helper()
	rt, c := reportOnlyRuntime(t, at, all)
	rep, err := rt.Status("item", false)
	if err != nil {
		t.Fatal(err)
	}
	return rep, c
}

func TestRepositoryHooksAfterABlockingShippedHookRunReportOnly(t *testing.T) {
	rep, _ := reportOnlyStatus(t, "build", true)
	build := node(t, rep, "build")
	if build.Status != "block" || build.Outcome != "block" || !reflect.DeepEqual(build.Messages, []string{"denied"}) {
		t.Fatalf("build: got %s/%s %q, want deny's block alone", build.Status, build.Outcome, build.Messages)
	}
	want := []Finding{
		{Hook: "deny", Node: "build", Severity: SeverityError, Text: "denied"},
		{Hook: "x-style", Node: "build", Severity: SeverityWarning, Text: "heading not in title case", Path: "docs/specs/item/spec.md", Line: 3, ReportOnly: true},
		{Hook: "x-style", Node: "build", Severity: SeverityWarning, Text: "trailing space", Path: "docs/specs/item/spec.md", Line: 9, Column: 4, ReportOnly: true},
		{Hook: "x-warns", Node: "build", Severity: SeverityWarning, Text: "prefer ADR numbering", ReportOnly: true},
		{Hook: "x-licence", Node: "build", Severity: SeverityWarning, Text: "main.go has no licence header", ReportOnly: true},
		{Hook: "x-broken", Node: "build", Severity: SeverityWarning, Text: "the x-broken hook failed to run: step budget spent", ReportOnly: true},
	}
	if !reflect.DeepEqual(build.Findings, want) {
		t.Errorf("findings:\n got %+v\nwant %+v", build.Findings, want)
	}
	const stopped = "report only: the chain stopped at deny, which blocked"
	wantRuns := []HookRun{
		{Hook: "deny", Boundary: "exit", Ran: true, Status: "block"},
		{Hook: "ok", Boundary: "exit", Reason: "the chain stopped at deny, which blocked"},
		{Hook: "x-style", Boundary: "exit", Ran: true, Status: "block", Reason: stopped, ReportOnly: true},
		{Hook: "x-warns", Boundary: "exit", Ran: true, Status: "pass", Reason: stopped + "; looked at 2 files", ReportOnly: true},
		{Hook: "x-licence", Boundary: "exit", Ran: true, Status: "block", Reason: stopped, ReportOnly: true},
		{Hook: "x-broken", Boundary: "exit", Ran: true, Status: "block", Reason: stopped, ReportOnly: true},
	}
	if !reflect.DeepEqual(build.Hooks, wantRuns) {
		t.Errorf("hooks (the shipped ok is never run past its stopper):\n got %+v\nwant %+v", build.Hooks, wantRuns)
	}
	if got := build.Stopper(); got != "deny" {
		t.Errorf("stopper: got %q, want deny: a report-only block stops nothing", got)
	}
}

func TestARepositoryHookAfterAWaitingHumanGateRunsReportOnly(t *testing.T) {
	rep, _ := reportOnlyStatus(t, "review", true)
	review := node(t, rep, "review")
	if review.Status != "wait" {
		t.Fatalf("review: got %s, want the gate's wait", review.Status)
	}
	want := []Finding{
		{Hook: "gate", Node: "review", Severity: SeverityNotice, Text: "no authorized feedback yet"},
		{Hook: "x-sign", Node: "review", Severity: SeverityWarning, Text: "the board has not signed", ReportOnly: true},
	}
	if !reflect.DeepEqual(review.Findings, want) {
		t.Errorf("findings:\n got %+v\nwant %+v", review.Findings, want)
	}
	if h := review.Hooks[1]; !h.Ran || !h.ReportOnly || h.Status != "wait" || h.Reason != "report only: the chain stopped at gate, which waits" {
		t.Errorf("x-sign: got %+v", h)
	}
}

func TestReportOnlyRunsChangeNoVerdict(t *testing.T) {
	for _, at := range []string{"", "build", "mute", "review"} {
		without, _ := reportOnlyStatus(t, at, false)
		with, _ := reportOnlyStatus(t, at, true)
		if with.OK != without.OK || with.CurrentNode != without.CurrentNode {
			t.Errorf("at %q: ok %v at %s with, %v at %s without", at, with.OK, with.CurrentNode, without.OK, without.CurrentNode)
		}
		for _, failOn := range []string{FailOnUnmet, FailOnBlock} {
			if with.Fails(failOn) != without.Fails(failOn) {
				t.Errorf("at %q: --fail-on %s fails %v with, %v without", at, failOn, with.Fails(failOn), without.Fails(failOn))
			}
		}
		for i, n := range with.Nodes {
			o := without.Nodes[i]
			if n.Status != o.Status || n.Outcome != o.Outcome || n.Reached != o.Reached || !reflect.DeepEqual(n.Messages, o.Messages) {
				t.Errorf("at %q, %s: got %s/%s %q, want %s/%s %q", at, n.Node, n.Status, n.Outcome, n.Messages, o.Status, o.Outcome, o.Messages)
			}
			if !reflect.DeepEqual(n.Findings[:len(o.Findings)], o.Findings) {
				t.Errorf("at %q, %s: the findings without the flag are not the first with it:\n got %+v\nwant %+v", at, n.Node, n.Findings, o.Findings)
			}
			for _, f := range n.Findings[len(o.Findings):] {
				if !f.ReportOnly || f.Severity == SeverityError {
					t.Errorf("at %q, %s: an added finding %+v is not a report-only warning", at, n.Node, f)
				}
			}
		}
	}
}

func TestWithoutTheFlagNoRepositoryHookRunsPastItsStopper(t *testing.T) {
	rep, c := reportOnlyStatus(t, "review", false)
	for _, h := range []string{"x-style", "x-warns", "x-licence", "x-broken", "x-sign"} {
		if c.n[h] != 0 {
			t.Errorf("%s ran %d times", h, c.n[h])
		}
	}
	if got := len(node(t, rep, "build").Findings); got != 1 {
		t.Errorf("build: got %d findings, want deny's alone", got)
	}
}

func TestRepositoryHooksPastThePointerDoNotRunReportOnly(t *testing.T) {
	rep, c := reportOnlyStatus(t, "build", true)
	// mute's own shipped hook blocks, so x-count is past a stopper, at a
	// node the item has not reached.
	if c.n["x-count"] != 0 || c.n["x-sign"] != 0 {
		t.Fatalf("hooks past the pointer ran: %v", c.n)
	}
	mute := node(t, rep, "mute")
	if h := mute.Hooks[1]; h.Ran || h.ReportOnly {
		t.Errorf("x-count: got %+v, want not run", h)
	}
	if c.n["x-style"] != 1 {
		t.Errorf("x-style ran %d times at the reached build, want once", c.n["x-style"])
	}
	// A floor that takes the pointer to mute makes it reached: its rule
	// runs then, once, and review's is still not judged.
	if !rep.Reach("mute") {
		t.Fatal("the floor moved nothing")
	}
	rep.Reach("mute")
	mute = node(t, rep, "mute")
	if c.n["x-count"] != 1 || c.n["x-sign"] != 0 || c.n["x-style"] != 1 {
		t.Errorf("after Reach(mute): runs %v, want x-count once, x-sign never, x-style still once", c.n)
	}
	if h := mute.Hooks[1]; !h.Ran || !h.ReportOnly || len(mute.Findings) != 2 || !mute.Findings[1].ReportOnly {
		t.Errorf("mute after Reach: hooks %+v findings %+v", mute.Hooks, mute.Findings)
	}
}

func TestReportOnlyFindingsComeInChainOrderEveryRun(t *testing.T) {
	// How long each node took is the one thing that may differ.
	untimed := func(rep *StatusReport) []NodeReport {
		for i := range rep.Nodes {
			rep.Nodes[i].Elapsed = 0
		}
		return rep.Nodes
	}
	first, _ := reportOnlyStatus(t, "review", true)
	for range 5 {
		again, _ := reportOnlyStatus(t, "review", true)
		if !reflect.DeepEqual(untimed(first), untimed(again)) {
			t.Fatalf("two evaluations differ:\n%+v\n%+v", first.Nodes, again.Nodes)
		}
	}
}

func TestUnshownLeavesOutTheHooksThatRanReportOnly(t *testing.T) {
	rt, _ := reportOnlyRuntime(t, "build", false)
	rep, _ := rt.Status("item", false)
	before := unshownAt(rep, "build")
	rt.AllFindings = true
	rep, _ = rt.Status("item", false)
	after := unshownAt(rep, "build")
	if len(before) != 4 || len(after) != 0 {
		t.Errorf("build's unshown hooks: %q without the flag, %q with it; want the four x- hooks, then none", before, after)
	}
}

func unshownAt(rep *StatusReport, at string) []string {
	var out []string
	for _, u := range rep.Unshown() {
		if u.Node == at {
			out = append(out, u.Run.Hook)
		}
	}
	return out
}
