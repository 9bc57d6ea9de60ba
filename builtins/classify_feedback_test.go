package builtins

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/reply"
)

// ctGate is a context for a human gate with the given allowlist and comments,
// each given as author, body pairs.
func ctGate(t *testing.T, allowed []string, authorBody ...string) *graph.Context {
	ctx := ctCtx(t, nil, nil)
	ctx.Node = &graph.Node{ID: "design-approval", Actor: graph.ActorHuman}
	ctx.Settings.AuthorizedUsers = allowed
	ctx.Event = &graph.Event{}
	for i := 0; i+1 < len(authorBody); i += 2 {
		ctx.Event.Comments = append(ctx.Event.Comments, graph.Comment{Author: authorBody[i], Body: authorBody[i+1]})
	}
	return ctx
}

func TestClassifyFeedbackWaitsWithoutAnEvent(t *testing.T) {
	ctx := ctGate(t, []string{"owner"})
	ctx.Event = nil
	r := ctRun(t, classifyFeedback{}, ctx)
	ctWantStatus(t, r, graph.StatusWait)
	if r.Messages[0].Text != "no authorized feedback yet" {
		t.Errorf("got %q", r.Messages[0].Text)
	}
}

func TestClassifyFeedbackNeverReadsAnUnauthorizedComment(t *testing.T) {
	ctWantStatus(t, ctRun(t, classifyFeedback{}, ctGate(t, []string{"owner"}, "drive-by", "approved, ship it")), graph.StatusWait)
	ctWantStatus(t, ctRun(t, classifyFeedback{}, ctGate(t, []string{"owner"}, "", "approved")), graph.StatusWait)
}

func TestClassifyFeedbackFailsClosedOnAnEmptyAllowlist(t *testing.T) {
	ctWantStatus(t, ctRun(t, classifyFeedback{}, ctGate(t, nil, "owner", "approved")), graph.StatusWait)
}

func TestClassifyFeedbackIgnoresItsOwnComments(t *testing.T) {
	body := "Please review. approved?\n\n" + selfCommentMarker + "\n"
	ctWantStatus(t, ctRun(t, classifyFeedback{}, ctGate(t, []string{"owner"}, "owner", body)), graph.StatusWait)
}

func TestClassifyFeedbackMatchesLoginsCaseInsensitivelyWithOrWithoutAt(t *testing.T) {
	for _, pair := range [][2]string{{"Owner", "owner"}, {"@owner", "owner"}, {"owner", "@OWNER"}} {
		r := ctRun(t, classifyFeedback{}, ctGate(t, []string{pair[1]}, pair[0], "lgtm"))
		ctWantStatus(t, r, graph.StatusPass)
	}
}

func TestClassifyFeedbackClassifiesTheDecision(t *testing.T) {
	cases := []struct {
		name     string
		comments []string
		status   graph.Status
		outcome  string
	}{
		{"plain approval", []string{"owner", "approved"}, graph.StatusPass, graph.OutcomeApproved},
		{"lgtm", []string{"owner", "LGTM"}, graph.StatusPass, graph.OutcomeApproved},
		{"hedged approval", []string{"owner", "approved, but tighten the nit"}, graph.StatusPass, graph.OutcomeApprovedWithComments},
		{"two comments", []string{"owner", "a question first", "owner", "ship it"}, graph.StatusPass, graph.OutcomeApprovedWithComments},
		{"changes outrank approval", []string{"owner", "looks good overall, but changes requested on the API"}, graph.StatusPass, graph.OutcomeChangesRequested},
		{"rejected", []string{"owner", "Rejected."}, graph.StatusPass, graph.OutcomeChangesRequested},
		{"a question", []string{"owner", "why is this a node and not a hook?"}, graph.StatusWait, ""},
		{"only outsiders decide", []string{"drive-by", "approved", "owner", "hmm"}, graph.StatusWait, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ctRun(t, classifyFeedback{}, ctGate(t, []string{"owner"}, tc.comments...))
			ctWantStatus(t, r, tc.status)
			if got := r.DeclaredOutcome(); got != tc.outcome {
				t.Errorf("outcome %q, want %q", got, tc.outcome)
			}
		})
	}
}

func TestClassifyFeedbackPassesOnOnlyTheAuthorizedComments(t *testing.T) {
	r := ctRun(t, classifyFeedback{}, ctGate(t, []string{"owner"}, "drive-by", "rejected", "owner", "approved"))
	ctWantStatus(t, r, graph.StatusPass)
	want := []any{map[string]any{"author": "owner", "body": "approved"}}
	if !reflect.DeepEqual(r.Data["comments"], want) || r.Data["outcome"] != graph.OutcomeApproved {
		t.Errorf("data %v", r.Data)
	}
}

func TestClassifyFeedbackTakesNoParameters(t *testing.T) {
	if err := (classifyFeedback{}).CheckParams(map[string]any{}); err != nil {
		t.Error(err)
	}
	err := (classifyFeedback{}).CheckParams(map[string]any{"keywords": []any{"ok"}})
	if err == nil || !strings.Contains(err.Error(), "with.keywords: unknown parameter; classify-feedback takes no parameters") {
		t.Errorf("got %v", err)
	}
}

func TestClassifyFeedbackNeverApprovesOnANegationAndSaysWhy(t *testing.T) {
	r := ctRun(t, classifyFeedback{}, ctGate(t, []string{"owner"}, "owner", "This is not approved yet: the security section is empty. LGTM?"))
	ctWantStatus(t, r, graph.StatusWait)
	want := `the feedback so far does not decide; the gate stays open ("approved" read as negated; "lgtm" read as a question)`
	if r.Messages[0].Text != want {
		t.Errorf("message %q, want %q", r.Messages[0].Text, want)
	}
}

func TestClassifyFeedbackReadsAReviewByItsState(t *testing.T) {
	ctx := ctGate(t, []string{"owner"})
	ctx.Event.Comments = []graph.Comment{{Author: "owner", Review: "approved"}}
	r := ctRun(t, classifyFeedback{}, ctx)
	if r.DeclaredOutcome() != graph.OutcomeApproved {
		t.Errorf("an approving review: outcome %q", r.DeclaredOutcome())
	}
	ctx.Event.Comments = []graph.Comment{{Author: "owner", Review: "changes_requested", Body: "lgtm apart from the API"}}
	if r := ctRun(t, classifyFeedback{}, ctx); r.DeclaredOutcome() != graph.OutcomeChangesRequested {
		t.Errorf("a review requesting changes: outcome %q", r.DeclaredOutcome())
	}
}

// The reply package spells the graph's outcomes itself, being a leaf: they
// must be the same words.
func TestReplyOutcomesAreTheGraphsOutcomes(t *testing.T) {
	for got, want := range map[reply.Outcome]string{
		reply.Approved:             graph.OutcomeApproved,
		reply.ApprovedWithComments: graph.OutcomeApprovedWithComments,
		reply.ChangesRequested:     graph.OutcomeChangesRequested,
	} {
		if string(got) != want {
			t.Errorf("reply outcome %q, graph's %q", got, want)
		}
	}
}

// A pull request review's state is the reviewer's decision, read before
// its words; a commented review is read by its words alone.
func TestClassifyFeedbackReadsAReviewsStateBeforeItsWords(t *testing.T) {
	for _, tc := range []struct {
		name     string
		comments []graph.Comment
		status   graph.Status
		outcome  string
	}{
		{"approved in no words", []graph.Comment{{Author: "owner", Review: "approved"}}, graph.StatusPass, graph.OutcomeApproved},
		{"approved with a nit", []graph.Comment{{Author: "owner", Body: "nit: rename x", Review: "approved"}}, graph.StatusPass, graph.OutcomeApprovedWithComments},
		{"approved beside another comment", []graph.Comment{{Author: "owner", Body: "why 410?"}, {Author: "owner", Review: "approved"}}, graph.StatusPass, graph.OutcomeApprovedWithComments},
		{"changes requested whatever the words", []graph.Comment{{Author: "owner", Body: "looks good otherwise", Review: "changes_requested"}}, graph.StatusPass, graph.OutcomeChangesRequested},
		{"changes requested outrank an approval", []graph.Comment{{Author: "owner", Review: "approved"}, {Author: "owner", Review: "changes_requested"}}, graph.StatusPass, graph.OutcomeChangesRequested},
		{"commented in no words", []graph.Comment{{Author: "owner", Review: "commented"}}, graph.StatusWait, ""},
		{"commented in the words of an approval", []graph.Comment{{Author: "owner", Body: "LGTM", Review: "commented"}}, graph.StatusPass, graph.OutcomeApproved},
		{"an outsider's approval", []graph.Comment{{Author: "drive-by", Review: "approved"}}, graph.StatusWait, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctGate(t, []string{"owner"})
			ctx.Event.Comments = tc.comments
			r := ctRun(t, classifyFeedback{}, ctx)
			ctWantStatus(t, r, tc.status)
			if got := r.DeclaredOutcome(); got != tc.outcome {
				t.Errorf("outcome %q, want %q", got, tc.outcome)
			}
		})
	}
}

func TestClassifyFeedbackSaysARecordedApprovalIsNotVerified(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	const unverified = ", not verified (run with --replies github)"
	cases := []struct {
		name     string
		recorded *graph.Recorded
		want     string
	}{
		{"author and time", &graph.Recorded{Outcome: "approved", By: "alice", At: at},
			"approval recorded by alice at 2026-11-30T10:00:00Z" + unverified},
		{"no author", &graph.Recorded{Outcome: "approved", At: at},
			"approval recorded at 2026-11-30T10:00:00Z" + unverified},
		{"no time", &graph.Recorded{Outcome: "approved", By: "alice"},
			"approval recorded by alice" + unverified},
		{"with comments, two authors", &graph.Recorded{Outcome: "approved-with-comments", By: "alice, bob", At: at},
			"approval recorded (with comments) by alice, bob at 2026-11-30T10:00:00Z" + unverified},
		{"a bot", &graph.Recorded{Outcome: "approved", By: "relay[bot]", At: at},
			"approval recorded by relay[bot] at 2026-11-30T10:00:00Z" + unverified},
		{"an author that is no login is not repeated", &graph.Recorded{Outcome: "approved", By: "alice\n::error::forged", At: at},
			"approval recorded at 2026-11-30T10:00:00Z" + unverified},
		{"no recorded approval", nil, "no authorized feedback yet"},
		{"changes requested is no approval", &graph.Recorded{Outcome: "changes-requested", By: "alice", At: at}, "no authorized feedback yet"},
		{"a selection is no approval", &graph.Recorded{Outcome: "selected", By: "alice", At: at}, "no authorized feedback yet"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := ctGate(t, []string{"alice"})
			ctx.Event, ctx.Recorded = nil, c.recorded
			r := ctRun(t, classifyFeedback{}, ctx)
			ctWantStatus(t, r, graph.StatusWait)
			if got := r.Messages[0].Text; got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}
