package route

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/eventlog"
	"github.com/the-loop/the-loop/policy"
)

// edit is d's comment edited to body, by editor ("" for its author), at
// when.
func (d *delivery) edit(id, body, editor string) *delivery {
	c := *d
	c.id = id
	c.p = map[string]any{}
	for k, v := range d.p {
		c.p[k] = v
	}
	com := map[string]any{}
	for k, v := range d.p["comment"].(map[string]any) {
		com[k] = v
	}
	com["body"] = body
	c.p["comment"], c.p["action"] = com, "edited"
	if editor != "" {
		c.p["sender"] = map[string]any{"login": editor, "type": "User"}
	}
	return &c
}

func (d *delivery) deletion(id string) *delivery {
	c := d.edit(id, d.p["comment"].(map[string]any)["body"].(string), "")
	c.p["action"] = "deleted"
	return c
}

func TestAnEditIsReadAgainUntilTheCommentIsActedOn(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", channels.CommandStart)
	c := newComment("d1", "acme/shop", 12, "alice", "I'll read it tonight")
	out, err := e.process(c.build())
	if f := wantRouted(t, out, err); f["status"] != "wait" {
		t.Fatalf("a comment that decides nothing: %v", f)
	}
	// read again: the gate waited on it
	out, err = e.process(c.edit("d2", "I'll read it tonight. Read it: approved", "").build())
	if f := wantRouted(t, out, err); f["to"] != "design" {
		t.Fatalf("the edit that approves: %v", f)
	}
	// acted on now: neither a later edit nor a deletion changes anything
	for _, d := range []*delivery{c.edit("d3", "changes requested", ""), c.deletion("d4")} {
		out, err = e.process(d.build())
		wantDropped(t, out, err, DropAlreadyActed)
	}
	if st := e.state("docs/specs/issue-12/graph-state.json"); st.CurrentNode != "design" {
		t.Errorf("the item is at %s, want design", st.CurrentNode)
	}
}

func TestAnEditIsHeardOnlyFromSomeoneWhoseWordCounts(t *testing.T) {
	e := newEnv(t, "routing:\n  authorizedUsers: [alice, bob]\n")
	e.bind("github:acme/shop#12", channels.CommandStart)
	c := newComment("d1", "acme/shop", 12, "alice", "reading")
	e.process(c.build())
	out, err := e.process(c.edit("d2", "approved", "mallory").build())
	wantDropped(t, out, err, channels.DropUnauthorizedActor)
	out, err = e.process(c.edit("d3", "approved", "renovate[bot]").build())
	wantDropped(t, out, err, channels.DropUnauthorizedActor)
	// another authorized person's edit is read
	out, err = e.process(c.edit("d4", "approved", "bob").build())
	if f := wantRouted(t, out, err); f["to"] != "design" {
		t.Errorf("bob's edit: %v", f)
	}
}

func TestARevisionThatChangesNothingSaysSo(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", channels.CommandStart)
	// a deletion of a comment the gate waited on
	c := newComment("d1", "acme/shop", 12, "alice", "reading")
	e.process(c.build())
	out, err := e.process(c.deletion("d2").build())
	wantDropped(t, out, err, DropCommentDeleted)
	// an edit of a control command applied
	stop := newComment("d3", "acme/shop", 12, "alice", "the-loop pause")
	out, err = e.process(stop.build())
	wantRouted(t, out, err)
	out, err = e.process(stop.edit("d4", "the-loop pause, no: the-loop resume", "").build())
	wantDropped(t, out, err, DropAlreadyActed)
	if b := e.binding("github:acme/shop#12"); b.Command() != channels.CommandPause {
		t.Errorf("an edit of a command changed the record to %s", b.Command())
	}
	// an edit of a comment written before the gate the item waits at now
	e2 := newEnv(t, "")
	e2.bind("github:acme/shop#12", channels.CommandStart)
	old := newComment("d5", "acme/shop", 12, "alice", "reading")
	old.p["comment"].(map[string]any)["created_at"] = time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	e2.moveTo("docs/specs/issue-12/graph-state.json", "requirements-approval", time.Now())
	out, err = e2.process(old.edit("d6", "approved", "").build())
	wantDropped(t, out, err, DropStale)
}

// thread is a GitHub whose listing of issue 12's comments is what a test
// says it is: check --replies github reads it, as serve reads the
// deliveries of the same comments.
type thread struct {
	mu       sync.Mutex
	comments []map[string]any
}

func (th *thread) Name() string { return "github" }

func (th *thread) Call(op string, params map[string]any) (map[string]any, error) {
	th.mu.Lock()
	defer th.mu.Unlock()
	out := []any{}
	if op == "list-comments" && params["ref"] == "github:acme/shop#12" {
		for _, c := range th.comments {
			out = append(out, c)
		}
	}
	return map[string]any{"comments": out}, nil
}

// write, edit and remove change the listing as GitHub would.
func (th *thread) write(d *delivery) {
	th.mu.Lock()
	defer th.mu.Unlock()
	c := d.p["comment"].(map[string]any)
	th.comments = append(th.comments, map[string]any{"id": c["id"], "author": "alice", "body": c["body"],
		"created_at": c["created_at"], "updated_at": c["created_at"]})
}

func (th *thread) edit(d *delivery, at time.Time) {
	th.mu.Lock()
	defer th.mu.Unlock()
	c := d.p["comment"].(map[string]any)
	for _, m := range th.comments {
		if m["id"] == c["id"] {
			m["body"], m["updated_at"] = c["body"], at.UTC().Format(time.RFC3339)
		}
	}
}

func (th *thread) remove(d *delivery) {
	th.mu.Lock()
	defer th.mu.Unlock()
	id := d.p["comment"].(map[string]any)["id"]
	th.comments = slices.DeleteFunc(th.comments, func(m map[string]any) bool { return m["id"] == id })
}

// TestServeAndCheckReadOneCommentHistoryAlike drives one history of
// comments (written, edited, deleted) through serve's router and, after
// each step, through check --replies github reading the same thread, and
// compares what each says requirements-approval decided. They agree
// wherever both can know: at the gate while it is open, and once it moved
// on replies that stand. An edit or a deletion after the gate moved changes
// nothing for serve; check cannot read a body edited away or a comment
// deleted, and stops counting it (the gate reads wait), which never turns
// into a decision of its own.
func TestServeAndCheckReadOneCommentHistoryAlike(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", channels.CommandStart)
	th := &thread{}
	c1 := newComment("c1", "acme/shop", 12, "alice", "I'll read it tonight")
	c2 := newComment("c2", "acme/shop", 12, "alice", "one question first: why 410?")
	c3 := newComment("c3", "acme/shop", 12, "alice", "also: approved by the security team?")
	// written after the gate moved, a second apart (GitHub dates to the
	// second, and a reply of the very second the gate moved is its own)
	c3.p["comment"].(map[string]any)["created_at"] = time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339)
	for _, step := range []struct {
		name         string
		d            *delivery
		github       func()
		serve, check string // what each says the gate decided
	}{
		{"a comment that decides nothing", c1, func() { th.write(c1) }, "wait", "wait"},
		{"another, deleted", c2, func() { th.write(c2) }, "wait", "wait"},
		{"", c2.deletion("c2-del"), func() { th.remove(c2) }, "wait", "wait"},
		{"the first, edited to an approval", c1.edit("c1-ed", "Read it: approved", ""), func() { th.edit(c1.edit("", "Read it: approved", ""), time.Now()) }, "approved", "approved"},
		{"a comment written after the gate moved", c3, func() { th.write(c3) }, "approved", "approved"},
		{"", c3.deletion("c3-del"), func() { th.remove(c3) }, "approved", "approved"},
		{"the approval, edited after the gate moved", c1.edit("c1-ed2", "changes requested", ""), func() {
			th.edit(c1.edit("", "changes requested", ""), time.Now().Add(2*time.Second))
		}, "approved", "wait"},
		{"the approval, deleted", c1.deletion("c1-del"), func() { th.remove(c1) }, "approved", "wait"},
	} {
		step.github()
		if _, err := e.process(step.d.build()); err != nil {
			t.Fatalf("%s: serve: %v", step.d.id, err)
		}
		if got := e.servedVerdict(); got != step.serve {
			t.Errorf("%s (%s): serve says %s, want %s", step.d.id, step.name, got, step.serve)
		}
		if got := e.checkedVerdict(th); got != step.check {
			t.Errorf("%s (%s): check says %s, want %s", step.d.id, step.name, got, step.check)
		}
	}
}

// servedVerdict is what the state serve wrote says requirements-approval
// decided: its outcome once the item left it, else wait.
func (e *env) servedVerdict() string {
	st := e.state("docs/specs/issue-12/graph-state.json")
	if st.CurrentNode == "requirements-approval" {
		return "wait"
	}
	return st.Nodes["requirements-approval"].Outcome
}

// checkedVerdict is what check --replies github says requirements-approval
// decided, reading th.
func (e *env) checkedVerdict(th *thread) string {
	e.t.Helper()
	eng, err := policy.Open(policy.Options{Repo: e.checkout, CLI: e.router.CLI(), Replies: th, Events: eventlog.Discard})
	if err != nil {
		e.t.Fatal(err)
	}
	reps, err := eng.Check([]string{"issue-12"}, false, policy.Selector{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, n := range reps[0].Nodes {
		if n.Node == "requirements-approval" {
			if n.Status == "pass" {
				return n.Outcome
			}
			return n.Status
		}
	}
	e.t.Fatal("no requirements-approval in the report")
	return ""
}

// A comment the gate only waited on is not recorded as acted on: handed
// to the gate again under another delivery id, it reads the same words at
// the same gate, and decides the same nothing.
func TestAReplayOfACommentTheGateWaitedOnDecidesNothingAgain(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", channels.CommandStart)
	c := newComment("d1", "acme/shop", 12, "alice", "reading")
	for _, id := range []string{"d1", "d1-again"} {
		out, err := e.process(c.withID(id).build())
		if f := wantRouted(t, out, err); f["status"] != "wait" {
			t.Fatalf("%s: %v", id, f)
		}
	}
	if b := e.binding("github:acme/shop#12"); len(b.Acted) != 0 {
		t.Errorf("a comment the gate waited on was recorded: %v", b.Acted)
	}
}

// Comments on a pull request's diff follow the same rule, under ids of
// their own.
func TestADiffCommentIsEditedAndDeletedByTheSameRule(t *testing.T) {
	e, rel := startedAtPRApproval(t)
	c := octokit(t, "pull_request_review_comment/created.payload.json", 30, "alice")
	id := c.p["comment"].(map[string]any)["id"].(int64)
	ref, _ := channels.ParseRef("github:acme/shop#12")
	e.bindings.Acted(ref, id) // an issue comment of the same number
	out, err := e.process(c.build())
	wantRouted(t, out, err)
	edited := c.edit("d-ed", "LGTM", "")
	edited.event = "pull_request_review_comment"
	out, err = e.process(edited.build())
	if f := wantRouted(t, out, err); f["to"] != "complete" {
		t.Fatalf("the edit that approves: %v", f)
	}
	deleted := c.deletion("d-del")
	deleted.event = "pull_request_review_comment"
	out, err = e.process(deleted.build())
	wantDropped(t, out, err, DropAlreadyActed)
	if got := e.state(rel).CurrentNode; got != "complete" {
		t.Errorf("the inner loop is at %s", got)
	}
}

func TestAnAckIDNamesOneReplyOfOneKind(t *testing.T) {
	seen := map[int64]string{}
	for _, src := range []source{sourceIssueComment, sourceReview, sourceReviewComment} {
		for _, id := range []int64{1, 2, 3, 1 << 40} {
			in := &inbound{source: src, comment: &comment{ID: id}}
			k := in.ackID()
			if prev, dup := seen[k]; dup {
				t.Errorf("ackID %d of %v/%d is also %s's", k, src, id, prev)
			}
			seen[k] = fmt.Sprint(src, "/", id)
		}
	}
}
