package builtins

import (
	"testing"

	"github.com/the-loop/the-loop/graph"
)

func TestDeclaresDoneMatchesTheCaseFile(t *testing.T) {
	type gateCase struct {
		Note string `yaml:"note"`
		Body string `yaml:"body"`
		Want string `yaml:"want"`
	}
	for _, tc := range gateCases[gateCase](t, "adhoc_reply.yaml") {
		t.Run(tc.Note, func(t *testing.T) {
			got := graph.OutcomeMoreWork
			if declaresDone(tc.Body) {
				got = graph.OutcomeDone
			}
			if got != tc.Want {
				t.Errorf("declaresDone(%q) reads as %s, want %s", tc.Body, got, tc.Want)
			}
		})
	}
}

func TestClassifyAdhocReply(t *testing.T) {
	cases := []struct {
		name       string
		event      *graph.Event
		authorized []string
		status     graph.Status
		outcome    string
	}{
		{"silence waits", nil, []string{"owner"}, graph.StatusWait, ""},
		{"an empty event waits", eventOf(), []string{"owner"}, graph.StatusWait, ""},
		{"a stranger's done leaves the gate open", eventOf("@drive-by", "done"), []string{"owner"}, graph.StatusWait, ""},
		{"an empty allowlist reads nothing", eventOf("@owner", "done"), nil, graph.StatusWait, ""},
		{"the harness cannot close its own item", eventOf("@owner", markSelfAuthored("done")), []string{"owner"}, graph.StatusWait, ""},
		{"a completion ends the item", eventOf("@owner", "that's all, thanks"), []string{"owner"}, graph.StatusPass, graph.OutcomeDone},
		{"anything else is more work", eventOf("@owner", "also update the README"), []string{"owner"}, graph.StatusPass, graph.OutcomeMoreWork},
		{"the newest comment decides (done)", eventOf("@owner", "tell me when you're done", "owner", "perfect, all done"), []string{"@owner"}, graph.StatusPass, graph.OutcomeDone},
		{"the newest comment decides (reopened)", eventOf("@owner", "looks good", "@owner", "actually, also rename the flag"), []string{"owner"}, graph.StatusPass, graph.OutcomeMoreWork},
		{"a done shown in code is more work", eventOf("@owner", "the bot prints `done` when it stops; it did not"), []string{"owner"}, graph.StatusPass, graph.OutcomeMoreWork},
		{"a quoted done is more work", eventOf("@owner", "> all done\n\nnot for the docs"), []string{"owner"}, graph.StatusPass, graph.OutcomeMoreWork},
		{"a stranger's later done does not count", eventOf("@owner", "fix the typo", "@drive-by", "done"), []string{"owner"}, graph.StatusPass, graph.OutcomeMoreWork},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := obCtx(nil, &graph.Node{ID: "review", Actor: graph.ActorHuman}, "")
			ctx.Settings.AuthorizedUsers = tc.authorized
			ctx.Event = tc.event
			r, err := classifyAdhocReply{}.Run(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != tc.status || r.DeclaredOutcome() != tc.outcome {
				t.Fatalf("got %s/%q, want %s/%q", r.Status, r.DeclaredOutcome(), tc.status, tc.outcome)
			}
			if r.Status == graph.StatusPass {
				if _, ok := r.Data["comments"].([]any); !ok {
					t.Errorf("data[comments] = %T, want the comments read", r.Data["comments"])
				}
			}
		})
	}
}
