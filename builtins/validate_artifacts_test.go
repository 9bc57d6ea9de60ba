package builtins

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/repo"
)

// ---- helpers shared by the content hook tests ------------------------------

const ctSpecRel = "docs/specs/issue-1"

// ctCtx is a hook context for work item issue-1 of a fresh repository, at
// node "design" producing produces.
func ctCtx(t *testing.T, produces []string, params map[string]any) *graph.Context {
	t.Helper()
	root := t.TempDir()
	spec := filepath.Join(root, filepath.FromSlash(ctSpecRel))
	if err := os.MkdirAll(spec, 0o755); err != nil {
		t.Fatal(err)
	}
	if params == nil {
		params = map[string]any{}
	}
	co, err := repo.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { co.Close() })
	return &graph.Context{
		WorkItem:         graph.WorkItem{Ref: "github:o/r#1", ID: "issue-1", Dir: ctSpecRel},
		Node:             &graph.Node{ID: "design", Produces: produces},
		Boundary:         graph.Exit,
		Checkout:         co,
		Files:            graph.DirectFiles(co),
		Params:           params,
		SkippedArtifacts: map[string]bool{},
		Decisions:        map[string]any{},
	}
}

// ctFixture is ctCtx with the spec folder filled from
// testdata/content/<name>.
func ctFixture(t *testing.T, name string, produces []string, params map[string]any) *graph.Context {
	t.Helper()
	ctx := ctCtx(t, produces, params)
	if err := os.CopyFS(itemDir(ctx), os.DirFS(filepath.Join("testdata", "content", name))); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// ctWrite writes a file into the context's spec folder.
func ctWrite(t *testing.T, ctx *graph.Context, name, text string) {
	t.Helper()
	p := filepath.Join(itemDir(ctx), filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ctRun runs hook and fails the test on a returned error.
func ctRun(t *testing.T, hook graph.Hook, ctx *graph.Context) graph.Result {
	t.Helper()
	r, err := hook.Run(ctx)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return r
}

func ctTexts(r graph.Result) string {
	texts := make([]string, len(r.Messages))
	for i, m := range r.Messages {
		texts[i] = m.Text
	}
	return strings.Join(texts, " | ")
}

func ctWantStatus(t *testing.T, r graph.Result, want graph.Status) {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status %s, want %s; messages: %s", r.Status, want, ctTexts(r))
	}
}

// ---- validate-artifacts ----------------------------------------------------

const ctPhaseOne = "requirements.md|bugfix.md"

const ctApprovedPhaseOne = "---\nstatus: approved\n---\n\n# B\n\n## Requirements\n\nreal\n\n## Security considerations\n\nreal\n"

var ctPhaseOneParams = map[string]any{
	"locked":   true,
	"sections": []any{"Requirements", "Security considerations"},
}

func TestValidateArtifactsBlocksOnAMissingArtifactNamingItsPath(t *testing.T) {
	ctx := ctCtx(t, []string{"design.md"}, nil)
	r := ctRun(t, validateArtifacts{}, ctx)
	ctWantStatus(t, r, graph.StatusBlock)
	if len(r.Messages) != 1 {
		t.Fatalf("want one message, got %s", ctTexts(r))
	}
	m := r.Messages[0]
	if m.Text != "required artifact is missing" || m.Path != ctSpecRel+"/design.md" || m.Severity != graph.SeverityError {
		t.Errorf("got %+v", m)
	}
	if !r.Retriable {
		t.Error("a missing artifact is the agent's to write: the block must be retriable")
	}
}

func TestValidateArtifactsBlocksOnAnUnlockedArtifactNamingItsStatus(t *testing.T) {
	for _, tc := range []struct{ front, want string }{
		{"---\nstatus: draft\n---\n", "status: draft"},
		{"---\ntitle: x\n---\n", "status: (unset)"},
		{"", "status: (unset)"},
		{"---\nstatus: Approved\n---\n", "status: Approved"},
	} {
		ctx := ctCtx(t, []string{"design.md"}, map[string]any{"locked": true})
		ctWrite(t, ctx, "design.md", tc.front+"\n# D\n")
		r := ctRun(t, validateArtifacts{}, ctx)
		ctWantStatus(t, r, graph.StatusBlock)
		if !strings.Contains(r.Messages[0].Text, tc.want) {
			t.Errorf("front %q: got %q, want it to mention %q", tc.front, r.Messages[0].Text, tc.want)
		}
	}
}

func TestValidateArtifactsReportsEveryUnmetRequirementInOneBlock(t *testing.T) {
	ctx := ctCtx(t, []string{"design.md"}, map[string]any{
		"locked": true, "sections": []any{"Architecture", "Security design"}, "checkmarks": "complete",
	})
	ctWrite(t, ctx, "design.md", "---\nstatus: draft\n---\n\n# D\n\n- [ ] open\n")
	r := ctRun(t, validateArtifacts{}, ctx)
	ctWantStatus(t, r, graph.StatusBlock)
	texts := ctTexts(r)
	for _, want := range []string{"status: draft", "missing: Architecture", "missing: Security design", "1 task(s) still unticked"} {
		if !strings.Contains(texts, want) {
			t.Errorf("missing %q in %s", want, texts)
		}
	}
	if len(r.Messages) != 4 {
		t.Errorf("want 4 findings in one result, got %d", len(r.Messages))
	}
	for _, m := range r.Messages {
		if m.Path != ctSpecRel+"/design.md" {
			t.Errorf("message %q has path %q", m.Text, m.Path)
		}
	}
}

func TestValidateArtifactsBlocksOnAnEmptySection(t *testing.T) {
	ctx := ctCtx(t, []string{"design.md"}, map[string]any{"sections": []any{"Security design"}})
	ctWrite(t, ctx, "design.md", "# D\n\n## Security design\n\n## Next\n\nbody\n")
	r := ctRun(t, validateArtifacts{}, ctx)
	ctWantStatus(t, r, graph.StatusBlock)
	if r.Messages[0].Text != "required section is empty: Security design" {
		t.Errorf("got %q", r.Messages[0].Text)
	}
}

func TestValidateArtifactsSectionOwnsItsSubsections(t *testing.T) {
	ctx := ctCtx(t, []string{"requirements.md"}, map[string]any{"sections": []any{"Requirements"}})
	ctWrite(t, ctx, "requirements.md", "## Requirements\n\n### Requirement 1\n\nbody\n")
	ctWantStatus(t, ctRun(t, validateArtifacts{}, ctx), graph.StatusPass)
}

func TestValidateArtifactsIgnoresHeadingsInsideFences(t *testing.T) {
	ctx := ctCtx(t, []string{"design.md"}, map[string]any{"sections": []any{"Review comments"}})
	ctWrite(t, ctx, "design.md", "# D\n\n```markdown\n## Review comments\n\nexample\n```\n")
	r := ctRun(t, validateArtifacts{}, ctx)
	ctWantStatus(t, r, graph.StatusBlock)
	if r.Messages[0].Text != "required section is missing: Review comments" {
		t.Errorf("got %q", r.Messages[0].Text)
	}
}

func TestValidateArtifactsCountsUntickedTasks(t *testing.T) {
	ctx := ctCtx(t, []string{"tasks.md"}, map[string]any{"checkmarks": "complete"})
	ctWrite(t, ctx, "tasks.md", "# T\n\n- [x] one\n- [ ] two\n- [ ] three\n")
	r := ctRun(t, validateArtifacts{}, ctx)
	ctWantStatus(t, r, graph.StatusBlock)
	if r.Messages[0].Text != "2 task(s) still unticked" {
		t.Errorf("got %q", r.Messages[0].Text)
	}
}

func TestValidateArtifactsPassesASatisfiedArtifactAndNamesIt(t *testing.T) {
	ctx := ctFixture(t, "issue-7", []string{"design.md"}, map[string]any{
		"locked": true, "sections": []any{"Architecture", "Security design", "Testing strategy"},
	})
	r := ctRun(t, validateArtifacts{}, ctx)
	ctWantStatus(t, r, graph.StatusPass)
	if got := r.Data["artifacts"]; !slices.Equal(got.([]string), []string{ctSpecRel + "/design.md"}) {
		t.Errorf("artifacts = %v", got)
	}
}

func TestValidateArtifactsReadsWindowsLineEndings(t *testing.T) {
	ctx := ctCtx(t, []string{"design.md"}, map[string]any{"locked": true, "sections": []any{"Architecture"}})
	ctWrite(t, ctx, "design.md", "---\r\nstatus: approved\r\n---\r\n\r\n# D\r\n\r\n## Architecture\r\n\r\nreal\r\n")
	ctWantStatus(t, ctRun(t, validateArtifacts{}, ctx), graph.StatusPass)
}

func TestValidateArtifactsSkipsANodeWithNothingToCheck(t *testing.T) {
	ctx := ctCtx(t, nil, nil)
	r := ctRun(t, validateArtifacts{}, ctx)
	ctWantStatus(t, r, graph.StatusSkip)
}

func TestValidateArtifactsFailsClosedWhenNothingResolves(t *testing.T) {
	for _, params := range []map[string]any{
		{"locked": true},
		{"frontMatter": map[string]any{"status": "approved"}},
		{"sections": []any{"Anything"}},
		{"checkmarks": "complete"},
	} {
		ctx := ctCtx(t, nil, params)
		r := ctRun(t, validateArtifacts{}, ctx)
		ctWantStatus(t, r, graph.StatusBlock)
		if r.Retriable {
			t.Errorf("%v: a graph-authoring fault must not be retriable", params)
		}
		if m := r.Messages[0]; !strings.Contains(m.Text, "names no artifact") || m.Path != ctSpecRel {
			t.Errorf("%v: got %+v", params, m)
		}
	}
}

func TestValidateArtifactsFailsClosedOnANilNode(t *testing.T) {
	ctx := ctCtx(t, nil, map[string]any{"sections": []any{"A"}})
	ctx.Node = nil
	ctWantStatus(t, ctRun(t, validateArtifacts{}, ctx), graph.StatusBlock)
}

// validates: an artifact the node gates but did not author.

const ctLogSection = "Security review (gate)"

func ctGateParams() map[string]any {
	return map[string]any{"validates": "execution-log.md", "sections": []any{ctLogSection}}
}

func ctWriteLog(t *testing.T, ctx *graph.Context, body string) {
	ctWrite(t, ctx, "execution-log.md", "---\ntype: execution-log\nstatus: in-progress\n---\n\n# Log\n\n"+body)
}

func TestValidateArtifactsBlocksWhenAValidatedArtifactIsMissing(t *testing.T) {
	ctx := ctCtx(t, nil, ctGateParams())
	r := ctRun(t, validateArtifacts{}, ctx)
	ctWantStatus(t, r, graph.StatusBlock)
	if r.Messages[0].Path != ctSpecRel+"/execution-log.md" {
		t.Errorf("path %q", r.Messages[0].Path)
	}
}

func TestValidateArtifactsHoldsAValidatedArtifactToTheSameStandard(t *testing.T) {
	cases := []struct {
		body string
		want graph.Status
		text string
	}{
		{"## Review cycles\n\nthree rounds\n", graph.StatusBlock, "required section is missing: " + ctLogSection},
		{"## " + ctLogSection + "\n\n", graph.StatusBlock, "required section is empty: " + ctLogSection},
		{"## " + ctLogSection + "\n\n- Outcome: pass\n", graph.StatusPass, ""},
	}
	for _, tc := range cases {
		ctx := ctCtx(t, nil, ctGateParams())
		ctWriteLog(t, ctx, tc.body)
		r := ctRun(t, validateArtifacts{}, ctx)
		ctWantStatus(t, r, tc.want)
		if tc.text != "" && r.Messages[0].Text != tc.text {
			t.Errorf("got %q, want %q", r.Messages[0].Text, tc.text)
		}
	}
}

func TestValidateArtifactsReportsProducedThenValidatedFindingsTogether(t *testing.T) {
	ctx := ctCtx(t, []string{"design.md"}, map[string]any{"validates": "execution-log.md", "sections": []any{"Architecture"}})
	ctWrite(t, ctx, "design.md", "# D\n")
	ctWriteLog(t, ctx, "## Elsewhere\n\nbody\n")
	r := ctRun(t, validateArtifacts{}, ctx)
	ctWantStatus(t, r, graph.StatusBlock)
	if len(r.Messages) != 2 || r.Messages[0].Path != ctSpecRel+"/design.md" || r.Messages[1].Path != ctSpecRel+"/execution-log.md" {
		t.Errorf("got %+v", r.Messages)
	}
}

func TestValidateArtifactsResolvesValidatesAlternatives(t *testing.T) {
	ctx := ctCtx(t, nil, map[string]any{"validates": "run-log.md|execution-log.md", "sections": []any{"Log"}})
	ctWriteLog(t, ctx, "## Log\n\nan entry\n")
	ctWantStatus(t, ctRun(t, validateArtifacts{}, ctx), graph.StatusPass)

	ctWrite(t, ctx, "run-log.md", "# R\n\n## Log\n\nan entry\n")
	r := ctRun(t, validateArtifacts{}, ctx)
	ctWantStatus(t, r, graph.StatusBlock)
	if !strings.Contains(r.Messages[0].Text, "keep one of: run-log.md, execution-log.md") {
		t.Errorf("got %q", r.Messages[0].Text)
	}
}

func TestValidateArtifactsAcceptsAListOfValidatedArtifacts(t *testing.T) {
	ctx := ctCtx(t, nil, map[string]any{"validates": []any{"execution-log.md", "tasks.md"}, "sections": []any{"Log"}})
	ctWriteLog(t, ctx, "## Log\n\nentry\n")
	r := ctRun(t, validateArtifacts{}, ctx)
	ctWantStatus(t, r, graph.StatusBlock)
	if r.Messages[0].Path != ctSpecRel+"/tasks.md" {
		t.Errorf("got %+v", r.Messages)
	}
}

// optional nodes

func TestValidateArtifactsSkipsAnOptionalNodeThatProducedNothing(t *testing.T) {
	for _, produces := range [][]string{{"brainstorm.md"}, {ctPhaseOne}} {
		ctx := ctCtx(t, produces, map[string]any{"locked": true})
		ctx.Node.Optional = true
		ctWantStatus(t, ctRun(t, validateArtifacts{}, ctx), graph.StatusSkip)
	}
}

func TestValidateArtifactsGatesAnOptionalNodeOnceItsArtifactExists(t *testing.T) {
	ctx := ctCtx(t, []string{"brainstorm.md"}, map[string]any{"locked": true})
	ctx.Node.Optional = true
	ctWrite(t, ctx, "brainstorm.md", "---\nstatus: draft\n---\n\n# B\n")
	ctWantStatus(t, ctRun(t, validateArtifacts{}, ctx), graph.StatusBlock)
}

func TestValidateArtifactsJudgesAnOptionalNodeOnWhatItAuthored(t *testing.T) {
	ctx := ctCtx(t, []string{"brainstorm.md"}, map[string]any{"validates": "execution-log.md", "sections": []any{"Problem"}})
	ctx.Node.Optional = true
	ctWriteLog(t, ctx, "## Progress\n\nentry\n")
	ctWantStatus(t, ctRun(t, validateArtifacts{}, ctx), graph.StatusSkip)
}

// one artifact, several accepted names

func TestValidateArtifactsAcceptsEitherPhaseOneName(t *testing.T) {
	for _, name := range []string{"bugfix.md", "requirements.md"} {
		ctx := ctCtx(t, []string{ctPhaseOne}, ctPhaseOneParams)
		ctWrite(t, ctx, name, ctApprovedPhaseOne)
		ctWantStatus(t, ctRun(t, validateArtifacts{}, ctx), graph.StatusPass)
	}
}

func TestValidateArtifactsHoldsAnAlternativeToTheSameStandard(t *testing.T) {
	ctx := ctCtx(t, []string{ctPhaseOne}, ctPhaseOneParams)
	ctWrite(t, ctx, "bugfix.md", "---\nstatus: draft\n---\n\n# B\n")
	r := ctRun(t, validateArtifacts{}, ctx)
	ctWantStatus(t, r, graph.StatusBlock)
	if len(r.Messages) != 3 || r.Messages[0].Path != ctSpecRel+"/bugfix.md" {
		t.Errorf("got %+v", r.Messages)
	}
}

func TestValidateArtifactsListsEveryAcceptedNameWhenNoneExists(t *testing.T) {
	ctx := ctCtx(t, []string{ctPhaseOne}, nil)
	r := ctRun(t, validateArtifacts{}, ctx)
	ctWantStatus(t, r, graph.StatusBlock)
	if len(r.Messages) != 1 || r.Messages[0].Text != "required artifact is missing — write one of: requirements.md, bugfix.md" || r.Messages[0].Path != ctSpecRel {
		t.Errorf("got %+v", r.Messages)
	}
}

func TestValidateArtifactsBlocksWhenBothNamesArePresent(t *testing.T) {
	ctx := ctCtx(t, []string{ctPhaseOne}, ctPhaseOneParams)
	ctWrite(t, ctx, "requirements.md", ctApprovedPhaseOne)
	ctWrite(t, ctx, "bugfix.md", ctApprovedPhaseOne)
	r := ctRun(t, validateArtifacts{}, ctx)
	ctWantStatus(t, r, graph.StatusBlock)
	if r.Messages[0].Text != "2 artifacts present where one is expected — keep one of: requirements.md, bugfix.md" {
		t.Errorf("got %q", r.Messages[0].Text)
	}
}

func TestValidateArtifactsTreatsADirectoryAsAbsent(t *testing.T) {
	ctx := ctCtx(t, []string{"design.md"}, nil)
	if err := os.Mkdir(filepath.Join(itemDir(ctx), "design.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctWantStatus(t, ctRun(t, validateArtifacts{}, ctx), graph.StatusBlock)
}

// planned absences and onlyWhenSkipped

func TestValidateArtifactsToleratesAPlannedAbsence(t *testing.T) {
	ctx := ctCtx(t, nil, map[string]any{"validates": "tasks.md", "checkmarks": "complete"})
	ctx.SkippedArtifacts = map[string]bool{"tasks.md": true}
	r := ctRun(t, validateArtifacts{}, ctx)
	ctWantStatus(t, r, graph.StatusSkip)
	if !strings.Contains(r.Messages[0].Text, "absence is planned") {
		t.Errorf("got %q", r.Messages[0].Text)
	}
}

func TestValidateArtifactsGatesAPresentArtifactEvenWhenDeclaredSkipped(t *testing.T) {
	ctx := ctCtx(t, nil, map[string]any{"validates": "tasks.md", "checkmarks": "complete"})
	ctx.SkippedArtifacts = map[string]bool{"tasks.md": true}
	ctWrite(t, ctx, "tasks.md", "- [ ] open\n")
	ctWantStatus(t, ctRun(t, validateArtifacts{}, ctx), graph.StatusBlock)
}

func TestValidateArtifactsNeedsEveryAlternativeSkippedToPlanAnAbsence(t *testing.T) {
	ctx := ctCtx(t, []string{ctPhaseOne}, nil)
	ctx.SkippedArtifacts = map[string]bool{"requirements.md": true}
	ctWantStatus(t, ctRun(t, validateArtifacts{}, ctx), graph.StatusBlock)
}

func TestValidateArtifactsPassesWhenOnlySomeSlotsArePlannedAbsences(t *testing.T) {
	ctx := ctCtx(t, []string{"design.md"}, map[string]any{"validates": "testing-plan.md"})
	ctx.SkippedArtifacts = map[string]bool{"testing-plan.md": true}
	ctWrite(t, ctx, "design.md", "# D\n")
	ctWantStatus(t, ctRun(t, validateArtifacts{}, ctx), graph.StatusPass)
}

func ctFallbackCtx(t *testing.T, skipped ...string) *graph.Context {
	ctx := ctCtx(t, []string{"testing-plan.md"}, map[string]any{
		"onlyWhenSkipped": "testing-plan.md",
		"validates":       "execution-log.md",
		"sections":        []any{"Verification results"},
	})
	for _, s := range skipped {
		ctx.SkippedArtifacts[s] = true
	}
	return ctx
}

func TestValidateArtifactsOnlyWhenSkippedGatesTheFallback(t *testing.T) {
	ctx := ctFallbackCtx(t, "testing-plan.md")
	ctWrite(t, ctx, "execution-log.md", "## Verification results\n\n")
	ctWantStatus(t, ctRun(t, validateArtifacts{}, ctx), graph.StatusBlock)
	ctWrite(t, ctx, "execution-log.md", "## Verification results\n\nran the linter\n")
	ctWantStatus(t, ctRun(t, validateArtifacts{}, ctx), graph.StatusPass)
}

func TestValidateArtifactsOnlyWhenSkippedIsDormant(t *testing.T) {
	cases := []struct {
		name    string
		skipped []string
		param   string
		present bool
		want    string
	}{
		{"artifact exists", []string{"testing-plan.md"}, "testing-plan.md", true, "gated where it is declared"},
		{"nothing declared skipped", nil, "testing-plan.md", false, "testing-plan.md was not declared skipped"},
		{"other artifact skipped", []string{"testing-plan.md"}, "requirements.md", false, "requirements.md was not declared skipped"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctFallbackCtx(t, tc.skipped...)
			ctx.Params["onlyWhenSkipped"] = tc.param
			if tc.present {
				ctWrite(t, ctx, tc.param, "# plan\n")
			}
			ctWrite(t, ctx, "execution-log.md", "## Verification results\n\n")
			r := ctRun(t, validateArtifacts{}, ctx)
			ctWantStatus(t, r, graph.StatusSkip)
			if !strings.Contains(r.Messages[0].Text, tc.want) {
				t.Errorf("got %q, want %q", r.Messages[0].Text, tc.want)
			}
		})
	}
}

func TestValidateArtifactsOnlyWhenSkippedComesBeforeFailingClosed(t *testing.T) {
	ctx := ctCtx(t, nil, map[string]any{"onlyWhenSkipped": "testing-plan.md", "sections": []any{"X"}})
	ctWantStatus(t, ctRun(t, validateArtifacts{}, ctx), graph.StatusSkip)
}

// front matter

func TestValidateArtifactsComparesFrontMatterAsTheReferenceDoes(t *testing.T) {
	cases := []struct {
		name  string
		front string
		want  map[string]any
		pass  bool
	}{
		{"equal strings", "kind: design", map[string]any{"kind": "design"}, true},
		{"different strings", "kind: tasks", map[string]any{"kind": "design"}, false},
		{"number and its text", "version: 2", map[string]any{"version": "2"}, true},
		{"integer and integer", "version: 2", map[string]any{"version": 2}, true},
		{"float is not its integer", "version: 2.0", map[string]any{"version": 2}, false},
		{"YAML 1.1 yes is true", "ctReviewed: yes", map[string]any{"ctReviewed": true}, true},
		{"quoted yes is text", `ctReviewed: "yes"`, map[string]any{"ctReviewed": true}, false},
		{"absent key", "kind: design", map[string]any{"owner": "me"}, false},
		{"null reads as None", "owner: ~", map[string]any{"owner": "None"}, true},
		{"octal integer", "mode: 010", map[string]any{"mode": 8}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctCtx(t, []string{"design.md"}, map[string]any{"frontMatter": tc.want})
			ctWrite(t, ctx, "design.md", "---\n"+tc.front+"\n---\n\n# D\n")
			r := ctRun(t, validateArtifacts{}, ctx)
			if got := r.Status == graph.StatusPass; got != tc.pass {
				t.Errorf("pass = %v, want %v (%s)", got, tc.pass, ctTexts(r))
			}
			if !tc.pass && !strings.HasPrefix(r.Messages[0].Text, "front-matter ") {
				t.Errorf("message %q", r.Messages[0].Text)
			}
		})
	}
}

func TestValidateArtifactsTreatsMalformedFrontMatterAsNone(t *testing.T) {
	for _, text := range []string{
		"---\nstatus: approved\nno terminator\n",
		"---\nstatus: [approved\n---\n# D\n",
		"---\n- status\n- approved\n---\n# D\n",
	} {
		ctx := ctCtx(t, []string{"design.md"}, map[string]any{"locked": true})
		ctWrite(t, ctx, "design.md", text)
		r := ctRun(t, validateArtifacts{}, ctx)
		ctWantStatus(t, r, graph.StatusBlock)
		if !strings.Contains(r.Messages[0].Text, "(unset)") {
			t.Errorf("%q: got %q", text, r.Messages[0].Text)
		}
	}
}

func TestValidateArtifactsReportsAnUnreadableArtifact(t *testing.T) {
	ctx := ctCtx(t, []string{"design.md"}, map[string]any{"sections": []any{"A"}})
	ctWrite(t, ctx, "design.md", "\xff\xfe binary")
	r := ctRun(t, validateArtifacts{}, ctx)
	ctWantStatus(t, r, graph.StatusBlock)
	if !strings.Contains(r.Messages[0].Text, "could not be read") {
		t.Errorf("got %q", r.Messages[0].Text)
	}
}

func TestValidateArtifactsCheckParams(t *testing.T) {
	good := []map[string]any{
		{},
		{"locked": true, "sections": []any{"A", "B"}, "checkmarks": "complete"},
		{"frontMatter": map[string]any{"status": "approved", "version": 2}},
		{"validates": "execution-log.md", "onlyWhenSkipped": "testing-plan.md"},
		{"validates": []any{"a.md|b.md", "c.md"}},
	}
	for _, p := range good {
		if err := (validateArtifacts{}).CheckParams(p); err != nil {
			t.Errorf("%v: %v", p, err)
		}
	}
	bad := []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"sections": "Architecture"}, "with.sections: got string, want a list of section titles"},
		{map[string]any{"sections": []any{"A", 3}}, "with.sections: got a list, want a list of section titles"},
		{map[string]any{"locked": "yes"}, "with.locked: got string, want a boolean"},
		{map[string]any{"checkmarks": "completed"}, `with.checkmarks: got "completed", want "complete"`},
		{map[string]any{"checkmarks": true}, `with.checkmarks: got boolean, want "complete"`},
		{map[string]any{"frontMatter": []any{"status"}}, "with.frontMatter: got a list, want a mapping"},
		{map[string]any{"frontMatter": map[string]any{"a": []any{1}}}, "with.frontMatter: a: got a list, want a scalar"},
		{map[string]any{"validates": "a.md||b.md"}, "with.validates: entry \"a.md||b.md\" has an empty alternative"},
		{map[string]any{"validates": 3}, "with.validates: got integer, want an artifact name"},
		{map[string]any{"section": []any{"A"}}, "with.section: unknown parameter; validate-artifacts accepts checkmarks, frontMatter, locked, onlyWhenSkipped, sections, validates"},
	}
	for _, tc := range bad {
		err := (validateArtifacts{}).CheckParams(tc.params)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.params, err, tc.want)
		}
	}
}

func TestValidateArtifactsIsRegistered(t *testing.T) {
	for _, name := range []string{
		validateArtifactsName, enforcesBoundariesName, lintArtifactsName,
		classifyFeedbackName, recordFeedbackName, awaitInnerLoopsName,
	} {
		h, ok := Registry().Lookup(name)
		if !ok {
			t.Errorf("%s is not registered", name)
			continue
		}
		if _, ok := h.(graph.ParamChecker); !ok {
			t.Errorf("%s does not check its parameters", name)
		}
	}
}

func TestValidateArtifactsNamesAnArtifactLinkedOutOfTheCheckoutAndReadsNothingThere(t *testing.T) {
	ctx := ctCtx(t, []string{"design.md"}, map[string]any{"frontMatter": map[string]any{"status": "approved"}})
	secret := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(secret, []byte("---\nstatus: hunter2\n---\n# secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(itemDir(ctx), "design.md")); err != nil {
		t.Fatal(err)
	}
	r := ctRun(t, validateArtifacts{}, ctx)
	ctWantStatus(t, r, graph.StatusBlock)
	if got := ctTexts(r); !strings.Contains(got, "leads outside the checkout") || strings.Contains(got, "hunter2") {
		t.Errorf("messages = %s; want the link named and nothing of its target", got)
	}
}

// ---- where validate-artifacts findings point -------------------------------

// ctOneFinding runs validate-artifacts with params over design.md holding
// text, and returns its one finding.
func ctOneFinding(t *testing.T, params map[string]any, text string) graph.Message {
	t.Helper()
	ctx := ctCtx(t, []string{"design.md"}, params)
	ctWrite(t, ctx, "design.md", text)
	r := ctRun(t, validateArtifacts{}, ctx)
	ctWantStatus(t, r, graph.StatusBlock)
	if len(r.Messages) != 1 {
		t.Fatalf("want one finding, got %s", ctTexts(r))
	}
	return r.Messages[0]
}

// ctFindingCase is a document, the finding it draws and where it points.
type ctFindingCase struct {
	name         string
	text         string
	want         string
	line, column int
}

func ctWantFindingsAt(t *testing.T, params map[string]any, cases []ctFindingCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := ctOneFinding(t, params, tc.text)
			if m.Text != tc.want || m.Line != tc.line || m.Column != tc.column {
				t.Errorf("got %q at %d:%d, want %q at %d:%d", m.Text, m.Line, m.Column, tc.want, tc.line, tc.column)
			}
		})
	}
}

func TestAnUnlockedArtifactPointsAtItsStatus(t *testing.T) {
	draft := "artifact is not locked — front matter says status: draft, expected status: approved"
	unset := "artifact is not locked — front matter says status: (unset), expected status: approved"
	ctWantFindingsAt(t, map[string]any{"locked": true}, []ctFindingCase{
		{"the status key", "---\ntitle: D\nstatus: draft\n---\n# D\n", draft, 3, 0},
		{"CRLF", "---\r\ntitle: D\r\nstatus: draft\r\n---\r\n# D\r\n", draft, 3, 0},
		{"no status key: the opening line", "---\ntitle: D\n---\n# D\n", unset, 1, 0},
		{"front matter that is not a mapping: the opening line", "---\n- a\n---\n# D\n", unset, 1, 0},
		{"no front matter: nowhere", "# D\nstatus: draft\n", unset, 0, 0},
		{"malformed front matter: nowhere", "---\nstatus: [draft\n---\n# D\n", unset, 0, 0},
		{"unclosed front matter: nowhere", "---\nstatus: draft\n# D\n", unset, 0, 0},
	})
}

func TestAFrontMatterMismatchPointsAtItsKey(t *testing.T) {
	ctWantFindingsAt(t, map[string]any{"frontMatter": map[string]any{"type": "design"}}, []ctFindingCase{
		{"the key", "---\nstatus: draft\ntype: spec\n---\n# D\n", "front-matter type: expected 'design', found 'spec'", 3, 0},
		{"CRLF", "---\r\nstatus: draft\r\ntype: spec\r\n---\r\n# D\r\n", "front-matter type: expected 'design', found 'spec'", 3, 0},
		{"a merged key: the merge", "---\nbase: &b {type: spec}\n<<: *b\n---\n", "front-matter type: expected 'design', found 'spec'", 3, 0},
		{"no such key: the opening line", "---\nstatus: draft\n---\n# D\n", "front-matter type: expected 'design', found None", 1, 0},
		{"no front matter: nowhere", "type: spec\n", "front-matter type: expected 'design', found None", 0, 0},
		{"malformed front matter: nowhere", "---\ntype: [spec\n---\n", "front-matter type: expected 'design', found None", 0, 0},
	})
}

func TestAnEmptySectionPointsAtItsHeading(t *testing.T) {
	const want = "required section is empty: Security design"
	ctWantFindingsAt(t, map[string]any{"sections": []any{"Security design"}}, []ctFindingCase{
		{"after front matter", "---\ntitle: D\nstatus: draft\n---\n\n# D\n\n## Security design\n\n## Next\n\nbody\n", want, 8, 1},
		{"without front matter", "# D\n\n## Security design\n\n## Next\n\nbody\n", want, 3, 1},
		{"CRLF", "---\r\nstatus: draft\r\n---\r\n# D\r\n## Security design\r\n\r\n", want, 5, 1},
		{"after an empty front matter block", "---\n---\n## Security design\n", want, 3, 1},
		// The parser reads no front matter here, so the body is the whole
		// text and its lines are the file's.
		{"after malformed front matter", "---\nstatus: [\n---\n## Security design\n", want, 4, 1},
		{"a repeated heading: the one judged", "## Security design\n\nreal\n\n## Security design\n", want, 5, 1},
	})
}

func TestAMissingSectionPointsNowhere(t *testing.T) {
	ctWantFindingsAt(t, map[string]any{"sections": []any{"Security design"}}, []ctFindingCase{
		{"after front matter", "---\nstatus: draft\n---\n# D\n", "required section is missing: Security design", 0, 0},
		{"without front matter", "# D\n", "required section is missing: Security design", 0, 0},
	})
}

func TestUntickedTasksPointAtTheFirstBox(t *testing.T) {
	ctWantFindingsAt(t, map[string]any{"checkmarks": "complete"}, []ctFindingCase{
		{"after front matter", "---\ntitle: T\nstatus: draft\n---\n# T\n\n- [x] one\n  - [ ] two\n- [ ] three\n", "2 task(s) still unticked", 8, 5},
		{"without front matter", "# T\n- [x] one\n- [ ] two\n", "1 task(s) still unticked", 3, 3},
		{"CRLF", "---\r\nstatus: draft\r\n---\r\n# T\r\n- [ ] one\r\n- [ ] two\r\n", "2 task(s) still unticked", 5, 3},
		{"columns are characters", "# T\né - [ ] one\n", "1 task(s) still unticked", 2, 5},
		{"after malformed front matter", "---\nstatus: [\n- [ ] one\n---\n", "1 task(s) still unticked", 3, 3},
	})
}

func TestArtifactChecksOfReadsWhatTheGateReads(t *testing.T) {
	e := graph.ChainEntry{Hook: ValidateArtifacts, Params: map[string]any{
		"locked":      true,
		"sections":    []any{" Why ", "Steps"},
		"frontMatter": map[string]any{"kind": "spec"},
		"checkmarks":  "complete",
		"validates":   "execution-log.md",
	}}
	got, ok := ArtifactChecksOf(e)
	if !ok || !got.Locked || !got.Checkmarks || !slices.Equal(got.Sections, []string{"Why", "Steps"}) ||
		got.FrontMatter["kind"] != "spec" || !slices.Equal(got.Validates, []string{"execution-log.md"}) || got.OnlyWhenSkipped != nil {
		t.Errorf("got %+v, %v", got, ok)
	}
	// Read as Run reads them: false locks nothing, an empty
	// onlyWhenSkipped leaves the entry applying, and checkmarks other than
	// complete count nothing.
	got, _ = ArtifactChecksOf(graph.ChainEntry{Hook: ValidateArtifacts, Params: map[string]any{"locked": false, "onlyWhenSkipped": "", "checkmarks": "some"}})
	if got.Locked || got.Checkmarks || got.OnlyWhenSkipped != nil {
		t.Errorf("got %+v", got)
	}
	if _, ok := ArtifactChecksOf(graph.ChainEntry{Hook: "lint-artifacts"}); ok {
		t.Error("another hook's entry was read as validate-artifacts")
	}
}
