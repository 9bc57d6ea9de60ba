package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/internal/corpus"
	"github.com/the-loop/the-loop/policy"
)

// legacyCheckRun is CheckCmd.Run as it was before reports streamed: every
// report collected by Engine.Check, then written whole by the legacy
// formatters.
func legacyCheckRun(c *CheckCmd, g *Globals, out *Output) error {
	if err := c.validate(); err != nil {
		return err
	}
	opts := policy.Options{RulesFrom: c.RulesFrom, Base: c.Base, AllFindings: c.AllFindings}
	e, sel, err := g.engineWith(out, c.LoopFlags, "", opts)
	if err != nil {
		return err
	}
	if _, err := e.Changes(); err != nil {
		return err
	}
	items, _, err := c.items(e, nil, out)
	if err != nil {
		return err
	}
	reports, err := e.Check(items, c.Recompute, sel)
	var failed policy.ItemsError
	switch {
	case errors.As(err, &failed) && (c.All || c.Changed):
	case err != nil:
		return err
	}
	view := reportView(e, c.FailOn)
	view.All, view.Unevaluated, view.Verbose = c.All || c.Changed, failed, g.Verbose
	if err := legacyWriteReports(out, c.Format, reports, view); err != nil {
		return err
	}
	for _, f := range failed {
		fmt.Fprintf(out.Stderr, "the-loop: %s\n", visible(f.Err.Error()))
	}
	if len(failed) > 0 {
		return exitCode(2)
	}
	for _, r := range reports {
		if r.Fails(c.FailOn) {
			return exitCode(1)
		}
	}
	return nil
}

// legacyCheck is the whole program around legacyCheckRun, as run wraps a
// verb: the engine's last notes, and the error said in the format asked.
func legacyCheck(g Globals, c CheckCmd, stdout, stderr io.Writer) int {
	out := newOutput(stdout, stderr)
	err := flagged(legacyCheckRun(&c, &g, out))
	if g.opened != nil {
		printNotes(out, g.opened.Notes())
	}
	return reportAs(err, out, c.Format)
}

// checkRun is one check, its output and what it appended to the step
// summary.
type checkRun struct {
	stdout, stderr, summary string
	code                    int
}

// checkBothWays runs `the-loop check` with args through the CLI, and the
// legacy path with the same flags, each with a step summary of its own,
// and fails unless every byte is the same.
func checkBothWays(t *testing.T, root string, g Globals, c CheckCmd, args ...string) int {
	t.Helper()
	dir := t.TempDir()
	env := func(name string) map[string]string {
		return map[string]string{"GITHUB_STEP_SUMMARY": filepath.Join(dir, name), "GITHUB_SERVER_URL": "https://github.example",
			"GITHUB_REPOSITORY": "acme/app", "GITHUB_SHA": "0123abc"}
	}
	summary := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		return string(b)
	}
	var streamed, whole checkRun
	streamed.stdout, streamed.stderr, streamed.code = runCLI(t, env("streamed.md"), append([]string{"check", "--repo", root}, args...)...)
	streamed.summary = summary("streamed.md")

	runCLI(t, env("whole.md"), "--version") // the same environment, set
	var stdout, stderr bytes.Buffer
	g.Repo = root
	whole.code = legacyCheck(g, c, &stdout, &stderr)
	whole.stdout, whole.stderr, whole.summary = stdout.String(), stderr.String(), summary("whole.md")
	// JUnit's times are measured, each run its own.
	streamed.stdout, whole.stdout = junitTimeless(streamed.stdout), junitTimeless(whole.stdout)

	if streamed != whole {
		t.Errorf("check %s differs from the whole run:\n%s", strings.Join(args, " "), describeDiff(streamed, whole))
	}
	return streamed.code
}

func describeDiff(a, b checkRun) string {
	var s strings.Builder
	fmt.Fprintf(&s, "exit %d, want %d\n", a.code, b.code)
	for _, p := range []struct{ name, got, want string }{{"stdout", a.stdout, b.stdout}, {"stderr", a.stderr, b.stderr}, {"summary", a.summary, b.summary}} {
		if p.got == p.want {
			continue
		}
		i := 0
		for i < len(p.got) && i < len(p.want) && p.got[i] == p.want[i] {
			i++
		}
		from := max(0, i-200)
		fmt.Fprintf(&s, "%s first differs at byte %d of %d/%d:\n--- got\n%s\n--- want\n%s\n", p.name, i, len(p.got), len(p.want),
			p.got[from:min(len(p.got), i+200)], p.want[from:min(len(p.want), i+200)])
	}
	return s.String()
}

// TestCheckWritesWhatTheWholeRunWrote runs check over the demo, a
// generated repository of the original's work items (one of them with a
// state that cannot be read) and those work items under their own names
// with the Python tool's own states, in every format and with the flags
// that change what is written, and compares every byte of stdout, stderr
// and the step summary, and the exit code, with the run that collected
// every report before writing.
func TestCheckWritesWhatTheWholeRunWrote(t *testing.T) {
	generated := corpusRepo(t, 2*109+11)
	broken := corpusRepo(t, 40)
	if err := os.WriteFile(filepath.Join(broken, "docs", "specs", "issue-7", "graph-state.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	original := t.TempDir()
	if err := corpus.Shared(t).WriteOriginal(original); err != nil {
		t.Fatal(err)
	}
	for _, format := range reportFormatNames() {
		c := CheckCmd{All: true, Format: format, FailOn: graph.FailOnUnmet, Replies: "none"}
		for name, root := range map[string]string{"demo": demo, "generated": generated, "original": original, "broken": broken} {
			t.Run(name+"/"+format, func(t *testing.T) {
				code := checkBothWays(t, root, Globals{}, c, "--all", "--format", format)
				if want := map[bool]int{true: 2, false: 1}[name == "broken"]; code != want {
					t.Errorf("exit %d, want %d", code, want)
				}
			})
		}
		t.Run("flags/"+format, func(t *testing.T) {
			block := c
			block.FailOn = graph.FailOnBlock
			checkBothWays(t, generated, Globals{}, block, "--all", "--format", format, "--fail-on", "block")
			recompute := c
			recompute.Recompute = true
			checkBothWays(t, generated, Globals{}, recompute, "--all", "--format", format, "--recompute")
			checkBothWays(t, demo, Globals{Verbose: true}, c, "--all", "--format", format, "-v")
			all := c
			all.AllFindings = true
			checkBothWays(t, demo, Globals{}, all, "--all", "--format", format, "--all-findings")
			one := c
			one.All, one.Item = false, "issue-239"
			checkBothWays(t, original, Globals{}, one, "issue-239", "--format", format)
			one.Item = "issue-7"
			checkBothWays(t, broken, Globals{}, one, "issue-7", "--format", format)
		})
	}
}

// manyReports are reports enough to take every format past its limits:
// the step summary's mebibyte and SARIF's results in a run.
func manyReports(n int) []*graph.StatusReport {
	var reports []*graph.StatusReport
	long := strings.Repeat("a finding long enough to fill a summary quickly ", 4)
	for i := range n {
		item := fmt.Sprintf("issue-%d", i+1)
		var fs []graph.Finding
		for j := range 6 {
			sev := graph.SeverityError
			if j%3 == 1 {
				sev = graph.SeverityWarning
			}
			fs = append(fs, graph.Finding{Hook: fmt.Sprintf("hook-%d", j%4), Severity: sev, Text: fmt.Sprintf("%s %d", long, j),
				Path: fmt.Sprintf("docs/specs/%s/design.md", item), Line: j + 1, Column: j % 2})
		}
		r := blockedAt(item, "design", fs...)
		switch i % 3 {
		case 1:
			r.OK = true
			r.Nodes[0].Status = "pass"
		case 2:
			r.Nodes[0].Status = "wait"
		}
		reports = append(reports, r)
	}
	return reports
}

// TestStreamingFormatsWriteWhatWholeOnesWrote compares the formats on
// reports past every format's limits, with notes and items that could not
// be evaluated, for every view.
func TestStreamingFormatsWriteWhatWholeOnesWrote(t *testing.T) {
	t.Parallel() // slow under -race, and shares nothing with the other slow ones
	reports := manyReports(4500)
	failed := policy.ItemsError{{Item: "issue-x", Err: errors.New("a state that cannot be read")}}
	views := []checkView{
		{All: true, FailOn: graph.FailOnUnmet},
		{All: true, FailOn: graph.FailOnBlock, Notes: []string{"a note", "another\nnote"}, Unevaluated: failed},
		{All: false, FailOn: graph.FailOnUnmet},
		{All: false, FailOn: graph.FailOnUnmet, Unevaluated: failed},
		{All: true, Status: true, FailOn: graph.FailOnUnmet, Verbose: true},
	}
	for _, format := range reportFormatNames() {
		for i, view := range views {
			sets := [][]*graph.StatusReport{reports, reports[:1], nil}
			if raceEnabled && i >= 2 {
				// The thousands of reports are there to overflow what a
				// format caps (GitHub's step summary and annotations),
				// which the first two views meet; under the race detector
				// the others are held to one report and none.
				sets = sets[1:]
			}
			for _, rs := range sets {
				dir := t.TempDir()
				view.GitHub = githubEnv{Blob: "https://github.example/acme/app/blob/0123abc", Prefix: "sub"}
				var got, want bytes.Buffer
				view.GitHub.Summary = filepath.Join(dir, "streamed.md")
				if err := writeReports(newOutput(&got, &got), format, rs, view); err != nil {
					t.Fatal(err)
				}
				view.GitHub.Summary = filepath.Join(dir, "whole.md")
				if err := legacyWriteReports(newOutput(&want, &want), format, rs, view); err != nil {
					t.Fatal(err)
				}
				gotSummary, _ := os.ReadFile(filepath.Join(dir, "streamed.md"))
				wantSummary, _ := os.ReadFile(filepath.Join(dir, "whole.md"))
				a := checkRun{stdout: got.String(), summary: string(gotSummary)}
				b := checkRun{stdout: want.String(), summary: string(wantSummary)}
				if a != b {
					t.Errorf("%s, view %d, %d reports:\n%s", format, i, len(rs), describeDiff(a, b))
				}
			}
		}
	}
}
