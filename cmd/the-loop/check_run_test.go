package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/channels/github"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/policy"
)

// runTo writes reports in the github format with a check runner that
// keeps what it was handed and answers err.
func runTo(t *testing.T, reports []*graph.StatusReport, view checkView, err error) (checkRunReport, string) {
	t.Helper()
	var got checkRunReport
	view.CheckRun = func(r checkRunReport) (string, error) {
		got = r
		return "https://github.example/runs/1", err
	}
	var stdout, stderr bytes.Buffer
	if err := writeAll(githubFormat{}, newOutput(&stdout, &stderr), reports, view); err != nil {
		t.Fatal(err)
	}
	return got, stdout.String()
}

func waitingAt(item, node string) *graph.StatusReport {
	r := blockedAt(item, node, graph.Finding{Hook: "classify-feedback", Severity: graph.SeverityNotice, Text: "no authorized feedback yet"})
	r.Nodes[0].Status = "wait"
	return r
}

func okAt(item string) *graph.StatusReport {
	return &graph.StatusReport{WorkItem: item, CurrentNode: "design", OK: true,
		Nodes: []graph.NodeReport{{Node: "design", Status: "pass", Reached: true}}}
}

func TestTheCheckRunsConclusion(t *testing.T) {
	failed := policy.ItemsError{{Item: "issue-9", Err: errors.New("corrupt state")}}
	for _, c := range []struct {
		name    string
		reports []*graph.StatusReport
		failOn  string
		failed  policy.ItemsError
		want    string
	}{
		{"all satisfied", []*graph.StatusReport{okAt("issue-1")}, graph.FailOnUnmet, nil, github.ConclusionSuccess},
		{"a block", []*graph.StatusReport{okAt("issue-1"), blockedAt("issue-2", "design", graph.Finding{Hook: "v", Severity: graph.SeverityError, Text: "e"})}, graph.FailOnBlock, nil, github.ConclusionFailure},
		{"a wait under --fail-on unmet", []*graph.StatusReport{waitingAt("issue-1", "design-approval")}, graph.FailOnUnmet, nil, github.ConclusionFailure},
		{"a wait under --fail-on block", []*graph.StatusReport{okAt("issue-2"), waitingAt("issue-1", "design-approval")}, graph.FailOnBlock, nil, github.ConclusionNeutral},
		{"an item not evaluated", []*graph.StatusReport{okAt("issue-1")}, graph.FailOnBlock, failed, github.ConclusionFailure},
		{"no items", nil, graph.FailOnUnmet, nil, github.ConclusionSuccess},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The view at start has no Unevaluated yet; finish's has.
			view := checkView{All: true, FailOn: c.failOn}
			var got checkRunReport
			view.CheckRun = func(r checkRunReport) (string, error) { got = r; return "u", nil }
			var b bytes.Buffer
			w := githubFormat{}.start(newOutput(&b, &b), view)
			for _, r := range c.reports {
				if err := w.report(r); err != nil {
					t.Fatal(err)
				}
			}
			view.Unevaluated = c.failed
			if err := w.finish(view); err != nil {
				t.Fatal(err)
			}
			if got.Conclusion != c.want {
				t.Errorf("conclusion = %q, want %q", got.Conclusion, c.want)
			}
			if got.Title != view.tally(counted{reports: len(c.reports), satisfied: satisfied(c.reports, c.failOn)}) {
				t.Errorf("title = %q, want the tally", got.Title)
			}
		})
	}
}

func satisfied(rs []*graph.StatusReport, failOn string) int {
	n := 0
	for _, r := range rs {
		if !r.Fails(failOn) {
			n++
		}
	}
	return n
}

func TestTheCheckRunAndTheWorkflowCommandsAreOneList(t *testing.T) {
	f := graph.Finding{Hook: "x-rule", Severity: graph.SeverityWarning, Text: "w", Path: "src/a.go", Line: 4, Column: 2}
	g := graph.Finding{Hook: "x-rule", Severity: graph.SeverityError, Text: "about no file"}
	reports := []*graph.StatusReport{blockedAt("issue-1", "implementation", f, g), blockedAt("issue-2", "implementation", f)}
	run, withRun := runTo(t, reports, checkView{FailOn: graph.FailOnUnmet, GitHub: githubEnv{Prefix: "sub"}}, nil)
	want := github.Annotation{Path: "sub/src/a.go", StartLine: 4, EndLine: 4, StartColumn: 2, EndColumn: 2, Level: github.LevelWarning,
		Message: "issue-1, issue-2 · implementation: w", Title: "the-loop/x-rule", RawDetails: "Reported on 2 work items: issue-1, issue-2."}
	if len(run.Annotations) != 1 || run.Annotations[0] != want || run.Unplaced != 1 {
		t.Fatalf("check run = %+v, want %+v and one unplaced", run, want)
	}
	if !strings.Contains(withRun, "warning: sub/src/a.go:4:2: issue-1, issue-2 · implementation: w [the-loop/x-rule]\n") || strings.Contains(withRun, "::warning") {
		t.Errorf("with a check run, the log holds plain lines:\n%s", withRun)
	}
	var b bytes.Buffer
	if err := writeAll(githubFormat{}, newOutput(&b, &b), reports, checkView{FailOn: graph.FailOnUnmet, GitHub: githubEnv{Prefix: "sub"}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "::warning file=sub/src/a.go,line=4,col=2,title=the-loop/x-rule::issue-1, issue-2 · implementation: w\n") {
		t.Errorf("the workflow command says something else:\n%s", b.String())
	}
}

func TestACheckRunRefusedFallsBackToWorkflowCommandsWithOneNotice(t *testing.T) {
	f := graph.Finding{Hook: "v", Severity: graph.SeverityError, Text: "e", Path: "a.go", Line: 1}
	forbidden := fmt.Errorf("%w: github check-run: 403", github.ErrCheckRunForbidden)
	_, out := runTo(t, []*graph.StatusReport{blockedAt("issue-1", "design", f)}, checkView{FailOn: graph.FailOnUnmet}, forbidden)
	if strings.Count(out, "::notice title=the-loop::no check run") != 1 || !strings.Contains(out, "checks: write") ||
		!strings.Contains(out, "::error file=a.go,line=1,title=the-loop/v::issue-1 · design: e\n") {
		t.Errorf("got:\n%s", out)
	}
	_, out = runTo(t, []*graph.StatusReport{blockedAt("issue-1", "design", f)}, checkView{FailOn: graph.FailOnUnmet}, errors.New("github check-run: 500"))
	if !strings.Contains(out, "::warning title=the-loop::no check run: github check-run: 500; the findings are workflow commands instead\n") ||
		!strings.Contains(out, "::error file=a.go") {
		t.Errorf("got:\n%s", out)
	}
}

func TestTheCheckRunsSummaryIsTheStepSummaryWithinItsLimit(t *testing.T) {
	var reports []*graph.StatusReport
	for i := range 400 {
		reports = append(reports, blockedAt(fmt.Sprintf("issue-%d", i), "design",
			graph.Finding{Hook: "v", Severity: graph.SeverityError, Text: fmt.Sprint(i, strings.Repeat(" long", 60)), Path: "a.md", Line: 1}))
	}
	summary := filepath.Join(t.TempDir(), "summary.md")
	run, _ := runTo(t, reports, checkView{FailOn: graph.FailOnUnmet, GitHub: githubEnv{Summary: summary}}, nil)
	if len([]rune(run.Summary)) > github.MaxCheckRunSummary || !strings.Contains(run.Summary, "a check run's summary is limited to 65535 characters") {
		t.Errorf("check run summary of %d characters:\n%s", len([]rune(run.Summary)), run.Summary[len(run.Summary)-300:])
	}
	md, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	head := run.Summary[:strings.Index(run.Summary, "\n| issue-100 ")]
	if !strings.HasPrefix(string(md), head) || bytes.Contains(md, []byte("more line(s) not shown")) {
		t.Error("the check run's summary is not the step summary's start")
	}
}

func TestHeadSHAIsThePullRequestsHead(t *testing.T) {
	dir := t.TempDir()
	event := filepath.Join(dir, "event.json")
	if err := os.WriteFile(event, []byte(`{"pull_request": {"head": {"sha": "feedface"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, path, want string }{
		{"push", event, "merge"},
		{"pull_request", event, "feedface"},
		{"pull_request_target", event, "feedface"},
		{"pull_request", filepath.Join(dir, "none.json"), "merge"},
	} {
		vars := map[string]string{"GITHUB_SHA": "merge", "GITHUB_EVENT_NAME": c.name, "GITHUB_EVENT_PATH": c.path}
		if got := headSHA(func(k string) string { return vars[k] }); got != c.want {
			t.Errorf("%s at %s: %q, want %q", c.name, c.path, got, c.want)
		}
	}
}
