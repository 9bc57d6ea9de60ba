package builtins

import (
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

// selectLoop is a miniature outer loop: the gate, three default-on selectable
// nodes, an opt-in node, two protected nodes and a terminal.
func selectLoop(name string) *graph.Graph {
	return &graph.Graph{Name: name, Start: "phase-selection", Nodes: []*graph.Node{
		{ID: "phase-selection", Phase: "phase-selection", Actor: graph.ActorHuman, Required: true},
		{ID: "requirements", Phase: "requirements-definition", Skippable: true},
		{ID: "deep-review", OptIn: true, Skippable: true, Description: "a different model\n  reads the locked requirements"},
		{ID: "approval", Actor: graph.ActorHuman, Skippable: true},
		{ID: "tasks", Phase: "tasks-breakdown", Skippable: true},
		{ID: "implementation", Phase: "implementation"},
		{ID: "security-review", Required: true},
		{ID: "done", Terminal: true},
	}}
}

func selectionCtx(in graph.Integration, loop string) *graph.Context {
	g := selectLoop(loop)
	ctx := obCtx(in, g.Nodes[0], "")
	ctx.Graph = g
	return ctx
}

func TestPostPhaseSelectionRendersEveryRowGroup(t *testing.T) {
	fake := &obFake{}
	r, err := postPhaseSelection{}.Run(selectionCtx(fake, graph.WorkItemLoop))
	if err != nil || r.Data["posted"] != true {
		t.Fatalf("got %v %v, want posted", r.Data, err)
	}
	body := fake.posted()[0]
	for _, want := range []string{
		"- [x] requirements\n", "- [x] approval\n", "- [x] tasks\n",
		"- [ ] deep-review — a different model reads the locked requirements\n",
		"- implementation\n", "- security-review\n",
		"- [ ] `outer-loop-on-pull-request`",
		"- [ ] `pr-sessions-never`", "- [x] `pr-sessions-cross-repository`", "- [ ] `pr-sessions-always`",
		"`the-loop execute`", selectionMarker, selfCommentMarker,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("checklist lacks %q", want)
		}
	}
	for _, absent := range []string{"- [x] deep-review", "- [x] phase-selection", "- phase-selection\n", "- done\n"} {
		if strings.Contains(body, absent) {
			t.Errorf("checklist contains %q", absent)
		}
	}
}

func TestPostPhaseSelectionPostsOnce(t *testing.T) {
	fake := &obFake{}
	ctx := selectionCtx(fake, graph.WorkItemLoop)
	postPhaseSelection{}.Run(ctx)
	r, _ := postPhaseSelection{}.Run(ctx)
	if r.Data["posted"] != false || r.Data["reason"] != "already asked" {
		t.Errorf("re-entry: %v, want already asked", r.Data)
	}
	if n := len(fake.posted()); n != 1 {
		t.Errorf("posted %d checklists, want 1", n)
	}
}

func TestAnUntouchedChecklistSelectsTheFullProcess(t *testing.T) {
	fake := &obFake{}
	ctx := selectionCtx(fake, graph.WorkItemLoop)
	postPhaseSelection{}.Run(ctx)
	body := fake.posted()[0]
	sk, opt, prot := phaseRows(ctx)
	sel := parseSelection(body, sk, opt, prot)
	if len(sel.Skips)+len(sel.OptIns)+len(sel.Refused) != 0 {
		t.Errorf("untouched checklist selects %+v, want nothing", sel)
	}
	if got := parseSurface(body); got != surfaceWorkItem {
		t.Errorf("surface = %q, want work-item", got)
	}
	if got := parsePRSessions(body, "x"); got != sessionPerPRCrossRepository {
		t.Errorf("sessions = %q, want the pre-ticked default", got)
	}
}

func TestTheContributionChecklistAsksNoSurfaceQuestion(t *testing.T) {
	fake := &obFake{}
	postPhaseSelection{}.Run(selectionCtx(fake, graph.ContributionLoop))
	body := fake.posted()[0]
	if strings.Contains(body, surfaceToken) {
		t.Error("a contribution was offered the surface row")
	}
	if !strings.Contains(body, "`pr-sessions-cross-repository`") {
		t.Error("a contribution was not asked about pull-request sessions")
	}
}

func TestTheChecklistNamesAConfiguredExecuteKeyword(t *testing.T) {
	fake := &obFake{}
	ctx := selectionCtx(fake, graph.WorkItemLoop)
	ctx.Settings.ExecuteKeyword = "  loop go "
	postPhaseSelection{}.Run(ctx)
	if body := fake.posted()[0]; !strings.Contains(body, "`loop go`") || strings.Contains(body, "the-loop execute") {
		t.Error("checklist does not ask for the configured keyword")
	}
}

func TestAChecklistWithNothingProtectedSaysSo(t *testing.T) {
	fake := &obFake{}
	ctx := selectionCtx(fake, graph.WorkItemLoop)
	for _, n := range ctx.Graph.Nodes[1:] {
		if !n.Terminal {
			n.Skippable = true
		}
	}
	postPhaseSelection{}.Run(ctx)
	body := fake.posted()[0]
	if !strings.Contains(body, "- [x] security-review") || !strings.Contains(body, "Nothing in this loop is mandatory") {
		t.Errorf("checklist does not say every phase is selectable:\n%s", body)
	}
}
