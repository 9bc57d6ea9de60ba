package builtins

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

const goalComment = "the-loop contribute\n" +
	"Goal: make the retry loop honour the configured backoff\n" +
	"Success criteria:\n" +
	"- [ ] the flaky-timeout test passes\n" +
	"- no change to the public client API\n"

func TestParseGoalMatchesTheCaseFile(t *testing.T) {
	type want struct {
		Goal     string   `yaml:"goal"`
		Criteria []string `yaml:"criteria"`
	}
	type gateCase struct {
		Note string `yaml:"note"`
		Body string `yaml:"body"`
		Want *want  `yaml:"want"`
	}
	for _, tc := range gateCases[gateCase](t, "goal.yaml") {
		t.Run(tc.Note, func(t *testing.T) {
			got, ok := parseGoal(tc.Body)
			switch {
			case tc.Want == nil && ok:
				t.Fatalf("parsed %+v, want no goal", got)
			case tc.Want == nil:
			case !ok:
				t.Fatalf("no goal parsed, want %+v", *tc.Want)
			case got.Goal != tc.Want.Goal || !slices.Equal(got.Criteria, tc.Want.Criteria):
				t.Fatalf("got %q %q, want %q %q", got.Goal, got.Criteria, tc.Want.Goal, tc.Want.Criteria)
			}
		})
	}
}

func goalCtx(in graph.Integration) *graph.Context {
	ctx := obCtx(in, &graph.Node{ID: "goal-definition", Actor: graph.ActorHuman, Required: true}, "")
	ctx.Boundary = graph.Exit
	ctx.Graph = &graph.Graph{Name: graph.ContributionLoop}
	return ctx
}

func TestClassifyGoalReadsOnlyAuthorizedHumans(t *testing.T) {
	cases := []struct {
		name   string
		thread []map[string]any
		event  *graph.Event
		want   graph.Status
		by     string
	}{
		{"nothing stated waits", nil, eventOf("@owner", "carry on"), graph.StatusWait, ""},
		{"a goal in the arming comment on the thread releases", []map[string]any{{"user": map[string]any{"login": "owner"}, "body": goalComment}}, nil, graph.StatusPass, "@owner"},
		{"an author given as a plain string is read too", []map[string]any{{"author": "owner", "body": goalComment}}, nil, graph.StatusPass, "@owner"},
		{"a goal in the event releases", nil, eventOf("@owner", goalComment), graph.StatusPass, "@owner"},
		{"a stranger's goal is not read", []map[string]any{{"user": map[string]any{"login": "drive-by"}, "body": goalComment}}, eventOf("@drive-by", goalComment), graph.StatusWait, ""},
		{"a self-authored goal is not read", []map[string]any{{"user": map[string]any{"login": "owner"}, "body": markSelfAuthored(goalComment)}}, nil, graph.StatusWait, ""},
		{"an anonymous comment is not read", []map[string]any{{"body": goalComment}}, nil, graph.StatusWait, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := &obFake{Thread: tc.thread}
			ctx := goalCtx(fake)
			ctx.Event = tc.event
			r, err := classifyGoal{}.Run(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != tc.want {
				t.Fatalf("status = %s, want %s (%v)", r.Status, tc.want, r.Messages)
			}
			if tc.want != graph.StatusPass {
				if slices.Contains(fake.ops(), opAddComment) {
					t.Error("a waiting gate posted a confirmation")
				}
				return
			}
			want := map[string]any{
				"goal":     "make the retry loop honour the configured backoff",
				"criteria": []any{"the flaky-timeout test passes", "no change to the public client API"},
				"by":       tc.by,
			}
			if !reflect.DeepEqual(r.Data["goal"], want) {
				t.Errorf("data[goal] = %#v, want %#v", r.Data["goal"], want)
			}
			if r.Data["outcome"] != graph.OutcomeDefined || r.Data["decision"] != goalDecision {
				t.Errorf("data = %v, want outcome defined and decision goal-definition", r.Data)
			}
			posted := fake.posted()
			if len(posted) != 1 || !strings.Contains(posted[0], "the flaky-timeout test passes") || !isSelfAuthored(posted[0]) {
				t.Errorf("confirmation = %q, want one self-marked comment echoing the criteria", posted)
			}
		})
	}
}

func TestClassifyGoalTakesTheLatestRestatement(t *testing.T) {
	fake := &obFake{Thread: []map[string]any{{"user": map[string]any{"login": "owner"}, "body": goalComment}}}
	ctx := goalCtx(fake)
	ctx.Event = eventOf("@owner", "Goal: a narrower goal\nSuccess criteria:\n- one check\n")
	r, _ := classifyGoal{}.Run(ctx)
	if g := r.Data["goal"].(map[string]any); g["goal"] != "a narrower goal" {
		t.Errorf("goal = %v, want the event's restatement", g["goal"])
	}
}

func TestClassifyGoalPassesOnARecordedDecisionWithoutReading(t *testing.T) {
	fake := &obFake{}
	ctx := goalCtx(fake)
	ctx.Decisions = map[string]any{goalDecision: map[string]any{"at": "2026-01-01T00:00:00Z"}}
	r, _ := classifyGoal{}.Run(ctx)
	want := map[string]any{"outcome": graph.OutcomeDefined, "decision": goalDecision}
	if r.Status != graph.StatusPass || !reflect.DeepEqual(r.Data, want) {
		t.Fatalf("got %s %v, want pass %v", r.Status, r.Data, want)
	}
	if len(fake.Calls) > 0 {
		t.Errorf("called out: %v", fake.ops())
	}
}

func TestClassifyGoalWaitsThroughAnOutage(t *testing.T) {
	r, err := classifyGoal{}.Run(goalCtx(&obBroken{}))
	if err != nil || r.Status != graph.StatusWait {
		t.Fatalf("got %s %v, want wait", r.Status, err)
	}
}

func TestClassifyGoalRecordsAFailedConfirmationButStillReleases(t *testing.T) {
	ctx := goalCtx(graph.NoIntegration{})
	ctx.Event = eventOf("@owner", goalComment)
	r, _ := classifyGoal{}.Run(ctx)
	if r.Status != graph.StatusPass || r.Data["error"] == nil || r.Data["goal"] == nil {
		t.Fatalf("got %s %v, want pass with the goal and data[error]", r.Status, r.Data)
	}
}

func TestClassifyGoalUnderReadOnlyReadsOnlyTheEvent(t *testing.T) {
	fake := &obFake{Thread: []map[string]any{{"author": "owner", "body": goalComment}}}
	ctx := goalCtx(fake)
	ctx.ReadOnly = true
	if r, _ := (classifyGoal{}).Run(ctx); r.Status != graph.StatusWait {
		t.Errorf("status = %s, want wait: the thread is not read under check", r.Status)
	}
	ctx.Event = eventOf("@owner", goalComment)
	if r, _ := (classifyGoal{}).Run(ctx); r.Status != graph.StatusPass {
		t.Errorf("status = %s, want pass from the event", r.Status)
	}
	if len(fake.Calls) > 0 {
		t.Errorf("called out under read-only: %v", fake.ops())
	}
}
