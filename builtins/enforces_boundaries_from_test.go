package builtins

import (
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

func ctBoundaryCtx(t *testing.T, upstream any) *graph.Context {
	return ctCtx(t, []string{"design.md"}, map[string]any{
		"upstream": upstream,
		"markers":  []any{"trust boundary", "abuse case"},
	})
}

func TestEnforcesBoundariesPassesWhenEveryRaisedBoundaryIsAnswered(t *testing.T) {
	ctx := ctFixture(t, "issue-7", []string{"design.md"}, map[string]any{
		"upstream": ctPhaseOne, "markers": []any{"trust boundary", "abuse case"},
	})
	ctWantStatus(t, ctRun(t, enforcesBoundaries{}, ctx), graph.StatusPass)
}

func TestEnforcesBoundariesReadsABugfixUpstream(t *testing.T) {
	ctx := ctBoundaryCtx(t, ctPhaseOne)
	ctWrite(t, ctx, "bugfix.md", "# B\n\nA Trust Boundary here.\n")
	ctWrite(t, ctx, "design.md", "# D\n\nThe trust boundary is enforced.\n")
	ctWantStatus(t, ctRun(t, enforcesBoundaries{}, ctx), graph.StatusPass)
}

func TestEnforcesBoundariesBlocksOnADroppedBoundary(t *testing.T) {
	ctx := ctBoundaryCtx(t, ctPhaseOne)
	ctWrite(t, ctx, "bugfix.md", "# B\n\nA trust boundary, and an abuse case.\n")
	ctWrite(t, ctx, "design.md", "# D\n\nOnly the trust boundary is answered.\n")
	r := ctRun(t, enforcesBoundaries{}, ctx)
	ctWantStatus(t, r, graph.StatusBlock)
	if len(r.Messages) != 1 || r.Messages[0].Text != "boundary named upstream is unanswered here: abuse case" || r.Messages[0].Path != ctSpecRel+"/design.md" || r.Messages[0].Line != 0 {
		t.Errorf("got %+v", r.Messages)
	}
}

func TestEnforcesBoundariesJoinsEveryPresentUpstream(t *testing.T) {
	ctx := ctBoundaryCtx(t, ctPhaseOne)
	ctWrite(t, ctx, "requirements.md", "# R\n\nAn abuse case.\n")
	ctWrite(t, ctx, "bugfix.md", "# B\n\nnothing\n")
	ctWrite(t, ctx, "design.md", "# D\n\nNothing relevant.\n")
	ctWantStatus(t, ctRun(t, enforcesBoundaries{}, ctx), graph.StatusBlock)
}

func TestEnforcesBoundariesIgnoresMarkersInFrontMatter(t *testing.T) {
	ctx := ctBoundaryCtx(t, "requirements.md")
	ctWrite(t, ctx, "requirements.md", "---\ntags: [abuse case]\n---\n# R\n")
	ctWrite(t, ctx, "design.md", "# D\n")
	ctWantStatus(t, ctRun(t, enforcesBoundaries{}, ctx), graph.StatusPass)
}

func TestEnforcesBoundariesSkipsWithoutAnUpstream(t *testing.T) {
	ctx := ctBoundaryCtx(t, ctPhaseOne)
	ctWrite(t, ctx, "design.md", "# D\n\nNothing.\n")
	ctWantStatus(t, ctRun(t, enforcesBoundaries{}, ctx), graph.StatusSkip)

	ctx = ctCtx(t, []string{"design.md"}, nil)
	r := ctRun(t, enforcesBoundaries{}, ctx)
	ctWantStatus(t, r, graph.StatusSkip)
	if r.Messages[0].Text != "no upstream artifact declared" {
		t.Errorf("got %q", r.Messages[0].Text)
	}
}

func TestEnforcesBoundariesSkipsANodeThatProducesNothing(t *testing.T) {
	ctx := ctBoundaryCtx(t, ctPhaseOne)
	ctx.Node.Produces = nil
	ctWrite(t, ctx, "bugfix.md", "A trust boundary.\n")
	ctWantStatus(t, ctRun(t, enforcesBoundaries{}, ctx), graph.StatusSkip)
}

func TestEnforcesBoundariesBlocksWhenTheDeclaredDownstreamIsMissing(t *testing.T) {
	ctx := ctBoundaryCtx(t, ctPhaseOne)
	ctWrite(t, ctx, "bugfix.md", "# B\n\nA trust boundary.\n")
	r := ctRun(t, enforcesBoundaries{}, ctx)
	ctWantStatus(t, r, graph.StatusBlock)
	if r.Messages[0].Path != ctSpecRel+"/design.md" || r.Messages[0].Line != 0 {
		t.Errorf("path %q", r.Messages[0].Path)
	}
}

func TestEnforcesBoundariesCheckParams(t *testing.T) {
	if err := (enforcesBoundaries{}).CheckParams(map[string]any{"upstream": ctPhaseOne, "markers": []any{"a"}}); err != nil {
		t.Error(err)
	}
	for _, tc := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"markers": "trust boundary"}, "with.markers: got string, want a list of marker phrases"},
		{map[string]any{"upstream": "a.md|"}, "with.upstream: entry \"a.md|\" has an empty alternative"},
		{map[string]any{"downstream": "x"}, "with.downstream: unknown parameter; enforces-boundaries-from accepts markers, upstream"},
	} {
		if err := (enforcesBoundaries{}).CheckParams(tc.params); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.params, err, tc.want)
		}
	}
}
