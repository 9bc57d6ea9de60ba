package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeHearsPullRequestReviewsAndEnds runs the real serve on signed
// deliveries of GitHub's own payload shapes (octokit's examples, kept in
// channels/route/testdata/octokit): issue-12 is bound and started, its pull
// requests #30 and #31 (each "Closes #12") stand at pr-approval. An
// authorized reviewer's approval of #30 moves its pr-approval to complete;
// a stranger's approval of #31, and the dismissal of the approval already
// acted on, change nothing; an edit of a comment #31's gate waited on is
// read again (it requests changes); #31 merged is driven to complete,
// audited; issue-12 closed forgets its start.
func TestServeHearsPullRequestReviewsAndEnds(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	home := t.TempDir()
	state := filepath.Join(home, "state")
	t.Setenv("HOME", home)
	t.Setenv("THE_LOOP_CLI_CONFIG", "")
	t.Setenv("THE_LOOP_GH_WEBHOOK_SECRET", "s3cret")
	checkout := gateCheckout(t, filepath.Join(home, "shop"), "https://github.com/acme/shop.git")
	entered := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	for _, pr := range []int{30, 31} {
		p := filepath.Join(checkout, "docs", "specs", "issue-12", "pr-loops", fmt.Sprintf("pr-%d", pr), "graph-state.json")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(`{"version": 1, "workItem": "issue-12", "currentNode": "pr-approval", "loop": "pdlc-pr-loop",
  "nodes": {"pr-approval": {"attempts": 0, "outcome": "", "enteredAt": "`+entered+`", "exitedAt": ""}}}`), 0o644)
	}
	port := freePort(t)
	cfg := filepath.Join(home, "cli.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("state:\n  root: %s\nrouting:\n  authorizedUsers: [alice]\nwebhooks:\n  ghWebhook:\n    port: %d\n", state, port)), 0o644)
	if _, stderr, code := runCLI(t, map[string]string{"THE_LOOP_CLI_CONFIG": ""}, "sessions", "bind", "github:acme/shop#12", "--repo", checkout, "--config", cfg); code != 0 {
		t.Fatalf("bind: exit %d: %s", code, stderr)
	}
	var stdout, stderr lockedBuffer
	code := make(chan int, 1)
	go func() { code <- run([]string{"serve", "--config", cfg}, &stdout, &stderr) }()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitUp(t, base, &stderr)

	post := func(id, event string, p map[string]any) {
		t.Helper()
		body, _ := json.Marshal(p)
		if status := postSigned(t, base, id, event, "s3cret", body); status != http.StatusAccepted {
			t.Fatalf("%s: status %d\n%s", id, status, stderr.String())
		}
	}
	now := time.Now().UTC().Format(time.RFC3339)
	// octokit's payload, on acme/shop's pull request (or issue) number, by
	// actor; edit changes what the scenario needs.
	payload := func(file string, number int, actor string, edit func(p map[string]any)) map[string]any {
		data, err := os.ReadFile(filepath.Join("..", "..", "channels", "route", "testdata", "octokit", filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		var p map[string]any
		json.Unmarshal(data, &p)
		p["repository"].(map[string]any)["full_name"] = "acme/shop"
		p["sender"].(map[string]any)["login"] = actor
		for _, key := range []string{"pull_request", "issue"} {
			if m, ok := p[key].(map[string]any); ok {
				m["number"], m["body"] = number, "Closes #12"
			}
		}
		for _, key := range []string{"review", "comment"} {
			if m, ok := p[key].(map[string]any); ok {
				m["user"].(map[string]any)["login"] = actor
				m["submitted_at"], m["created_at"] = now, now
			}
		}
		if edit != nil {
			edit(p)
		}
		return p
	}
	review := func(id int, state string) func(p map[string]any) {
		return func(p map[string]any) {
			r := p["review"].(map[string]any)
			r["id"], r["state"], r["body"] = id, state, nil
		}
	}
	comment := func(id int, body string) func(p map[string]any) {
		return func(p map[string]any) {
			c := p["comment"].(map[string]any)
			c["id"], c["body"] = id, body
		}
	}
	post("d-start", "issue_comment", payload("issue_comment/created.payload.json", 12, "alice", comment(1, "the-loop start")))
	post("d-approve-30", "pull_request_review", payload("pull_request_review/submitted.payload.json", 30, "alice", review(501, "approved")))
	post("d-mallory-31", "pull_request_review", payload("pull_request_review/submitted.payload.json", 31, "mallory", review(502, "approved")))
	post("d-dismiss-30", "pull_request_review", payload("pull_request_review/dismissed.payload.json", 30, "alice", review(501, "dismissed")))
	post("d-ask-31", "issue_comment", payload("issue_comment/created.payload.json", 31, "alice", func(p map[string]any) {
		comment(2, "reading it now")(p)
		p["issue"].(map[string]any)["pull_request"] = map[string]any{"url": "https://api.github.com/repos/acme/shop/pulls/31"}
	}))
	post("d-edit-31", "issue_comment", payload("issue_comment/edited.payload.json", 31, "alice", func(p map[string]any) {
		comment(2, "reading it now: changes requested")(p)
		p["issue"].(map[string]any)["pull_request"] = map[string]any{"url": "https://api.github.com/repos/acme/shop/pulls/31"}
	}))
	outcomes := waitOutcomes(t, filepath.Join(state, "logs", "events.jsonl"), 6, &stderr)
	// the edit that requested changes sent #31 back to implementation; a
	// merge finishes it all the same
	p31 := filepath.Join(checkout, "docs", "specs", "issue-12", "pr-loops", "pr-31", "graph-state.json")
	if data, _ := os.ReadFile(p31); !strings.Contains(string(data), `"currentNode": "implementation"`) {
		t.Errorf("the edit that requested changes left #31 at:\n%s", data)
	}
	post("d-merge-31", "pull_request", payload("pull_request/closed.payload.json", 31, "octocat", func(p map[string]any) {
		p["pull_request"].(map[string]any)["merged"] = true
	}))
	post("d-close-12", "issues", payload("issues/reopened.payload.json", 12, "octocat", func(p map[string]any) { p["action"] = "closed" }))
	outcomes = waitOutcomes(t, filepath.Join(state, "logs", "events.jsonl"), 8, &stderr)
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	if c := <-code; c != 0 {
		t.Fatalf("serve exited %d: %s", c, stderr.String())
	}
	for id, w := range map[string]string{
		"d-start":      "routed",
		"d-approve-30": "routed",
		"d-mallory-31": "dropped unauthorized-actor",
		"d-dismiss-30": "dropped already-acted",
		"d-ask-31":     "routed",
		"d-edit-31":    "routed",
		"d-merge-31":   "routed",
		"d-close-12":   "routed",
	} {
		if got := strings.Join(outcomes[id], ", "); got != w {
			t.Errorf("%s: %s, want %s", id, got, w)
		}
	}
	for pr, want := range map[int]string{30: "complete", 31: "complete"} {
		data, _ := os.ReadFile(filepath.Join(checkout, "docs", "specs", "issue-12", "pr-loops", fmt.Sprintf("pr-%d", pr), "graph-state.json"))
		var st struct {
			CurrentNode string `json:"currentNode"`
		}
		json.Unmarshal(data, &st)
		if st.CurrentNode != want {
			t.Errorf("#%d's inner loop is at %q, want %s", pr, st.CurrentNode, want)
		}
		if pr == 31 && !strings.Contains(string(data), "pull request github:acme/shop#31 merged") {
			t.Errorf("#31's merge is not the forced move's reason:\n%s", data)
		}
	}
	data, _ := os.ReadFile(filepath.Join(state, "sessions", "bindings.json"))
	if strings.Contains(string(data), `"control"`) {
		t.Errorf("issue-12 closed kept its control record:\n%s", data)
	}
}
