package route

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/github"
	"github.com/the-loop/the-loop/channels/github/githubtest"
)

// The signature covers the body and not the delivery id: anyone who saw a
// signed delivery can send it again under a new id. The same comment never
// acts twice, and a comment older than what it would act on acts not at
// all.
func TestACapturedApprovalCannotPassALaterGate(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", channels.CommandStart)
	approval := newComment("d1", "acme/shop", 12, "alice", "Approved")
	out, err := e.process(approval.build())
	wantRouted(t, out, err)
	if st := e.state("docs/specs/issue-12/graph-state.json"); st.CurrentNode != "design" {
		t.Fatalf("the item is at %q, want design", st.CurrentNode)
	}
	// The item goes on to design-approval, as an agent would take it.
	e.moveTo("docs/specs/issue-12/graph-state.json", "design-approval", time.Now().Add(5*time.Minute))

	replay := *approval
	replay.id = "d1-again"
	if out, err := e.process(replay.build()); err != nil || out.Reason != DropReplayed {
		t.Errorf("the same comment again: %+v %v, want %s", out, err, DropReplayed)
	}
	// Another comment, written before design-approval was entered.
	old := newComment("d2", "acme/shop", 12, "alice", "Approved")
	if out, err := e.process(old.build()); err != nil || out.Reason != DropStale {
		t.Errorf("an approval written before the gate: %+v %v, want %s", out, err, DropStale)
	}
	if st := e.state("docs/specs/issue-12/graph-state.json"); st.CurrentNode != "design-approval" {
		t.Errorf("a replay moved the item to %q", st.CurrentNode)
	}
}

func TestAStartWrittenBeforeAStopDoesNotReArmTheItem(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", channels.CommandStart)
	start := newComment("d1", "acme/shop", 12, "alice", "the-loop start")
	start.p["comment"].(map[string]any)["created_at"] = "2026-06-01T09:00:00Z"
	stop := newComment("d2", "acme/shop", 12, "alice", "the-loop stop")
	stop.p["comment"].(map[string]any)["created_at"] = "2026-06-01T10:00:00Z"
	out, err := e.process(stop.build())
	wantRouted(t, out, err)
	if out, err := e.process(start.build()); err != nil || out.Reason != DropStale {
		t.Errorf("an earlier start after a stop: %+v %v, want %s", out, err, DropStale)
	}
	if e.binding("github:acme/shop#12").Command() != channels.CommandStop {
		t.Error("the stale start was recorded")
	}
	undated := newComment("d3", "acme/shop", 12, "alice", "Approved")
	delete(undated.p["comment"].(map[string]any), "created_at")
	if out, _ := e.process(undated.build()); out.Reason != DropStale {
		t.Errorf("a comment that says not when it was written: %+v, want %s", out, DropStale)
	}
}

// The router and the GitHub integration name add-reaction's comment one
// way: the reaction lands on the comment, not on the issue.
func TestAReactionLandsOnTheCommentThroughGitHub(t *testing.T) {
	srv := githubtest.NewServer()
	defer srv.Close()
	srv.AddIssue("acme/shop#12", githubtest.Issue{})
	in, err := github.New(github.Options{Transport: github.TransportAPI, BaseURL: srv.URL,
		Env: func(k string) string { return map[string]string{"GH_TOKEN": "t0ken"}[k] }})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, "")
	e.router.integration = in
	e.bind("github:acme/shop#12", channels.CommandStart)
	d := newComment("d1", "acme/shop", 12, "alice", "Approved")
	id := d.p["comment"].(map[string]any)["id"].(int64)
	out, err := e.process(d.build())
	wantRouted(t, out, err)
	var paths []string
	for _, c := range srv.Calls() {
		if strings.HasSuffix(c.Path, "/reactions") {
			paths = append(paths, c.Method+" "+c.Path)
		}
	}
	want := "POST /repos/acme/shop/issues/comments/" + strconv.FormatInt(id, 10) + "/reactions"
	if len(paths) == 0 || paths[0] != want {
		t.Errorf("reactions went to %v, want %s", paths, want)
	}
}

// moveTo puts the item's state at node, entered at when.
func (e *env) moveTo(rel, node string, when time.Time) {
	e.t.Helper()
	p := filepath.Join(e.checkout, filepath.FromSlash(rel))
	data, err := os.ReadFile(p)
	if err != nil {
		e.t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(data, &st); err != nil {
		e.t.Fatal(err)
	}
	st["currentNode"] = node
	nodes, _ := st["nodes"].(map[string]any)
	if nodes == nil {
		nodes = map[string]any{}
	}
	entered := ""
	if !when.IsZero() {
		entered = when.UTC().Format(time.RFC3339)
	}
	nodes[node] = map[string]any{"attempts": 0, "outcome": "", "enteredAt": entered, "exitedAt": "", "lastBlock": "", "forced": false}
	st["nodes"] = nodes
	out, _ := json.MarshalIndent(st, "", "  ")
	if err := os.WriteFile(p, out, 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// A checkout that is not there (moved, not mounted yet) is a fault: the
// delivery is released to be tried again, not dropped as foreign.
func TestAMissingCheckoutIsAFaultNotAForeignOne(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", channels.CommandStart)
	// An empty mount point, then no directory at all.
	if err := os.RemoveAll(e.checkout); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(e.checkout, 0o755)
	for _, body := range []string{"Approved", "the-loop start", "Approved again"} {
		if body == "Approved again" {
			os.Remove(e.checkout)
		}
		out, err := e.process(newComment("d-"+body, "acme/shop", 12, "alice", body).build())
		if err == nil || !strings.Contains(err.Error(), "bound to github:acme/shop#12") {
			t.Errorf("%s on a missing checkout: %+v %v, want an error naming it", body, out, err)
		}
	}
}

// The ingress orders deliveries by the work item the router names: a
// comment on a pull request that delivers the item is in the item's order.
func TestAPullRequestCommentIsOrderedWithItsWorkItem(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", channels.CommandStart)
	onPR := newComment("d1", "acme/shop", 30, "alice", "the-loop pause").onPR("Fixes #12").build()
	if got := e.router.ItemOf(onPR.Body); got != "github:acme/shop#12" {
		t.Errorf("a comment on a pull request that fixes #12 is ordered with %q", got)
	}
	unbound := newComment("d2", "acme/shop", 40, "alice", "hello").build()
	if got := e.router.ItemOf(unbound.Body); got != "github:acme/shop#40" {
		t.Errorf("an unbound issue's comment is ordered with %q", got)
	}
}

// The ordering key is not the subject: a comment on a pull request that
// delivers the item, handed over under the item's key, still drives the
// pull request's own loop, never the item's gate.
func TestAPullRequestCommentOrderedWithItsItemStillDrivesThePullRequest(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", channels.CommandStart)
	d := newComment("d1", "acme/shop", 40, "alice", "approved").onPR("Closes #12").build()
	d.Item = e.router.ItemOf(d.Body)
	if d.Item != "github:acme/shop#12" {
		t.Fatalf("ordered with %q", d.Item)
	}
	e.process(d)
	if st := e.state("docs/specs/issue-12/graph-state.json"); st.CurrentNode != "requirements-approval" {
		t.Errorf("a pull request's approval moved the work item to %q", st.CurrentNode)
	}
}

// An answer dropped while the item was held stays dropped once it is
// released; a gate the state does not date refuses every answer.
func TestAnAnswerWrittenBeforeTheItemWasReleasedOrUndatedIsStale(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", channels.CommandStart)
	pause := newComment("d1", "acme/shop", 12, "alice", "the-loop pause")
	out, err := e.process(pause.build())
	wantRouted(t, out, err)
	approval := newComment("d2", "acme/shop", 12, "alice", "Approved")
	if out, _ := e.process(approval.build()); out.Reason != DropPaused {
		t.Fatalf("an approval while paused: %+v", out)
	}
	resume := newComment("d3", "acme/shop", 12, "alice", "the-loop resume")
	out, err = e.process(resume.build())
	wantRouted(t, out, err)
	replay := *approval
	replay.id = "d2-again"
	if out, _ := e.process(replay.build()); out.Reason != DropStale {
		t.Errorf("the paused approval replayed after resume: %+v, want %s", out, DropStale)
	}

	e.moveTo("docs/specs/issue-12/graph-state.json", "requirements-approval", time.Time{})
	if out, _ := e.process(newComment("d4", "acme/shop", 12, "alice", "Approved").build()); out.Reason != DropStale {
		t.Errorf("an undated gate: %+v, want %s", out, DropStale)
	}
}
