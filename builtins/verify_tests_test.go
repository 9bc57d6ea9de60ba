package builtins

import (
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/the-loop/the-loop/graph"
)

func verifyCtx(t *testing.T, params map[string]any) *graph.Context {
	ctx := obCtx(graph.NoIntegration{}, &graph.Node{ID: "verification"}, t.TempDir())
	ctx.Boundary = graph.Exit
	ctx.Params = params
	return ctx
}

func needUnix(t *testing.T, tools ...string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("needs a Unix userland")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not on PATH", tool)
		}
	}
}

func TestVerifyTestsVerdicts(t *testing.T) {
	needUnix(t, "true", "false", "sleep", "sh", "test")
	cases := []struct {
		name      string
		params    map[string]any
		status    graph.Status
		retriable bool
		messages  []string // substrings, in order
	}{
		{"exit 0 passes", map[string]any{"command": "true"}, graph.StatusPass, true, nil},
		{"a list is the argument vector", map[string]any{"command": []any{"sh", "-c", "exit 0"}}, graph.StatusPass, true, nil},
		{"non-zero exit blocks, retriable", map[string]any{"command": "false"}, graph.StatusBlock, true, []string{"tests failed (false), exit 1"}},
		{"the tail of stdout follows the verdict", map[string]any{"command": []any{"sh", "-c", "echo one; echo; echo two; echo err >&2; exit 3"}},
			graph.StatusBlock, true, []string{"tests failed (sh -c echo one; echo; echo two; echo err >&2; exit 3), exit 3", "one", "two"}},
		{"stderr when stdout is empty", map[string]any{"command": "sh -c 'echo broken >&2; exit 2'"}, graph.StatusBlock, true, []string{"exit 2", "broken"}},
		{"a timeout blocks retriably, naming the limit", map[string]any{"command": "sleep 5", "timeoutSeconds": 1}, graph.StatusBlock, true, []string{"tests timed out after 1s: sleep 5"}},
		{"an unknown command blocks for good", map[string]any{"command": "no-such-test-runner-xyz --all"}, graph.StatusBlock, false, []string{"test command not found: no-such-test-runner-xyz"}},
		{"no command skips", map[string]any{}, graph.StatusSkip, true, []string{"no test command declared"}},
		{"an empty command skips", map[string]any{"command": "  "}, graph.StatusSkip, true, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := verifyTests{}.Run(verifyCtx(t, tc.params))
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != tc.status || r.Retriable != tc.retriable {
				t.Fatalf("got %s retriable=%v (%s), want %s retriable=%v", r.Status, r.Retriable, r.Render(), tc.status, tc.retriable)
			}
			if len(tc.messages) > len(r.Messages) {
				t.Fatalf("messages = %q, want %q", r.Render(), tc.messages)
			}
			for i, want := range tc.messages {
				if !strings.Contains(r.Messages[i].Text, want) {
					t.Errorf("message %d = %q, want it to contain %q", i, r.Messages[i].Text, want)
				}
			}
			if tc.status == graph.StatusPass && r.Data["command"] == nil {
				t.Error("a pass does not say which command ran")
			}
		})
	}
}

func TestVerifyTestsRunsInTheRepositoryRoot(t *testing.T) {
	needUnix(t, "test")
	ctx := verifyCtx(t, map[string]any{"command": "test -f marker.txt"})
	if r, _ := (verifyTests{}).Run(ctx); r.Status != graph.StatusBlock {
		t.Fatalf("status = %s before the marker exists, want block", r.Status)
	}
	obWriteFile(t, ctx.Checkout.Root(), "marker.txt", "")
	if r, _ := (verifyTests{}).Run(ctx); r.Status != graph.StatusPass {
		t.Fatalf("status = %s, want pass: the command did not run in the repository root", r.Status)
	}
}

func TestVerifyTestsTimeoutKillsTheWholeProcessGroup(t *testing.T) {
	needUnix(t, "sh", "sleep")
	// The grandchild holds the output pipe open; only a group kill ends it.
	ctx := verifyCtx(t, map[string]any{"command": []any{"sh", "-c", "sleep 30 & sleep 30"}, "timeoutSeconds": 0.5})
	start := time.Now()
	r, _ := verifyTests{}.Run(ctx)
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("took %v: the process group outlived the timeout", took)
	}
	if r.Status != graph.StatusBlock || !r.Retriable || !strings.Contains(r.Render(), "after 0.5s") {
		t.Errorf("got %s retriable=%v %q, want a retriable block naming 0.5s", r.Status, r.Retriable, r.Render())
	}
}

func TestVerifyTestsNeverRunsUnderCheck(t *testing.T) {
	needUnix(t, "touch")
	ctx := verifyCtx(t, map[string]any{"command": "touch ran"})
	ctx.ReadOnly = true
	r, _ := verifyTests{}.Run(ctx)
	if r.Status != graph.StatusSkip || !strings.Contains(r.Render(), "tests are not run under check") {
		t.Fatalf("got %s %q, want the check skip", r.Status, r.Render())
	}
	if snap := obSnapshotDir(t, ctx.Checkout.Root()); snap != "" {
		t.Errorf("the command ran under check: %s", snap)
	}
}

func TestVerifyTestsReportsOnlyTheLastTwentyLines(t *testing.T) {
	needUnix(t, "sh", "seq")
	r, _ := verifyTests{}.Run(verifyCtx(t, map[string]any{"command": "sh -c 'seq 1 50; exit 1'"}))
	if len(r.Messages) != 21 || r.Messages[1].Text != "31" || r.Messages[20].Text != "50" {
		t.Fatalf("messages = %q, want the verdict and lines 31..50", r.Render())
	}
	if r.Messages[1].Severity != graph.SeverityInfo {
		t.Errorf("tail severity = %s, want info", r.Messages[1].Severity)
	}
}

func TestPyShlexSplit(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		err  bool
	}{
		{"go test ./...", []string{"go", "test", "./..."}, false},
		{"  spaced \t out\n", []string{"spaced", "out"}, false},
		{`pytest -k 'slow and not flaky'`, []string{"pytest", "-k", "slow and not flaky"}, false},
		{`echo "a \"quoted\" \\ word" and\ more`, []string{"echo", `a "quoted" \ word`, "and more"}, false},
		{`echo "keep \n as is"`, []string{"echo", `keep \n as is`}, false},
		{`a"b"'c'd`, []string{"abcd"}, false},
		{`x "" ''`, []string{"x", "", ""}, false},
		{`echo $HOME | grep x # not a comment`, []string{"echo", "$HOME", "|", "grep", "x", "#", "not", "a", "comment"}, false},
		{`echo 'open`, nil, true},
		{`echo "open`, nil, true},
		{`trailing\`, nil, true},
		{"", nil, false},
	}
	for _, tc := range cases {
		got, err := pyShlexSplit(tc.in)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("pyShlexSplit(%q) = %q, %v; want %q (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestVerifyTailKeepsTheEnd(t *testing.T) {
	var tail verifyTail
	tail.Write([]byte(strings.Repeat("a", verifyOutputLimit)))
	tail.Write([]byte("end"))
	if s := tail.String(); len(s) != verifyOutputLimit || !strings.HasSuffix(s, "aend") {
		t.Errorf("tail kept %d bytes ending %q", len(s), s[len(s)-4:])
	}
}
