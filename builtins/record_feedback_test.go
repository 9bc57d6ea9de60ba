package builtins

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/the-loop/the-loop/graph"
)

func ctFixClock(t *testing.T) {
	old := now
	now = func() time.Time { return time.Date(2026, 3, 4, 23, 30, 0, 0, time.FixedZone("x", -5*3600)) }
	t.Cleanup(func() { now = old })
}

// ctReviewed runs classify-feedback then record-feedback into into, as the
// shipped chain does, and returns record-feedback's result.
func ctReviewed(t *testing.T, ctx *graph.Context, into string) graph.Result {
	t.Helper()
	ctx.Results = []graph.Result{ctRun(t, classifyFeedback{}, ctx)}
	ctx.Params = map[string]any{"into": into}
	return ctRun(t, recordFeedback{}, ctx)
}

func ctRead(t *testing.T, ctx *graph.Context, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(itemDir(ctx), name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRecordFeedbackAppendsTheReviewUnderReviewComments(t *testing.T) {
	ctFixClock(t)
	ctx := ctGate(t, []string{"owner", "second"}, "owner", "approved, but tighten the nit\n", "second", "lgtm")
	ctWrite(t, ctx, "design.md", "---\nstatus: approved\n---\n\n# D\n\n")
	r := ctReviewed(t, ctx, "design.md")
	ctWantStatus(t, r, graph.StatusPass)
	if r.Data["recorded"] != 2 || r.Data["artifact"] != ctSpecRel+"/design.md" {
		t.Errorf("data %v", r.Data)
	}
	want := "---\nstatus: approved\n---\n\n# D\n\n## Review comments\n\n" +
		"### 2026-03-05 — approved-with-comments\n\n" +
		"**@owner** wrote:\n\napproved, but tighten the nit\n\n" +
		"**@second** wrote:\n\nlgtm\n"
	if got := ctRead(t, ctx, "design.md"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestRecordFeedbackAddsToAnExistingSection(t *testing.T) {
	ctFixClock(t)
	ctx := ctGate(t, []string{"owner"}, "@owner", "approved")
	ctWrite(t, ctx, "design.md", "# D\n\n## Review comments\n\n### 2026-01-01 — changes-requested\n\n**@owner** wrote:\n\nno\n")
	ctWantStatus(t, ctReviewed(t, ctx, "design.md"), graph.StatusPass)
	got := ctRead(t, ctx, "design.md")
	if strings.Count(got, "## Review comments") != 1 || !strings.HasSuffix(got, "no\n\n### 2026-03-05 — approved\n\n**@owner** wrote:\n\napproved\n") {
		t.Errorf("got\n%s", got)
	}
}

var ctEmphasisOnly = regexp.MustCompile(`^(\*\*|__|\*|_)\S.*(\*\*|__|\*|_)$`)

func TestRecordFeedbackNeverWritesEmphasisAloneOnALine(t *testing.T) {
	ctFixClock(t)
	ctx := ctGate(t, []string{"owner", "second"}, "owner", "approved", "second", "   ")
	ctWrite(t, ctx, "design.md", "# D\n")
	ctWantStatus(t, ctReviewed(t, ctx, "design.md"), graph.StatusPass)
	got := ctRead(t, ctx, "design.md")
	if !strings.Contains(got, "**@second** left no comment text.") || strings.Contains(got, "\n\n\n") {
		t.Errorf("got\n%s", got)
	}
	for _, line := range strings.Split(got, "\n") {
		if ctEmphasisOnly.MatchString(strings.TrimSpace(line)) {
			t.Errorf("emphasis-only line %q", line)
		}
	}
}

func TestRecordFeedbackWritesNothingUnderReadOnlyEvaluation(t *testing.T) {
	ctx := ctGate(t, []string{"owner"}, "owner", "approved")
	ctWrite(t, ctx, "design.md", "# D\n")
	ctx.ReadOnly = true
	r := ctReviewed(t, ctx, "design.md")
	ctWantStatus(t, r, graph.StatusSkip)
	if r.Messages[0].Text != "read-only evaluation" || ctRead(t, ctx, "design.md") != "# D\n" {
		t.Errorf("got %q", r.Messages[0].Text)
	}
}

func TestRecordFeedbackSkipsWhenThereIsNothingToRecordOrNowhereToRecordIt(t *testing.T) {
	ctx := ctGate(t, []string{"owner"}, "owner", "approved")
	r := ctReviewed(t, ctx, "design.md")
	ctWantStatus(t, r, graph.StatusSkip)
	if r.Messages[0].Text != "design.md does not exist" {
		t.Errorf("got %q", r.Messages[0].Text)
	}

	ctWrite(t, ctx, "design.md", "# D\n")
	ctx.Results = nil
	r = ctRun(t, recordFeedback{}, ctx)
	ctWantStatus(t, r, graph.StatusSkip)
	if r.Messages[0].Text != "no feedback to record" {
		t.Errorf("got %q", r.Messages[0].Text)
	}

	ctx.Params = map[string]any{}
	ctWantStatus(t, ctRun(t, recordFeedback{}, ctx), graph.StatusSkip)
}

func TestRecordFeedbackReadsCommentsDecodedFromJSON(t *testing.T) {
	ctFixClock(t)
	ctx := ctCtx(t, nil, map[string]any{"into": "design.md"})
	ctWrite(t, ctx, "design.md", "# D\n")
	ctx.Results = []graph.Result{{
		Status: graph.StatusPass, Hook: classifyFeedbackName,
		Data: map[string]any{"outcome": "approved", "comments": []any{map[string]any{"author": "owner", "body": "ok"}}},
	}}
	ctWantStatus(t, ctRun(t, recordFeedback{}, ctx), graph.StatusPass)
	if !strings.Contains(ctRead(t, ctx, "design.md"), "**@owner** wrote:\n\nok\n") {
		t.Error("comment not recorded")
	}
}

func TestRecordFeedbackReplacesTheFileAtomically(t *testing.T) {
	ctFixClock(t)
	ctx := ctGate(t, []string{"owner"}, "owner", "approved")
	ctWrite(t, ctx, "design.md", "# D\n")
	p := filepath.Join(itemDir(ctx), "design.md")
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	ctWantStatus(t, ctReviewed(t, ctx, "design.md"), graph.StatusPass)
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v", fi.Mode(), err)
	}
	entries, _ := os.ReadDir(itemDir(ctx))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestRecordFeedbackWritesToThePresentAlternative(t *testing.T) {
	ctFixClock(t)
	ctx := ctGate(t, []string{"owner"}, "owner", "approved")
	ctWrite(t, ctx, "bugfix.md", "# B\n")
	ctWantStatus(t, ctReviewed(t, ctx, ctPhaseOne), graph.StatusPass)
	if !strings.Contains(ctRead(t, ctx, "bugfix.md"), "## Review comments") {
		t.Error("not recorded in bugfix.md")
	}
}

func TestRecordFeedbackRefusesATargetOutsideTheSpecFolder(t *testing.T) {
	for _, into := range []string{"../outside.md", "/etc/passwd", "a/../../b.md", "..", `a\b.md`} {
		err := (recordFeedback{}).CheckParams(map[string]any{"into": into})
		if err == nil || !strings.Contains(err.Error(), "want a file inside the spec folder") {
			t.Errorf("%q: got %v", into, err)
		}
		ctx := ctGate(t, []string{"owner"}, "owner", "approved")
		r := ctReviewed(t, ctx, into)
		ctWantStatus(t, r, graph.StatusBlock)
	}
}

func TestRecordFeedbackCheckParams(t *testing.T) {
	for _, p := range []map[string]any{{"into": "design.md"}, {"into": "notes/design.md"}, {"into": ctPhaseOne}} {
		if err := (recordFeedback{}).CheckParams(p); err != nil {
			t.Errorf("%v: %v", p, err)
		}
	}
	for _, tc := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{}, "with.into: missing, want the artifact file name"},
		{map[string]any{"into": []any{"a.md"}}, "with.into: got a list, want the artifact file name"},
		{map[string]any{"into": "design.md", "section": "x"}, "with.section: unknown parameter; record-feedback accepts into"},
	} {
		if err := (recordFeedback{}).CheckParams(tc.params); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.params, err, tc.want)
		}
	}
}

func TestRecordFeedbackNeverWritesThroughALinkedFolder(t *testing.T) {
	ctx := ctGate(t, []string{"owner"}, "owner", "approved")
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "design.md"), []byte("# D\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(itemDir(ctx), "notes")); err != nil {
		t.Skip("symbolic links unavailable:", err)
	}
	r := ctReviewed(t, ctx, "notes/design.md")
	ctWantStatus(t, r, graph.StatusBlock)
	if b, _ := os.ReadFile(filepath.Join(outside, "design.md")); string(b) != "# D\n" {
		t.Errorf("the file outside the spec folder was changed: %q", b)
	}
}

func TestRecordFeedbackRefusesAFileLinkedOutOfTheCheckout(t *testing.T) {
	ctFixClock(t)
	ctx := ctGate(t, []string{"owner"}, "owner", "approved")
	outside := filepath.Join(t.TempDir(), "design.md")
	if err := os.WriteFile(outside, []byte("# D\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(itemDir(ctx), "design.md")); err != nil {
		t.Skip("symbolic links unavailable:", err)
	}
	r := ctReviewed(t, ctx, "design.md")
	ctWantStatus(t, r, graph.StatusBlock)
	if !strings.Contains(ctTexts(r), "design.md leads outside the checkout") {
		t.Errorf("the block does not say why: %s", ctTexts(r))
	}
	if b, _ := os.ReadFile(outside); string(b) != "# D\n" {
		t.Errorf("the link's target was changed: %q", b)
	}
}

func TestAReviewWithoutAnOutcomeIsRecordedAsReviewed(t *testing.T) {
	comments := []graph.Comment{{Author: "ana", Body: "looks fine"}}
	// A result as decoded from a state written without status or outcome.
	results := []graph.Result{{Hook: classifyFeedbackName, Data: map[string]any{"comments": comments}}}
	outcome, got := fbPriorReview(results)
	if outcome != "reviewed" || len(got) != 1 {
		t.Errorf("fbPriorReview = %q, %v; want \"reviewed\" and the one comment", outcome, got)
	}
}
