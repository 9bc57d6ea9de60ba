package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/the-loop/the-loop/builtins"
	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/github"
	"github.com/the-loop/the-loop/channels/github/githubtest"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/policy"
	"github.com/the-loop/the-loop/repo"
)

// octokitEcho is GitHub's own example of an issue_comment created
// delivery (octokit/webhooks, see testdata/README.md), edited to carry c
// on acme/shop#12.
func octokitEcho(t *testing.T, c githubtest.Comment) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "octokit", "issue_comment.created.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	at := c.CreatedAt.UTC().Format(time.RFC3339)
	comment := p["comment"].(map[string]any)
	comment["id"], comment["body"], comment["created_at"], comment["updated_at"] = c.ID, c.Body, at, at
	comment["user"].(map[string]any)["login"] = c.Author
	p["sender"].(map[string]any)["login"] = c.Author
	p["issue"].(map[string]any)["number"] = 12
	r := p["repository"].(map[string]any)
	r["full_name"], r["name"] = "acme/shop", "shop"
	r["owner"].(map[string]any)["login"] = "acme"
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTheLoopNeverAnswersItself is issue 20's third item, end to end. The
// operator, the-loop-bot, is on routing.authorizedUsers (so that the
// ledger's relays of Slack answers land) and the-loop posts with the
// operator's token, as serve's operators do. github:acme/shop#12 is
// started and waits at requirements-approval. Every kind of comment
// the-loop writes is then posted through the GitHub integration to the
// fake GitHub, each worded to approve: the audit comments of graph force
// and graph skip, what the outbound hooks and the gates post, the ledger's
// record of a reply; and one comment the token posted unmarked, as an
// older build would have. GitHub's webhook for each, in octokit's shape,
// answers nothing through serve, and check --replies github still waits.
// GitHub is asked who the token is once in all, and the state root keeps
// the answer. A person's approval then passes, through check and serve.
func TestTheLoopNeverAnswersItself(t *testing.T) {
	r := startSlackRig(t, rigOptions{publish: []string{"work-item.reply", "gate.feedback"}})
	if got := r.write("d-start", "jc1993", "the-loop start"); got != "routed" {
		t.Fatalf("start: %s, want routed\n%s", got, r.stderr.String())
	}
	if n := r.node(); n != "requirements-approval" {
		t.Fatalf("after start issue-12 is at %q, want requirements-approval", n)
	}
	before := len(r.comments())
	requirements := filepath.Join(r.checkout, "docs", "specs", "issue-12", "requirements.md")
	reqBefore, _ := os.ReadFile(requirements)

	// --- graph force and graph skip, on another checkout of the same work
	// item, post their audit comments to its issue
	scratch := filepath.Join(t.TempDir(), "shop")
	if err := os.CopyFS(scratch, os.DirFS(r.checkout)); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runCLI(t, nil, "graph", "skip", "issue-12", "review-chain", "--reason", "approved: docs only, lgtm", "--actor", e2eOperator, "--repo", scratch, "--config", r.cfg); code != 0 {
		t.Fatalf("graph skip: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runCLI(t, nil, "graph", "force", "issue-12", "--to", "design", "--reason", "approved at the review", "--actor", e2eOperator, "--repo", scratch, "--config", r.cfg); code != 0 {
		t.Fatalf("graph force: exit %d\n%s", code, stderr)
	}

	// --- the hooks that post, and the ledger, through the same integration
	cli, err := policy.LoadCLIConfig(r.cfg)
	if err != nil {
		t.Fatal(err)
	}
	gh, err := github.FromConfig(cli, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	co, err := repo.Open(scratch)
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close()
	hooks := []struct {
		hook   string
		params map[string]any
		event  string // what jc1993 said, for a gate that confirms it
	}{
		{"request-review", nil, ""},
		{"publish-artifact", map[string]any{"artifact": "requirements.md"}, ""},
		{"post-phase-selection", nil, ""},
		{"post-goal-request", nil, ""},
		{"classify-goal", nil, "Goal: approved, ship it\n\nSuccess criteria:\n- it is approved\n"},
		{"classify-phase-selection", nil, "the-loop execute"},
	}
	for _, h := range hooks {
		impl, ok := builtins.Registry().Lookup(h.hook)
		if !ok {
			t.Fatalf("no hook %s", h.hook)
		}
		ctx := &graph.Context{
			WorkItem:    graph.WorkItem{ID: "issue-12", Ref: e2eWorkItem, Dir: "docs/specs/issue-12"},
			Node:        &graph.Node{ID: "requirements-approval", Actor: graph.ActorHuman},
			Checkout:    co,
			Files:       graph.DirectFiles(co),
			Params:      map[string]any{},
			Decisions:   map[string]any{},
			Settings:    graph.Settings{AuthorizedUsers: cli.AuthorizedUsers()},
			Integration: gh,
			Log:         slog.New(slog.NewTextHandler(io.Discard, nil)),
		}
		for k, v := range h.params {
			ctx.Params[k] = v
		}
		if h.event != "" {
			ctx.Event = &graph.Event{Comments: []graph.Comment{{Author: "jc1993", Body: h.event}}}
		}
		res, err := impl.Run(ctx)
		if err != nil || res.Status != graph.StatusPass || res.Data["error"] != nil {
			t.Fatalf("%s: %+v, %v", h.hook, res, err)
		}
	}
	work, _ := channels.ParseRef(e2eWorkItem)
	if _, err := github.NewLedger(gh, cli).Record(context.Background(), github.Entry{Work: work, Type: channels.EventReply, Source: "slack", Author: e2eSlackUser, Text: "approved", At: time.Now()}); err != nil {
		t.Fatal(err)
	}

	// --- and one the token posted unmarked, as a build before the marker
	// was everywhere did
	is, _ := r.gh.Issue(e2eWorkItem)
	is.Comments = append(is.Comments, githubtest.Comment{Author: e2eOperator, Body: "forced transition requirements-approval -> design by the-loop-bot. Reason: approved.", CreatedAt: time.Now().UTC().Truncate(time.Second)})
	r.gh.AddIssue(e2eWorkItem, is)

	posted := r.comments()[before:]
	if want := 2 + len(hooks) + 2; len(posted) < want {
		t.Fatalf("%d comments posted, want at least %d: %+v", len(posted), want, posted)
	}
	for i, c := range posted {
		if c.Author != e2eOperator {
			t.Errorf("comment %d is by %s, want the token's login %s", i, c.Author, e2eOperator)
		}
		if i < len(posted)-1 && !builtins.IsSelfAuthored(c.Body) {
			t.Errorf("comment %d went up unmarked:\n%s", i, c.Body)
		}
	}

	// --- GitHub delivers each: every one is the-loop's own
	for i, c := range posted {
		id := "d-echo-" + string(rune('a'+i))
		r.postGitHub(id, "issue_comment", octokitEcho(t, c))
		if got := r.outcome(id); got != "dropped self-authored" {
			t.Errorf("the echo of\n%s\nis %s, want dropped self-authored", c.Body, got)
		}
	}
	var whys []string
	for _, rec := range r.events("routing.dropped") {
		if id, _ := rec["delivery_id"].(string); strings.HasPrefix(id, "d-echo-") {
			whys = append(whys, fmtAny(rec["why"]))
		}
	}
	t.Logf("%d echoes, dropped for %v", len(posted), whys)
	if len(whys) != len(posted) || whys[len(whys)-1] != "identity" {
		t.Errorf("why each echo was dropped: %v, want the unmarked one by identity", whys)
	}
	if n := r.node(); n != "requirements-approval" {
		t.Fatalf("an echo moved issue-12 to %q", n)
	}
	if now, _ := os.ReadFile(requirements); string(now) != string(reqBefore) {
		t.Errorf("an echo was recorded as review feedback:\n%s", now)
	}

	// --- check --replies github reads the same thread: still waiting
	stdout, stderr, code := runCLI(t, nil, "check", "issue-12", "--repo", r.checkout, "--config", r.cfg, "--replies", "github")
	if code != 1 || !strings.Contains(stdout, "wait   requirements-approval") {
		t.Errorf("check --replies github: exit %d, want 1 with the gate waiting\n%s%s", code, stdout, stderr)
	}
	if strings.Contains(stdout, "not read") {
		t.Errorf("the-loop's own comments are counted as people's not read:\n%s", stdout)
	}

	// --- GitHub was asked who the token is once, and the state root keeps it
	asked := 0
	for _, c := range r.gh.Calls() {
		if c.Method == "GET" && c.Path == "/user" {
			asked++
		}
	}
	if asked != 1 {
		t.Errorf("GET /user asked %d times, want once", asked)
	}
	if data, err := os.ReadFile(filepath.Join(r.state, github.IdentityFile)); err != nil || !strings.Contains(string(data), `"login": "`+e2eOperator+`"`) {
		t.Errorf("the state root does not keep the login: %v\n%s", err, data)
	}

	// serve said at start that the operator's own GitHub comments are not
	// heard (it asks in the background: give it a moment).
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(r.stderr.String(), "which routing.authorizedUsers names"); {
		if time.Now().After(deadline) {
			t.Errorf("serve did not warn that the operator's login is the-loop's:\n%s", r.stderr.String())
			break
		}
		time.Sleep(10 * time.Millisecond)
	}

	// --- a person's approval still passes: check, then serve
	approval := githubtest.Comment{ID: 990, Author: "jc1993", Body: "approved", CreatedAt: time.Now().UTC().Truncate(time.Second)}
	is, _ = r.gh.Issue(e2eWorkItem)
	is.Comments = append(is.Comments, approval)
	r.gh.AddIssue(e2eWorkItem, is)
	stdout, stderr, code = runCLI(t, nil, "check", "issue-12", "--repo", r.checkout, "--config", r.cfg, "--replies", "github")
	if code != 0 {
		t.Errorf("check --replies github after jc1993's approval: exit %d, want 0\n%s%s", code, stdout, stderr)
	}
	r.postGitHub("d-approve", "issue_comment", octokitEcho(t, approval))
	if got := r.outcome("d-approve"); got != "routed" {
		t.Fatalf("jc1993's approval: %s, want routed\n%s", got, r.stderr.String())
	}
	if n := r.node(); n != "design" {
		t.Errorf("issue-12 is at %q after jc1993's approval, want design", n)
	}
}

func fmtAny(v any) string {
	s, _ := v.(string)
	return s
}
