package route

import (
	"testing"
	"time"

	"github.com/the-loop/the-loop/channels"
)

const prLoop = "docs/specs/issue-12/pr-loops/pr-30/graph-state.json"

// A review submitted on a pull request that closes the work item answers
// the pr-approval gate of that pull request's inner loop, by the state the
// reviewer chose; a commented review and a comment on the diff are read by
// their words, as any comment.
func TestAPullRequestReviewAnswersThePullRequestsApprovalGate(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    func(t *testing.T) *delivery
		want string // the inner loop's node after
		out  string // the outcome the gate gave, "" for a wait
	}{
		{"approved with no words", func(t *testing.T) *delivery {
			return octokit(t, "pull_request_review/submitted.payload.json", 30, "alice").review("approved", nil)
		}, "complete", "approved"},
		{"approved with words", func(t *testing.T) *delivery {
			return octokit(t, "pull_request_review/submitted.payload.json", 30, "alice").review("approved", "Ship it, nit: rename x")
		}, "complete", "approved-with-comments"},
		{"changes requested, whatever the words", func(t *testing.T) *delivery {
			return octokit(t, "pull_request_review/submitted.payload.json", 30, "alice").review("changes_requested", "looks good otherwise")
		}, "implementation", "changes-requested"},
		{"commented with no words", func(t *testing.T) *delivery {
			return octokit(t, "pull_request_review/submitted.payload.json", 30, "alice").review("commented", nil)
		}, "pr-approval", ""},
		{"commented in the words of an approval", func(t *testing.T) *delivery {
			return octokit(t, "pull_request_review/submitted.payload.json", 30, "alice").review("commented", "Approved")
		}, "complete", "approved"},
		{"a comment on the diff", func(t *testing.T) *delivery {
			return octokit(t, "pull_request_review_comment/created.payload.json", 30, "alice")
		}, "pr-approval", ""},
		{"a comment on the diff in the words of an approval", func(t *testing.T) *delivery {
			d := octokit(t, "pull_request_review_comment/created.payload.json", 30, "alice")
			d.p["comment"].(map[string]any)["body"] = "LGTM"
			return d
		}, "complete", "approved"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, rel := startedAtPRApproval(t)
			out, err := e.process(tc.d(t).build())
			f := wantRouted(t, out, err)
			if f["work_item"] != "github:acme/shop#12" || f["pull_request"] != "github:acme/shop#30" {
				t.Errorf("fields = %v", f)
			}
			if got := e.state(rel).CurrentNode; got != tc.want {
				t.Errorf("the inner loop is at %s, want %s (%v)", got, tc.want, f)
			}
			if got, _ := f["outcome"].(string); tc.out != "" && got != tc.out {
				t.Errorf("outcome %q, want %q", got, tc.out)
			}
			if st := e.state("docs/specs/issue-12/graph-state.json"); st.CurrentNode != "requirements-approval" {
				t.Errorf("a review moved the work item's own loop to %s", st.CurrentNode)
			}
		})
	}
}

func TestAReviewIsHeardOnlyFromAnAuthorizedPerson(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    func(t *testing.T) *delivery
		want string
	}{
		{"someone not on the allowlist", func(t *testing.T) *delivery {
			return octokit(t, "pull_request_review/submitted.payload.json", 30, "mallory").review("approved", nil)
		}, channels.DropUnauthorizedActor},
		{"a bot", func(t *testing.T) *delivery {
			d := octokit(t, "pull_request_review/submitted.payload.json", 30, "alice").review("approved", nil)
			d.p["review"].(map[string]any)["user"].(map[string]any)["type"] = "Bot"
			return d
		}, channels.DropSelfAuthored},
		{"the-loop's own review", func(t *testing.T) *delivery {
			return octokit(t, "pull_request_review/submitted.payload.json", 30, "alice").review("approved", "Briefing\n"+marker)
		}, channels.DropSelfAuthored},
		{"a pull request that closes nothing bound", func(t *testing.T) *delivery {
			d := octokit(t, "pull_request_review/submitted.payload.json", 30, "alice").review("approved", nil)
			d.p["pull_request"].(map[string]any)["body"] = "Closes #77"
			return d
		}, channels.DropNoWorkItem},
		{"a review action that writes nothing", func(t *testing.T) *delivery {
			return octokit(t, "pull_request_review/submitted.payload.json", 30, "alice").review("approved", nil).set("action", "requested")
		}, DropNotANewComment},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, rel := startedAtPRApproval(t)
			out, err := e.process(tc.d(t).build())
			wantDropped(t, out, err, tc.want)
			if got := e.state(rel).CurrentNode; got != "pr-approval" {
				t.Errorf("a dropped review moved the inner loop to %s", got)
			}
		})
	}
}

// A review answers once: replayed under another delivery id, or
// dismissed after it moved the gate, it changes nothing; dismissed before
// anything acted on it, it is said so. Its id is its own: an issue comment
// of the same number acted on does not make it a replay.
func TestAReviewAnswersOnceAndADismissalUndoesNothing(t *testing.T) {
	e, rel := startedAtPRApproval(t)
	approval := octokit(t, "pull_request_review/submitted.payload.json", 30, "alice").review("approved", nil)
	id := approval.p["review"].(map[string]any)["id"].(int64)
	// an issue comment numbered as the review was acted on first
	ref, _ := channels.ParseRef("github:acme/shop#12")
	if err := e.bindings.Acted(ref, id); err != nil {
		t.Fatal(err)
	}
	out, err := e.process(approval.build())
	wantRouted(t, out, err)
	if got := e.state(rel).CurrentNode; got != "complete" {
		t.Fatalf("the approval left the inner loop at %s", got)
	}
	out, err = e.process(approval.withID("again").build())
	wantDropped(t, out, err, DropReplayed)

	dismissal := octokit(t, "pull_request_review/dismissed.payload.json", 30, "alice")
	dismissal.p["review"].(map[string]any)["id"] = id
	out, err = e.process(dismissal.build())
	wantDropped(t, out, err, DropAlreadyActed)
	if got := e.state(rel).CurrentNode; got != "complete" {
		t.Errorf("a dismissal moved the inner loop to %s", got)
	}

	// a review nothing acted on (the item was paused), dismissed
	e2, rel2 := startedAtPRApproval(t)
	e2.bind("github:acme/shop#12", channels.CommandPause)
	held := octokit(t, "pull_request_review/submitted.payload.json", 30, "alice").review("approved", nil)
	out, err = e2.process(held.build())
	wantDropped(t, out, err, DropPaused)
	dismissal = octokit(t, "pull_request_review/dismissed.payload.json", 30, "alice")
	dismissal.p["review"].(map[string]any)["id"] = held.p["review"].(map[string]any)["id"]
	out, err = e2.process(dismissal.build())
	wantDropped(t, out, err, DropReviewDismissed)
	if got := e2.state(rel2).CurrentNode; got != "pr-approval" {
		t.Errorf("the inner loop moved to %s", got)
	}
}

// A review written before the gate was entered answered something else.
func TestAReviewWrittenBeforeTheGateIsStale(t *testing.T) {
	e, _ := startedAtPRApproval(t)
	d := octokit(t, "pull_request_review/submitted.payload.json", 30, "alice").review("approved", nil)
	d.p["review"].(map[string]any)["submitted_at"] = time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	out, err := e.process(d.build())
	wantDropped(t, out, err, DropStale)
}

// A review takes no reaction of its own: it is acknowledged on the pull
// request.
func TestAReviewIsAcknowledgedOnThePullRequest(t *testing.T) {
	e, _ := startedAtPRApproval(t)
	out, err := e.process(octokit(t, "pull_request_review/submitted.payload.json", 30, "alice").review("approved", nil).build())
	wantRouted(t, out, err)
	var on []any
	for _, c := range e.in.calls {
		if c.Op == OpAddReaction {
			on = append(on, c.Params["commentId"], c.Params["ref"])
		}
	}
	if len(on) == 0 || on[0] != int64(0) || on[1] != "github:acme/shop#30" {
		t.Errorf("reactions on %v, want the pull request itself", on)
	}
}
