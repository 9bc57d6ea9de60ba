package route

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/the-loop/the-loop/channels"
)

func merged(t *testing.T, number int, actor string, isMerged bool) *delivery {
	d := octokit(t, "pull_request/closed.payload.json", number, actor)
	d.p["pull_request"].(map[string]any)["merged"] = isMerged
	return d
}

func issueClosed(t *testing.T, number int, actor string) *delivery {
	return octokit(t, "issues/reopened.payload.json", number, actor).set("action", "closed")
}

// A merged pull request that delivers a work item drives its inner loop to
// complete, as a forced move recorded against the-loop with the merge as
// its reason: whoever merged, since GitHub lets only those who may.
func TestAMergedPullRequestCompletesItsInnerLoop(t *testing.T) {
	for _, who := range []string{"alice", "mallory", "github-merge-queue[bot]"} {
		t.Run(who, func(t *testing.T) {
			e, rel := startedAtPRApproval(t)
			out, err := e.process(merged(t, 30, who, true).build())
			f := wantRouted(t, out, err)
			if f["ended"] != "pr-merged" || f["to"] != "complete" || f["node"] != "pr-approval" {
				t.Errorf("fields = %v", f)
			}
			st := e.state(rel)
			if st.CurrentNode != "complete" {
				t.Fatalf("the inner loop is at %s, want complete", st.CurrentNode)
			}
			data := e.read(rel)
			if !strings.Contains(data, "pull request github:acme/shop#30 merged") || !strings.Contains(data, `"the-loop"`) {
				t.Errorf("the forced move does not say why or who:\n%s", data)
			}
			if st := e.state("docs/specs/issue-12/graph-state.json"); st.CurrentNode != "requirements-approval" {
				t.Errorf("the merge moved the work item's own loop to %s", st.CurrentNode)
			}
		})
	}
}

// Every end the-loop does nothing with says so.
func TestAnEndThatChangesNothingSaysSo(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(e *env)
		d     func(t *testing.T) *delivery
		want  string
	}{
		{"a pull request closed unmerged", nil, func(t *testing.T) *delivery { return merged(t, 30, "alice", false) }, DropPRClosedUnmerged},
		{"merged, its inner loop never entered", func(e *env) {
			os.RemoveAll(e.checkout + "/docs/specs/issue-12/pr-loops")
		}, func(t *testing.T) *delivery { return merged(t, 30, "alice", true) }, DropPRLoopNotRunning},
		{"merged, its inner loop complete already", func(e *env) {
			e.innerLoopAt(30, "complete", time.Now())
		}, func(t *testing.T) *delivery { return merged(t, 30, "alice", true) }, DropPRLoopNotRunning},
		{"merged while the item is paused", func(e *env) {
			e.bind("github:acme/shop#12", channels.CommandPause)
		}, func(t *testing.T) *delivery { return merged(t, 30, "alice", true) }, DropPaused},
		{"merged, graph driving off", func(e *env) {}, func(t *testing.T) *delivery { return merged(t, 30, "alice", true) }, DropGraphDisabled},
		{"merged, linked to nothing bound", nil, func(t *testing.T) *delivery {
			d := merged(t, 31, "alice", true)
			d.p["pull_request"].(map[string]any)["body"] = "Closes #77"
			return d
		}, channels.DropNoWorkItem},
		{"an issue closed with nothing recorded", func(e *env) {
			e.bind("github:acme/shop#12", "")
			ref, _ := channels.ParseRef("github:acme/shop#12")
			e.bindings.ClearControl(ref)
		}, func(t *testing.T) *delivery { return issueClosed(t, 12, "alice") }, DropWorkItemClosed},
		{"an issue nobody bound closed", nil, func(t *testing.T) *delivery { return issueClosed(t, 40, "alice") }, channels.DropNoWorkItem},
		{"an issue reopened", nil, func(t *testing.T) *delivery { return issueClosed(t, 12, "alice").set("action", "reopened") }, DropNotANewComment},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config := ""
			if tc.want == DropGraphDisabled {
				config = "routing:\n  authorizedUsers: [alice]\n  graph:\n    enabled: false\n"
			}
			e := newEnv(t, config)
			e.bind("github:acme/shop#12", channels.CommandStart)
			rel := e.innerLoopAt(30, "pr-approval", time.Now().Add(-time.Minute))
			if tc.setup != nil {
				tc.setup(e)
			}
			before := e.read(rel)
			out, err := e.process(tc.d(t).build())
			wantDropped(t, out, err, tc.want)
			if e.read(rel) != before {
				t.Errorf("the inner loop changed:\n%s", e.read(rel))
			}
			if ops := e.in.ops(); contains(ops, "add-comment") {
				t.Errorf("an end that changed nothing posted: %v", ops)
			}
		})
	}
}

// The work item's own end forgets its control record, so that a reopened
// item starts from a clean slate: closed by anyone, its issue or (when the
// pull request is what is bound) its pull request.
func TestTheWorkItemsOwnEndForgetsItsControlRecord(t *testing.T) {
	for _, tc := range []struct {
		name, ref string
		d         func(t *testing.T) *delivery
		ended     string
	}{
		{"its issue closed", "github:acme/shop#12", func(t *testing.T) *delivery { return issueClosed(t, 12, "mallory") }, "issue-closed"},
		{"its pull request merged", "github:acme/shop#30", func(t *testing.T) *delivery { return merged(t, 30, "alice", true) }, "pr-merged"},
		{"its pull request closed", "github:acme/shop#30", func(t *testing.T) *delivery { return merged(t, 30, "alice", false) }, "pr-closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "")
			e.bind(tc.ref, channels.CommandStop)
			before := e.read("docs/specs/issue-12/graph-state.json")
			out, err := e.process(tc.d(t).build())
			f := wantRouted(t, out, err)
			if f["ended"] != tc.ended || f["effect"] != "control-cleared" || f["command"] != channels.CommandStop {
				t.Errorf("fields = %v", f)
			}
			if b := e.binding(tc.ref); b.Control != nil {
				t.Errorf("the control record stayed: %+v", b.Control)
			}
			if e.read("docs/specs/issue-12/graph-state.json") != before {
				t.Error("an end moved the work item's graph")
			}
			// and a start is needed again
			out, err = e.process(newComment("after", "acme/shop", 12, "alice", "approved").build())
			if tc.ref == "github:acme/shop#12" {
				wantDropped(t, out, err, DropAwaitingStart)
			}
		})
	}
}

// A merge whose inner loop cannot be driven is a fault: the delivery is
// kept for another try, and the state is as it was.
func TestAMergeThatCannotBeAppliedIsAFault(t *testing.T) {
	e, rel := startedAtPRApproval(t)
	writeFile(t, e.checkout+"/.the-loop/harness-config.yaml", "version: [\n")
	before := e.read(rel)
	if _, err := e.process(merged(t, 30, "alice", true).build()); err == nil {
		t.Fatal("a merge on a broken checkout was no error")
	}
	if e.read(rel) != before {
		t.Error("a failed merge changed the inner loop")
	}
	if _, ok := e.events.find("graph.link_failed"); !ok {
		t.Errorf("no graph.link_failed among %v", e.events.names())
	}
}

func TestAnEndWhoseBindingsCannotBeReadIsAnError(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", channels.CommandStart)
	os.WriteFile(e.bindings.Path(), []byte("{"), 0o600)
	for _, d := range []*delivery{issueClosed(t, 12, "alice"), merged(t, 30, "alice", true)} {
		if _, err := e.process(d.build()); err == nil {
			t.Errorf("%s on a corrupt bindings file was no error", d.event)
		}
	}
}
