package builtins

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

func runSelection(t *testing.T, ctx *graph.Context) graph.Result {
	t.Helper()
	ctx.Boundary = graph.Exit
	r, err := classifyPhaseSelection{}.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestClassifyPhaseSelectionWaitsForAnAuthorizedExecute(t *testing.T) {
	cases := []struct {
		name  string
		event *graph.Event
	}{
		{"no event (check)", nil},
		{"no keyword", eventOf("@owner", "looks fine")},
		{"a stranger says execute", eventOf("@drive-by", "- [ ] requirements\nthe-loop execute")},
		{"the harness says execute", eventOf("@owner", markSelfAuthored("the-loop execute"))},
		{"an anonymous execute", eventOf("", "the-loop execute")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := &obFake{}
			ctx := selectionCtx(fake, graph.WorkItemLoop)
			ctx.Event = tc.event
			r := runSelection(t, ctx)
			if r.Status != graph.StatusWait {
				t.Fatalf("status = %s, want wait", r.Status)
			}
			if !strings.Contains(r.Render(), "`the-loop execute`") {
				t.Errorf("wait message %q does not name the keyword", r.Render())
			}
			if len(fake.Calls) > 0 {
				t.Errorf("a waiting gate called out: %v", fake.ops())
			}
		})
	}
}

func TestClassifyPhaseSelectionTurnsAReplyIntoFacts(t *testing.T) {
	fake := &obFake{}
	ctx := selectionCtx(fake, graph.WorkItemLoop)
	ctx.Event = eventOf("@owner", "- [ ] requirements\n- [ ] approval\n- [x] tasks\n- [x] deep-review\n- [ ] implementation\n\nThe-Loop Execute")
	r := runSelection(t, ctx)
	if r.Status != graph.StatusPass {
		t.Fatalf("status = %s, want pass", r.Status)
	}
	want := map[string]any{
		"outcome":  "selected",
		"decision": "phase-selection",
		"declaredSkips": map[string]any{
			"requirements": map[string]any{"via": "selection", "token": "requirements", "by": "@owner", "reason": ""},
			"approval":     map[string]any{"via": "selection", "token": "approval", "by": "@owner", "reason": ""},
		},
		"optIns": map[string]any{
			"deep-review": map[string]any{"via": "selection", "token": "deep-review", "by": "@owner"},
		},
		"refused":         []any{"implementation"},
		"surface":         "work-item",
		"sessionPerPr":    "cross-repository",
		"selectionSource": "reply",
	}
	for key, v := range want {
		if !reflect.DeepEqual(r.Data[key], v) {
			t.Errorf("data[%s] = %#v, want %#v", key, r.Data[key], v)
		}
	}
	frozen := r.Data["frozenGraph"].(map[string]any)
	if frozen["loop"] != graph.WorkItemLoop || frozen["workItem"] != "issue-1" || frozen["surface"] != "work-item" || frozen["sessionPerPr"] != "cross-repository" {
		t.Errorf("frozenGraph header = %v", frozen)
	}
	var ids []string
	byID := map[string]map[string]any{}
	for _, n := range frozen["nodes"].([]any) {
		m := n.(map[string]any)
		ids = append(ids, m["id"].(string))
		byID[m["id"].(string)] = m
	}
	if !slices.Equal(ids, []string{"phase-selection", "requirements", "deep-review", "approval", "tasks", "implementation", "security-review", "done"}) {
		t.Errorf("frozen node order = %q", ids)
	}
	wantNodes := map[string]map[string]any{
		"requirements":   {"id": "requirements", "phase": "requirements-definition", "skipped": true, "selectable": true, "optIn": false},
		"deep-review":    {"id": "deep-review", "phase": "", "skipped": false, "selectable": true, "optIn": true},
		"implementation": {"id": "implementation", "phase": "implementation", "skipped": false, "selectable": false, "optIn": false},
	}
	for id, w := range wantNodes {
		if !reflect.DeepEqual(byID[id], w) {
			t.Errorf("frozen %s = %v, want %v", id, byID[id], w)
		}
	}
	posted := fake.posted()
	if len(posted) != 1 {
		t.Fatalf("posted %d confirmations, want 1", len(posted))
	}
	for _, want := range []string{"@owner", "`requirements`", "`approval`", "`deep-review`", "**Refused**", "`implementation`", "on this work item"} {
		if !strings.Contains(posted[0], want) {
			t.Errorf("confirmation lacks %q:\n%s", want, posted[0])
		}
	}
	if _, degraded := r.Data["error"]; degraded {
		t.Errorf("data[error] = %v on a successful post", r.Data["error"])
	}
}

func TestAnUnselectedOptInPhaseIsFrozenAsSkippedAndSaidOutLoud(t *testing.T) {
	fake := &obFake{}
	ctx := selectionCtx(fake, graph.WorkItemLoop)
	ctx.Event = eventOf("@owner", "the-loop execute")
	r := runSelection(t, ctx)
	if got := r.Data["optIns"].(map[string]any); len(got) != 0 {
		t.Errorf("optIns = %v, want none", got)
	}
	for _, n := range r.Data["frozenGraph"].(map[string]any)["nodes"].([]any) {
		if m := n.(map[string]any); m["id"] == "deep-review" && m["skipped"] != true {
			t.Error("an opt-in node nobody ticked is frozen as walked")
		}
	}
	if !strings.Contains(fake.posted()[0], "not selected") {
		t.Error("the confirmation does not mention the optional phase left off")
	}
}

func TestTickingInPlaceIsTheSelection(t *testing.T) {
	fake := &obFake{}
	ctx := selectionCtx(fake, graph.WorkItemLoop)
	postPhaseSelection{}.Run(ctx)
	// The human unticks two rows on the-loop's own comment, then says the word.
	fake.Thread[0]["body"] = strings.NewReplacer(
		"- [x] requirements", "- [ ] requirements",
		"- [x] approval", "- [ ] approval",
		"- [ ] `outer-loop-on-pull-request`", "- [x] `outer-loop-on-pull-request`",
	).Replace(fake.Thread[0]["body"].(string))
	ctx.Event = eventOf("@owner", "the-loop execute")
	r := runSelection(t, ctx)
	if r.Data["selectionSource"] != "checklist" {
		t.Errorf("selectionSource = %v, want checklist", r.Data["selectionSource"])
	}
	skips := r.Data["declaredSkips"].(map[string]any)
	if len(skips) != 2 || skips["requirements"] == nil || skips["approval"] == nil {
		t.Errorf("declaredSkips = %v, want requirements and approval", skips)
	}
	if r.Data["surface"] != surfacePullRequest {
		t.Errorf("surface = %v, want pull-request", r.Data["surface"])
	}
}

func TestAChecklistInTheReplyWinsOverTheBoxes(t *testing.T) {
	fake := &obFake{}
	ctx := selectionCtx(fake, graph.WorkItemLoop)
	postPhaseSelection{}.Run(ctx)
	fake.Thread[0]["body"] = strings.Replace(fake.Thread[0]["body"].(string), "- [x] requirements", "- [ ] requirements", 1)
	ctx.Event = eventOf("@owner", "- [ ] tasks\n- [x] requirements\nthe-loop execute")
	r := runSelection(t, ctx)
	skips := r.Data["declaredSkips"].(map[string]any)
	if len(skips) != 1 || skips["tasks"] == nil || r.Data["selectionSource"] != "reply" {
		t.Errorf("declaredSkips = %v via %v, want only tasks via reply", skips, r.Data["selectionSource"])
	}
}

func TestTheLatestAuthorizedExecuteWins(t *testing.T) {
	ctx := selectionCtx(&obFake{}, graph.WorkItemLoop)
	ctx.Event = eventOf(
		"@owner", "- [ ] tasks\nthe-loop execute",
		"@drive-by", "- [ ] approval\nthe-loop execute",
		"owner", "- [ ] requirements\nthe-loop execute",
	)
	skips := runSelection(t, ctx).Data["declaredSkips"].(map[string]any)
	if len(skips) != 1 || skips["requirements"] == nil {
		t.Errorf("declaredSkips = %v, want the owner's latest (requirements)", skips)
	}
}

func TestAnExecuteInCodeOrAQuoteSelectsNothing(t *testing.T) {
	for _, body := range []string{
		"- [ ] tasks\nwhen you are ready, reply `the-loop execute`",
		"> the-loop execute\n\nnot yet, I am still choosing",
		"```\nthe-loop execute\n```",
	} {
		ctx := selectionCtx(&obFake{}, graph.WorkItemLoop)
		ctx.Event = eventOf("@owner", body)
		r, err := classifyPhaseSelection{}.Run(ctx)
		if err != nil || r.Status != graph.StatusWait {
			t.Errorf("%q: status %v (%v), want a wait", body, r.Status, err)
		}
	}
}

func TestAContributionRecordsNoSurface(t *testing.T) {
	fake := &obFake{}
	ctx := selectionCtx(fake, graph.ContributionLoop)
	ctx.Event = eventOf("@owner", "- [x] outer-loop-on-pull-request\nthe-loop execute")
	r := runSelection(t, ctx)
	if r.Data["surface"] != "" || r.Data["frozenGraph"].(map[string]any)["surface"] != "" {
		t.Errorf("surface = %q, want none for a loop that was not asked", r.Data["surface"])
	}
	if strings.Contains(fake.posted()[0], "outer loop runs") {
		t.Error("the confirmation talks about a surface that was never offered")
	}
}

func TestAPRSessionsRowFreezesItsMode(t *testing.T) {
	ctx := selectionCtx(&obFake{}, graph.WorkItemLoop)
	ctx.Event = eventOf("@owner", "- [x] pr-sessions-always\nthe-loop execute")
	r := runSelection(t, ctx)
	if r.Data["sessionPerPr"] != "always" || r.Data["frozenGraph"].(map[string]any)["sessionPerPr"] != "always" {
		t.Errorf("sessionPerPr = %v, want always in the data and the frozen graph", r.Data["sessionPerPr"])
	}
}

func TestTheExecuteKeywordIsConfigurable(t *testing.T) {
	ctx := selectionCtx(&obFake{}, graph.WorkItemLoop)
	ctx.Settings.ExecuteKeyword = "loop go"
	ctx.Event = eventOf("@owner", "the-loop execute")
	if r := runSelection(t, ctx); r.Status != graph.StatusWait {
		t.Errorf("the default keyword answered a gate configured for another: %s", r.Status)
	}
	ctx.Event = eventOf("@owner", "LOOP GO")
	if r := runSelection(t, ctx); r.Status != graph.StatusPass {
		t.Errorf("the configured keyword did not answer: %s", r.Status)
	}
}

func TestARecordedSelectionPassesWithoutReading(t *testing.T) {
	fake := &obFake{}
	ctx := selectionCtx(fake, graph.WorkItemLoop)
	ctx.ReadOnly = true
	ctx.Decisions = map[string]any{selectionDecision: map[string]any{"at": "2026-01-01T00:00:00Z"}}
	r := runSelection(t, ctx)
	want := map[string]any{"outcome": "selected", "decision": "phase-selection"}
	if r.Status != graph.StatusPass || !reflect.DeepEqual(r.Data, want) {
		t.Fatalf("got %s %v, want pass %v", r.Status, r.Data, want)
	}
	if len(fake.Calls) > 0 {
		t.Errorf("called out: %v", fake.ops())
	}
}

func TestAnOutageSelectsTheFullProcessAndReportsTheMissingConfirmation(t *testing.T) {
	ctx := selectionCtx(graph.NoIntegration{}, graph.WorkItemLoop)
	ctx.Event = eventOf("@owner", "the-loop execute")
	r := runSelection(t, ctx)
	if r.Status != graph.StatusPass || len(r.Data["declaredSkips"].(map[string]any)) != 0 {
		t.Fatalf("got %s %v, want pass with no skips", r.Status, r.Data)
	}
	if !strings.Contains(r.Data["error"].(string), graph.ErrIntegrationUnavailable.Error()) {
		t.Errorf("data[error] = %v, want the failed confirmation", r.Data["error"])
	}
}

func TestClassifyPhaseSelectionUnderReadOnlyNeverCallsOut(t *testing.T) {
	fake := &obFake{}
	ctx := selectionCtx(fake, graph.WorkItemLoop)
	ctx.ReadOnly = true
	ctx.Event = eventOf("@owner", "- [ ] tasks\nthe-loop execute")
	r := runSelection(t, ctx)
	if r.Status != graph.StatusPass || r.Data["declaredSkips"].(map[string]any)["tasks"] == nil {
		t.Errorf("got %s %v, want the reply's selection", r.Status, r.Data)
	}
	if len(fake.Calls) > 0 {
		t.Errorf("called out under read-only: %v", fake.ops())
	}
}
