package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/policy"
)

// actionsEnv is a GitHub Actions environment whose workspace is this
// repository, so the demo's files are under examples/demo.
func actionsEnv(t *testing.T) (map[string]string, string) {
	t.Helper()
	ws, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	summary := filepath.Join(t.TempDir(), "summary.md")
	return map[string]string{
		"GITHUB_STEP_SUMMARY": summary,
		"GITHUB_SERVER_URL":   "https://github.example",
		"GITHUB_REPOSITORY":   "acme/shorty",
		"GITHUB_SHA":          "0123abc",
		"GITHUB_WORKSPACE":    ws,
	}, summary
}

func TestTheGitHubFormatOnTheDemo(t *testing.T) {
	env, summary := actionsEnv(t)
	golden(t, "demo.github", demoReport(t, env, "github"))
	md, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "demo.github-summary.md", string(md))
}

func TestTheGitHubFormatWritesNoSummaryOutsideActions(t *testing.T) {
	out := demoReport(t, nil, "github")
	if !strings.Contains(out, "::error file=docs/specs/issue-21/design.md,line=2,title=the-loop/validate-artifacts::") {
		t.Errorf("paths are repository-relative outside Actions; got:\n%s", out)
	}
}

// githubOf writes reports in the github format to a buffer.
func githubOf(t *testing.T, reports []*graph.StatusReport, view checkView) (string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	view.FailOn = graph.FailOnUnmet
	if err := writeAll(githubFormat{}, newOutput(&stdout, &stderr), reports, view); err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String()
}

// blockedAt is item blocked at node by the hook of its first finding.
func blockedAt(item, node string, fs ...graph.Finding) *graph.StatusReport {
	var hooks []graph.HookRun
	for i := range fs {
		fs[i].Node = node
		if i == 0 {
			hooks = append(hooks, graph.HookRun{Hook: fs[0].Hook, Boundary: "exit", Ran: true, Status: "block"})
		}
	}
	return &graph.StatusReport{WorkItem: item, CurrentNode: node, Dir: "docs/specs/" + item, Nodes: []graph.NodeReport{
		{Node: node, Status: "block", Reached: true, Findings: fs, Hooks: hooks},
	}}
}

func TestAFindingCannotForgeAWorkflowCommand(t *testing.T) {
	r := blockedAt("issue-1", "design", graph.Finding{
		Hook: "x-evil", Severity: graph.SeverityError,
		Text: "fine\n::error file=README.md::forged\r::add-mask::x %0A",
		Path: "docs/a,b:c.md", Line: 4,
	})
	out, _ := githubOf(t, []*graph.StatusReport{r}, checkView{})
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, "::error file=README.md") || strings.HasPrefix(line, "::add-mask") {
			t.Errorf("a message started a command of its own: %q", line)
		}
	}
	const want = "::error file=docs/a%2Cb%3Ac.md,line=4,title=the-loop/x-evil::issue-1 · design: fine%0A::error file=README.md::forged%0D::add-mask::x %250A\n"
	if !strings.Contains(out, want) {
		t.Errorf("got:\n%s\nwant the line:\n%s", out, want)
	}
}

func TestAPathOutsideTheRepositoryIsNotAFileAnnotation(t *testing.T) {
	for _, p := range []string{"/etc/passwd", "../outside.md", "a/../../b"} {
		r := blockedAt("issue-1", "design", graph.Finding{Hook: "x-h", Severity: graph.SeverityError, Text: "t", Path: p, Line: 1})
		out, _ := githubOf(t, []*graph.StatusReport{r}, checkView{})
		if strings.Contains(out, "file=") || !strings.Contains(out, "::error title=the-loop/x-h::issue-1 · design: t ("+p+")") {
			t.Errorf("%s: got\n%s", p, out)
		}
	}
}

func TestOnlyReachedNodesAreAnnotated(t *testing.T) {
	r := &graph.StatusReport{WorkItem: "issue-1", CurrentNode: "a", Nodes: []graph.NodeReport{
		{Node: "a", Status: "wait", Reached: true, Findings: []graph.Finding{{Hook: "g", Node: "a", Severity: graph.SeverityNotice, Text: "waiting"}}},
		{Node: "b", Status: "block", Findings: []graph.Finding{{Hook: "v", Node: "b", Severity: graph.SeverityError, Text: "not written yet"}}},
	}}
	out, _ := githubOf(t, []*graph.StatusReport{r}, checkView{})
	if strings.Contains(out, "not written yet") || !strings.Contains(out, "::notice title=the-loop/g::issue-1 · a: waiting") {
		t.Errorf("got:\n%s", out)
	}
}

func TestNotesAndUnevaluatedItemsAreAnnotated(t *testing.T) {
	view := checkView{
		Notes:       []string{"this change edits the gate's own files"},
		Unevaluated: []policy.ItemFailure{{Item: "issue-9", Err: errors.New("corrupt state")}},
	}
	out, _ := githubOf(t, nil, view)
	for _, want := range []string{
		"::notice title=the-loop::this change edits the gate's own files\n",
		"::error title=the-loop::issue-9 could not be evaluated: corrupt state\n",
		"the-loop: 0/1 work items satisfied; 1 could not be evaluated\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("got:\n%s\nwant %q", out, want)
		}
	}
}

func TestMoreAnnotationsThanGitHubShowsAreSaid(t *testing.T) {
	var fs []graph.Finding
	for range 12 {
		fs = append(fs, graph.Finding{Hook: "v", Severity: graph.SeverityError, Text: "e"})
	}
	out, _ := githubOf(t, []*graph.StatusReport{blockedAt("issue-1", "design", fs...)}, checkView{})
	if !strings.Contains(out, "the-loop: 12 errors; GitHub shows the first 10 as annotations") {
		t.Errorf("got:\n%s", out)
	}
}

func TestTheStepSummaryStaysUnderGitHubsLimit(t *testing.T) {
	long := strings.Repeat("a finding worth reading | <b>not html</b> ", 50)
	var reports []*graph.StatusReport
	for i := range 2000 {
		// Each finding its own: the same one on several items is one row.
		reports = append(reports, blockedAt("issue-"+strings.Repeat("9", i%7+1), "design",
			graph.Finding{Hook: "v", Severity: graph.SeverityError, Text: fmt.Sprint(i, long), Path: "docs/x.md", Line: 1}))
	}
	summary := filepath.Join(t.TempDir(), "summary.md")
	githubOf(t, reports, checkView{GitHub: githubEnv{Summary: summary}})
	md, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	if len(md) >= 1<<20 {
		t.Errorf("summary is %d bytes; GitHub keeps at most 1 MiB a step", len(md))
	}
	if !bytes.Contains(md, []byte("more line(s) not shown")) {
		t.Error("a cut summary does not say so")
	}
	if bytes.Contains(md, []byte("<b>")) || bytes.Contains(md, []byte("reading | <")) {
		t.Error("finding text escaped the table cell or became HTML")
	}
}

func TestAStepSummaryThatCannotBeWrittenIsAWarningNotAFailure(t *testing.T) {
	_, stderr := githubOf(t, nil, checkView{GitHub: githubEnv{Summary: filepath.Join(t.TempDir(), "no", "such", "dir", "s.md")}})
	if !strings.Contains(stderr, "warning: could not write the step summary") {
		t.Errorf("stderr: %q", stderr)
	}
}

func TestARunThatCouldNotAnswerIsAnErrorAnnotationAndInTheSummary(t *testing.T) {
	env, summary := actionsEnv(t)
	stdout, stderr, code := runCLI(t, env, "check", "--changed", "--repo", demo, "--base=-x", "--format", "github")
	if code != 2 {
		t.Fatalf("exit %d, want 2: %s", code, stderr)
	}
	if !strings.HasPrefix(stdout, "::error title=the-loop::could not run: --base -x: ") {
		t.Errorf("stdout: %q", stdout)
	}
	md, _ := os.ReadFile(summary)
	if !bytes.Contains(md, []byte("❌ could not run: ")) {
		t.Errorf("summary: %q", md)
	}
}

func TestSummaryTextIsInert(t *testing.T) {
	for in, bad := range map[string]string{
		"~~struck~~":                   "~~",
		"see https://evil.example/x":   "https://",
		"ping @octocat about #1":       "@octocat",
		"www.evil.example":             "www.evil",
		"\x1b[31mred\x1b[0m":           "\x1b",
		"\u202eevil":                   "\u202e",
		"a | b":                        "a | b",
		"<img src=x onerror=alert(1)>": "<img",
	} {
		if got := mdText(in); strings.Contains(got, bad) {
			t.Errorf("%q: got %q, which still holds %q", in, got, bad)
		}
	}
}

// TestLinksNameFilesByTheirPathInTheRepository: a repository checked out
// below the workspace (actions/checkout's path:) is linked from its own
// root; a project in a folder of the repository keeps the folder.
func TestLinksNameFilesByTheirPathInTheRepository(t *testing.T) {
	ws := t.TempDir()
	for _, d := range []string{"checkout/.git", "checkout/project"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	getenv := func(k string) string { return map[string]string{"GITHUB_WORKSPACE": ws}[k] }
	for root, want := range map[string]string{"checkout": "", "checkout/project": "project"} {
		if got := githubEnvFrom(getenv, filepath.Join(ws, root)).Prefix; got != want {
			t.Errorf("repository at %s: prefix %q, want %q", root, got, want)
		}
	}
}
