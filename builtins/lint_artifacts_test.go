package builtins

import (
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

func TestLintArtifactsPassesValidDiagrams(t *testing.T) {
	ctx := ctFixture(t, "issue-7", []string{"design.md"}, nil)
	ctWantStatus(t, ctRun(t, lintArtifacts{}, ctx), graph.StatusPass)

	ctx = ctCtx(t, []string{"design.md"}, nil)
	ctWrite(t, ctx, "design.md", "# D\n\n```mermaid\nflowchart LR\n  A[\"plain label\"] --> B\n```\n")
	ctWantStatus(t, ctRun(t, lintArtifacts{}, ctx), graph.StatusPass)
}

func TestLintArtifactsBlocksABacktickInANodeLabel(t *testing.T) {
	ctx := ctCtx(t, []string{"design.md"}, nil)
	ctWrite(t, ctx, "design.md", "# D\n\n```mermaid\nflowchart LR\n  A[\"`the-loop check` — pure\"]\n```\n")
	r := ctRun(t, lintArtifacts{}, ctx)
	ctWantStatus(t, r, graph.StatusBlock)
	m := r.Messages[0]
	if !strings.Contains(m.Text, "backtick") || m.Line != 5 || m.Path != ctSpecRel+"/design.md" {
		t.Errorf("got %+v", m)
	}
}

func TestLintArtifactsBlocksABlockWithoutADiagramType(t *testing.T) {
	ctx := ctCtx(t, []string{"design.md"}, nil)
	ctWrite(t, ctx, "design.md", "# D\n\n```mermaid\nA --> B\n```\n")
	r := ctRun(t, lintArtifacts{}, ctx)
	ctWantStatus(t, r, graph.StatusBlock)
	m := r.Messages[0]
	if m.Text != "mermaid block at line 3: unknown diagram type A" || m.Line != 4 {
		t.Errorf("got %+v", m)
	}
}

func TestLintArtifactsBlocksAnEmptyBlock(t *testing.T) {
	ctx := ctCtx(t, []string{"design.md"}, nil)
	ctWrite(t, ctx, "design.md", "# D\n\n```mermaid\n\n```\n")
	r := ctRun(t, lintArtifacts{}, ctx)
	ctWantStatus(t, r, graph.StatusBlock)
	if r.Messages[0].Text != "mermaid block at line 3 is empty" {
		t.Errorf("got %q", r.Messages[0].Text)
	}
}

func TestLintArtifactsReportsEveryBrokenDiagramAtOnce(t *testing.T) {
	ctx := ctCtx(t, []string{"design.md"}, nil)
	ctWrite(t, ctx, "design.md", "# D\n\n```mermaid\nflowchart LR\n  A[run (fast)] --> B\n```\n\n```mermaid\nsequenceDiagram\n  A->>B\n```\n")
	r := ctRun(t, lintArtifacts{}, ctx)
	ctWantStatus(t, r, graph.StatusBlock)
	if len(r.Messages) != 2 || r.Messages[0].Line != 5 || r.Messages[1].Line != 10 {
		t.Errorf("got %+v", r.Messages)
	}
}

func TestLintArtifactsReachesAnArtifactByItsAlternativeName(t *testing.T) {
	ctx := ctCtx(t, []string{ctPhaseOne}, nil)
	ctWrite(t, ctx, "bugfix.md", "# B\n\n```mermaid\nA --> B\n```\n")
	r := ctRun(t, lintArtifacts{}, ctx)
	ctWantStatus(t, r, graph.StatusBlock)
	if !strings.Contains(r.Messages[0].Text, "diagram type") {
		t.Errorf("got %q", r.Messages[0].Text)
	}
}

func TestLintArtifactsSkipsWhenNothingWasProduced(t *testing.T) {
	ctWantStatus(t, ctRun(t, lintArtifacts{}, ctCtx(t, []string{"design.md"}, nil)), graph.StatusSkip)
}

func TestLintArtifactsDiagramsFalseTurnsTheMermaidCheckOff(t *testing.T) {
	ctx := ctCtx(t, []string{"design.md"}, map[string]any{"diagrams": false})
	ctWrite(t, ctx, "design.md", "```mermaid\nA --> B\n```\n")
	ctWantStatus(t, ctRun(t, lintArtifacts{}, ctx), graph.StatusPass)
}

func TestLintArtifactsFlagsLongProseLinesOutsideFences(t *testing.T) {
	long := strings.Repeat("word ", 10)  // 50 characters with spaces
	url := strings.Repeat("x", 50)       // unbreakable
	fenced := "```\n" + long + "\n```\n" // code is exempt
	text := "# D\n" + long + "\n" + url + "\n" + fenced + strings.Repeat("é", 30) + " ok\n"
	ctx := ctCtx(t, []string{"design.md"}, map[string]any{"maxLineLength": 40})
	ctWrite(t, ctx, "design.md", text)
	r := ctRun(t, lintArtifacts{}, ctx)
	ctWantStatus(t, r, graph.StatusBlock)
	if len(r.Messages) != 1 || r.Messages[0].Text != "line 2 exceeds 40 characters" || r.Messages[0].Line != 2 {
		t.Errorf("got %+v", r.Messages)
	}
}

func TestLintArtifactsCheckParams(t *testing.T) {
	for _, p := range []map[string]any{{}, {"diagrams": false, "maxLineLength": 120}, {"maxLineLength": 80.0}} {
		if err := (lintArtifacts{}).CheckParams(p); err != nil {
			t.Errorf("%v: %v", p, err)
		}
	}
	for _, tc := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"maxLineLength": "80"}, "with.maxLineLength: got string, want a whole number"},
		{map[string]any{"maxLineLength": -1}, "with.maxLineLength: got integer, want a whole number"},
		{map[string]any{"diagrams": "no"}, "with.diagrams: got string, want a boolean"},
		{map[string]any{"maxLines": 3}, "unknown parameter; lint-artifacts accepts diagrams, maxLineLength"},
	} {
		if err := (lintArtifacts{}).CheckParams(tc.params); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.params, err, tc.want)
		}
	}
}

func TestLintFindingsPointAtTheLineTheyJudge(t *testing.T) {
	long := strings.Repeat("word ", 10)
	for _, tc := range []struct {
		name   string
		params map[string]any
		text   string
		want   string
		line   int
	}{
		{"a diagram fault after front matter", nil,
			"---\ntitle: D\nstatus: draft\n---\n# D\n\n```mermaid\nA --> B\n```\n",
			"mermaid block at line 7: unknown diagram type A", 8},
		{"a diagram fault without front matter", nil,
			"# D\n```mermaid\nflowchart LR\n  A --> B\n  C[run (fast)] --> D\n```\n",
			"mermaid block at line 2: ", 5},
		{"a fault the parser places on a later line", nil,
			"---\nstatus: draft\n---\n```mermaid\nflowchart LR\n  subgraph S\n  A --> B\n```\n",
			"mermaid block at line 4: subgraph is never closed with end", 6},
		{"a backtick label, CRLF", nil,
			"---\r\nstatus: draft\r\n---\r\n# D\r\n```mermaid\r\nflowchart LR\r\n  A[\"`x` y\"]\r\n```\r\n",
			"mermaid block at line 5: a backtick inside a node label breaks rendering; use plain text", 7},
		{"an empty block: its fence", nil,
			"---\nstatus: draft\n---\n\n```mermaid\n\n```\n",
			"mermaid block at line 5 is empty", 5},
		{"an empty block after malformed front matter", nil,
			"---\nstatus: [\n---\n```mermaid\n```\n",
			"mermaid block at line 4 is empty", 4},
		{"a long line after front matter", map[string]any{"diagrams": false, "maxLineLength": 40},
			"---\nstatus: draft\n---\n# D\n" + long + "\n",
			"line 5 exceeds 40 characters", 5},
		{"a long line, CRLF", map[string]any{"diagrams": false, "maxLineLength": 40},
			"---\r\nstatus: draft\r\n---\r\n" + long + "\r\n",
			"line 4 exceeds 40 characters", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctCtx(t, []string{"design.md"}, tc.params)
			ctWrite(t, ctx, "design.md", tc.text)
			r := ctRun(t, lintArtifacts{}, ctx)
			ctWantStatus(t, r, graph.StatusBlock)
			if len(r.Messages) != 1 {
				t.Fatalf("want one finding, got %s", ctTexts(r))
			}
			if m := r.Messages[0]; !strings.HasPrefix(m.Text, tc.want) || m.Line != tc.line || m.Column != 0 {
				t.Errorf("got %q at %d:%d, want %q at %d", m.Text, m.Line, m.Column, tc.want, tc.line)
			}
		})
	}
}
