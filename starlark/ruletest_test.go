package starlark

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

// fakeRunner blocks with a finding at line 3 of each test file that has
// no "ok" in it, and records what it was asked.
type fakeRunner struct{ asked []TrialRequest }

func (f *fakeRunner) RunTrial(req TrialRequest) (*graph.TrialReport, error) {
	f.asked = append(f.asked, req)
	rep := &graph.TrialReport{WorkItem: req.Item, Trace: graph.HookTrace{Steps: 100}}
	if req.Trial.Hook == "x-broken" {
		rep.Trace.Err = "boom"
		rep.Before = []graph.Result{graph.Pass("validate-artifacts", nil)}
	}
	rep.Result = graph.Result{Hook: req.Trial.Hook, Status: graph.StatusPass, Data: map[string]any{"files": len(req.Files)}}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range req.Files {
			if !yield(k) {
				return
			}
		}
	}) {
		if !strings.Contains(string(req.Files[name]), "ok") {
			rep.Result.Status = graph.StatusBlock
			rep.Findings = append(rep.Findings, graph.Finding{Hook: req.Trial.Hook, Severity: graph.SeverityError, Text: "bad " + name, Path: name, Line: 3})
		}
	}
	if rep.Result.Status == graph.StatusPass {
		rep.Result.Status = graph.StatusBlock
		rep.Findings = append(rep.Findings, graph.Finding{Hook: req.Trial.Hook, Severity: graph.SeverityError, Text: "nothing to judge"})
	}
	return rep, nil
}

func runRuleTests(t *testing.T, run *regexp.Regexp, files ...string) (*TestReport, *fakeRunner) {
	t.Helper()
	root := t.TempDir()
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join("testdata/ruletest", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	limits := DefaultLimits
	limits.Steps = 100_000
	runner := &fakeRunner{}
	rep, err := RunTests(files, runner, TestOptions{Options: Options{Repo: root, Limits: limits}, Run: run})
	if err != nil {
		t.Fatal(err)
	}
	return rep, runner
}

func TestRuleTestsCollectEveryFailedAssertionAtItsLine(t *testing.T) {
	rep, runner := runRuleTests(t, nil, "rules_test.star")
	if rep.Passed != 2 || rep.Failed != 5 || rep.Broken != 0 {
		t.Fatalf("passed %d, failed %d, broken %d; want 2, 5, 0: %+v", rep.Passed, rep.Failed, rep.Broken, rep.Files)
	}
	tests := rep.Files[0].Tests
	var names []string
	for _, tc := range tests {
		names = append(names, tc.Name)
	}
	if want := []string{"test_passes", "test_goes_on_after_a_failure", "test_an_error_ends_the_test", "test_a_limit_is_not_caught_by_fails", "test_bad_arguments", "test_a_broken_rule_fails_what_is_asserted_of_it", "test_a_helper_says_where_the_test_called_it"}; !slices.Equal(names, want) {
		t.Errorf("tests ran in the order %v, want the file's %v", names, want)
	}
	want := map[string][]string{
		"test_goes_on_after_a_failure": {
			`rules_test.star:19:9: first: got 1, want 2`,
			`rules_test.star:20:11: got False, want something true`,
			`rules_test.star:21:14: no finding with contains "absent"; its findings: [error: nothing to judge]`,
			`rules_test.star:22:12: lambda did not fail; want an error matching "x"`,
		},
		"test_an_error_ends_the_test":                 {"rules_test.star:27:9: error: fail: broken on purpose"},
		"test_a_helper_says_where_the_test_called_it": {"rules_test.star:58:9 (from rules_test.star:61:15): got 1, want 3"},
		"test_a_broken_rule_fails_what_is_asserted_of_it": {
			"rules_test.star:52:13: x-broken failed to run: boom (check would block the node, not retriable; to test the failure itself, assert on res.error)",
			"rules_test.star:53:14: x-broken failed to run: boom (check would block the node, not retriable; to test the failure itself, assert on res.error)",
		},
		"test_a_limit_is_not_caught_by_fails": {"rules_test.star:29:1: test test_a_limit_is_not_caught_by_fails exceeded its step budget of 100000 steps (stopped at rules_test.star:31:9)"},
	}
	for _, tc := range tests {
		var got []string
		for _, f := range tc.Failures {
			line, _, _ := strings.Cut(f.Msg, "\n")
			got = append(got, f.Pos+": "+line)
		}
		if w, ok := want[tc.Name]; ok && !slices.Equal(got, w) {
			t.Errorf("%s failed with\n%s\nwant\n%s", tc.Name, strings.Join(got, "\n"), strings.Join(w, "\n"))
		}
		if tc.Steps == 0 {
			t.Errorf("%s took no steps", tc.Name)
		}
	}
	first := runner.asked[0]
	if first.Item != "issue-1" || first.Trial.Hook != "x-fake" || !slices.Equal(first.Changed, []string{"b.go"}) ||
		len(first.Items) != 1 || first.Items[0].Node != "design" || first.Items[0].Artifacts["design.md"] != "# D" {
		t.Errorf("the first t.run asked %+v", first)
	}
	if runner.asked[1].Changed != nil {
		t.Error("a t.run without changed= handed the hook a changed list; want None, as without --base")
	}
}

func TestRuleTestStepsAreTheSameEveryRun(t *testing.T) {
	a, _ := runRuleTests(t, regexp.MustCompile("passes"), "rules_test.star")
	b, _ := runRuleTests(t, regexp.MustCompile("passes"), "rules_test.star")
	if len(a.Files[0].Tests) != 1 || a.Files[0].Found != 7 {
		t.Fatalf("--run passes ran %d tests of %d found", len(a.Files[0].Tests), a.Files[0].Found)
	}
	if sa, sb := a.Files[0].Tests[0].Steps, b.Files[0].Tests[0].Steps; sa != sb || sa < 100 {
		t.Errorf("steps %d then %d; want the same, the hook's 100 included", sa, sb)
	}
}

func TestARuleTestFileThatDoesNotLoadIsReportedAndTheOthersRun(t *testing.T) {
	rep, _ := runRuleTests(t, regexp.MustCompile("passes"), "hook_test.star", "rules_test.star", "syntax_test.star")
	if rep.Broken != 2 || rep.Passed != 1 {
		t.Fatalf("broken %d, passed %d; want 2 and 1", rep.Broken, rep.Passed)
	}
	for i, want := range map[int]string{0: "hooks are registered by a module's top level", 2: "syntax_test.star:2:1: got newline, want ':'"} {
		if !strings.Contains(rep.Files[i].Err, want) {
			t.Errorf("%s: error %q, want %q", rep.Files[i].Path, rep.Files[i].Err, want)
		}
	}
}

func TestARuleTestFileLoadsLibrariesButNotItselfOrADeclaredModule(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"lib.star", "loads_test.star", "self_test.star", "declared_test.star", "rules.star"} {
		data, err := os.ReadFile(filepath.Join("testdata/ruletest", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := RunTests([]string{"declared_test.star", "loads_test.star", "self_test.star"}, &fakeRunner{},
		TestOptions{Options: Options{Repo: root}, Modules: []Module{{Path: "rules.star", File: "config.yaml", Line: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed != 1 || rep.Broken != 2 {
		t.Fatalf("passed %d, broken %d; want 1 and 2: %+v", rep.Passed, rep.Broken, rep.Files)
	}
	for i, want := range map[int]string{0: "rules.star is a declared module (config.yaml:3) and cannot also be load()ed", 2: "self_test.star:1:1: cannot load self_test.star: load cycle: self_test.star loads self_test.star"} {
		if !strings.Contains(rep.Files[i].Err, want) {
			t.Errorf("%s: %q, want %q", rep.Files[i].Path, rep.Files[i].Err, want)
		}
	}
}

func TestWhatATestKeepsIsBounded(t *testing.T) {
	rep, _ := runRuleTests(t, nil, "bounds_test.star")
	tests := rep.Files[0].Tests
	if len(tests) != 3 {
		t.Fatalf("%+v", rep.Files)
	}
	if f := tests[0].Failures; len(f) != 1 || f[0].Msg != "got <a list of 100000 elements, too large to show>, want 1" {
		t.Errorf("a huge value: %+v", f)
	}
	f := tests[1].Failures
	if len(f) != maxFailures+1 || len(f[0].Msg) > maxFailureBytes+len("…") || f[maxFailures].Msg != "… 900 more failed assertion(s) not kept (a test keeps 100)" {
		t.Errorf("%d failures kept, the first of %d bytes, the last %q", len(f), len(f[0].Msg), f[len(f)-1].Msg)
	}
	p := tests[2].Prints
	if len(p) > maxTestPrintLines+1 || !strings.HasPrefix(p[len(p)-1], "… ") {
		t.Errorf("%d print lines kept, the last %q", len(p), p[len(p)-1])
	}
}

func TestARunKeepsItsReportWithinItsLimit(t *testing.T) {
	r := &testRun{kept: maxReportBytes - 400}
	big := strings.Repeat("p", 600)
	res := TestResult{Name: "test_x", Prints: []string{big, big},
		Failures: []TestFailure{{Msg: "first"}, {Msg: big}}}
	if !r.keep(&res) {
		t.Fatal("a test trimmed to fit was refused")
	}
	if len(res.Prints) != 1 || !strings.Contains(res.Prints[0], "2 print() line(s) not kept") || len(res.Failures) != 2 || res.Failures[1].Msg != "… 1 more failure(s) not kept: the report is near its limit" {
		t.Errorf("kept %+v", res)
	}
	full := &testRun{kept: maxReportBytes}
	if full.keep(&TestResult{Name: "test_y"}) {
		t.Error("a full report kept another test")
	}
}
