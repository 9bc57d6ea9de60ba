package graph

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func findingsReport(t *testing.T, at string) *StatusReport {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "docs/specs/item"), 0o755)
	co, err := checkoutOf(t, dir).WithSpecDir("docs/specs")
	if err != nil {
		t.Fatal(err)
	}
	rt := &Runtime{Checkout: co, Graph: mustCompile(t, "testdata/findings.yaml"), Events: &recorder{}}
	if at != "" {
		if _, err := rt.Force("item", at, "test", "me"); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := rt.Status("item", false)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func node(t *testing.T, rep *StatusReport, id string) NodeReport {
	t.Helper()
	for _, n := range rep.Nodes {
		if n.Node == id {
			return n
		}
	}
	t.Fatalf("no node %s in %+v", id, rep.Nodes)
	return NodeReport{}
}

func TestAWarningFromAPassingHookIsAFindingThatFailsNothing(t *testing.T) {
	rep := findingsReport(t, "")
	lint := node(t, rep, "lint")
	if lint.Status != "pass" || len(lint.Messages) != 0 {
		t.Fatalf("lint: got %s %q, want a pass whose messages (the original's key) stay empty", lint.Status, lint.Messages)
	}
	want := []Finding{
		{Hook: "warns", Node: "lint", Severity: SeverityWarning, Text: "deprecated key", Path: "a.md", Line: 3, Column: 1},
		{Hook: "warns", Node: "lint", Severity: SeverityWarning, Text: "said as an error"},
	}
	if !reflect.DeepEqual(lint.Findings, want) {
		t.Errorf("findings:\n got %+v\nwant %+v", lint.Findings, want)
	}
}

func TestAHookThatPassedOrSkippedKeepsItsNoticesToItself(t *testing.T) {
	rep := findingsReport(t, "")
	lint := node(t, rep, "lint")
	want := []HookRun{
		{Hook: "ok", Boundary: "entry", Reason: NotRunEntry},
		{Hook: "warns", Boundary: "exit", Ran: true, Status: "pass", Reason: "all 3 files looked at"},
		{Hook: "nothing", Boundary: "exit", Ran: true, Status: "skip", Reason: "not applicable"},
		{Hook: "ok", Boundary: "exit", Ran: true, Status: "pass"},
	}
	if !reflect.DeepEqual(lint.Hooks, want) {
		t.Errorf("hooks:\n got %+v\nwant %+v", lint.Hooks, want)
	}
}

func TestHooksAfterABlockSayWhyTheyDidNotRun(t *testing.T) {
	build := node(t, findingsReport(t, "build"), "build")
	want := []HookRun{
		{Hook: "deny", Boundary: "exit", Ran: true, Status: "block"},
		{Hook: "ok", Boundary: "exit", Reason: "the chain stopped at deny, which blocked"},
	}
	if !reflect.DeepEqual(build.Hooks, want) {
		t.Errorf("hooks:\n got %+v\nwant %+v", build.Hooks, want)
	}
	if len(build.Findings) != 1 || build.Findings[0] != (Finding{Hook: "deny", Node: "build", Severity: SeverityError, Text: "denied"}) {
		t.Errorf("findings: got %+v", build.Findings)
	}
}

func TestAnUnmetNodeAlwaysHasAFinding(t *testing.T) {
	rep := findingsReport(t, "review")
	mute := node(t, rep, "mute")
	if len(mute.Findings) != 1 || mute.Findings[0].Severity != SeverityError || mute.Findings[0].Hook != "mute" {
		t.Errorf("a block without a message: got %+v, want one error naming the hook", mute.Findings)
	}
	review := node(t, rep, "review")
	if len(review.Findings) != 1 || review.Findings[0].Severity != SeverityNotice || review.Findings[0].Text != "no authorized feedback yet" {
		t.Errorf("a wait: got %+v, want its reason as a notice", review.Findings)
	}
}

func TestNodesPastThePointerAreNotReached(t *testing.T) {
	rep := findingsReport(t, "build")
	got := map[string]bool{}
	for _, n := range rep.Nodes {
		got[n.Node] = n.Reached
	}
	want := map[string]bool{"lint": true, "build": true, "mute": false, "review": false, "done": false}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reached: got %v, want %v", got, want)
	}
}

func TestADeclaredSkipRunsNoHook(t *testing.T) {
	rt, _ := newRuntime(t)
	if _, err := rt.DeclareSkips("item", []string{"draft"}, "small change", "bob"); err != nil {
		t.Fatal(err)
	}
	rep, _ := rt.Status("item", false)
	draft := node(t, rep, "draft")
	if len(draft.Hooks) != 1 || draft.Hooks[0].Ran || draft.Hooks[0].Reason == "" || len(draft.Findings) != 0 {
		t.Errorf("draft: got hooks %+v findings %+v, want its hook not run, saying why, and no finding", draft.Hooks, draft.Findings)
	}
}

func TestARefusedSkipIsAWarningAboutTheStateFile(t *testing.T) {
	rt, _ := newRuntime(t)
	st := NewState("item")
	st.Skips["select"] = map[string]any{"via": "hand"}
	st.Save(rt.Checkout, "docs/specs/item")
	rep, _ := rt.Status("item", false)
	var got *Finding
	for _, f := range node(t, rep, "select").Findings {
		if f.Hook == StateHook {
			got = &f
		}
	}
	if got == nil || got.Severity != SeverityWarning || got.Path != "docs/specs/item/graph-state.json" {
		t.Errorf("got %+v, want a warning on the state file", got)
	}
}

func TestFindingWhere(t *testing.T) {
	for _, c := range []struct {
		f    Finding
		want string
	}{
		{Finding{}, ""},
		{Finding{Path: "a.md"}, "a.md"},
		{Finding{Path: "a.md", Line: 3}, "a.md:3"},
		{Finding{Path: "a.md", Line: 3, Column: 7}, "a.md:3:7"},
		{Finding{Line: 3}, ""},
	} {
		if got := c.f.Where(); got != c.want {
			t.Errorf("%+v: got %q, want %q", c.f, got, c.want)
		}
	}
}

func TestAFloorPastThePointerCountsTheNodesUpToIt(t *testing.T) {
	rep := findingsReport(t, "lint")
	if !rep.OK {
		t.Fatalf("at lint the item is satisfied: %+v", rep)
	}
	if !rep.Reach("mute") {
		t.Fatal("a floor past the pointer moved nothing")
	}
	if rep.OK || !node(t, rep, "build").Reached || !node(t, rep, "mute").Reached || node(t, rep, "review").Reached {
		t.Errorf("reached up to mute, and build's block counts: ok=%v %+v", rep.OK, rep.Nodes)
	}
	if reached, _ := rep.Reached(); len(reached) != 3 {
		t.Errorf("Reached lists %d nodes, want lint, build and mute", len(reached))
	}
	if rep.CurrentNode != "lint" {
		t.Errorf("the pointer is still what the state says: got %s", rep.CurrentNode)
	}
}

func TestAFloorBehindThePointerChangesNothing(t *testing.T) {
	rep := findingsReport(t, "mute")
	if rep.Reach("lint") || rep.Reach("no-such-node") {
		t.Error("a floor behind the pointer, or off the graph, moved it")
	}
	if !node(t, rep, "mute").Reached || node(t, rep, "review").Reached {
		t.Errorf("got %+v", rep.Nodes)
	}
}

func TestAWaitIsNeverAnError(t *testing.T) {
	wait := Result{Status: StatusWait, Hook: "x-sign-off", Messages: []Message{{Text: "the board has not signed", Severity: SeverityError}}}
	out := ChainOutcome{Status: StatusWait, Results: []Result{wait}}
	out.Blocking = &out.Results[0]
	fs := chainFindings("design", out)
	if len(fs) != 1 || fs[0].Severity != SeverityWarning {
		t.Errorf("got %+v, want the wait's error as a warning: it fails only --fail-on unmet", fs)
	}
}

func TestTheStopperIsTheHookThatStoppedTheExitChain(t *testing.T) {
	if got := node(t, findingsReport(t, "build"), "build").Stopper(); got != "deny" {
		t.Errorf("build: got %q, want deny", got)
	}
	if got := node(t, findingsReport(t, ""), "lint").Stopper(); got != "" {
		t.Errorf("a passing node: got %q", got)
	}
}

func TestCutKeepsWholeCharacters(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "abc…"},
		{"aé", 2, "a…"}, // é is two bytes: not split
	} {
		if got := Cut(c.s, c.n); got != c.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}

func TestUnshownNamesTheRepositoryHooksAReportDoesNotShowAndWhy(t *testing.T) {
	rep := &StatusReport{CurrentNode: "build", Nodes: []NodeReport{
		{Node: "lint", Hooks: []HookRun{
			{Hook: "validate-artifacts", Boundary: "exit", Ran: true, Status: "block"},
			{Hook: "x-style", Boundary: "exit", Reason: "the chain stopped at validate-artifacts, which blocked"},
			{Hook: "x-greet", Boundary: "entry", Reason: NotRunEntry},
		}},
		{Node: "build", Hooks: []HookRun{{Hook: "x-ran", Boundary: "exit", Ran: true, Status: "pass"}}},
		{Node: "review", Hooks: []HookRun{
			{Hook: "x-later", Boundary: "exit", Ran: true, Status: "block"},
			{Hook: "x-never", Boundary: "exit", Reason: "the node is declared skipped"},
		}},
	}}
	var got []string
	for _, u := range rep.Unshown() {
		got = append(got, u.Run.Hook+"@"+u.Node+": "+u.Why)
	}
	want := []string{
		"x-style@lint: did not run: the chain stopped at validate-artifacts, which blocked",
		"x-greet@lint: did not run: " + NotRunEntry,
		"x-later@review: ran (block), but review is past the item's current node build: its findings are reported once the item gets there",
		"x-never@review: did not run (the node is declared skipped), and review is past the item's current node build",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}
