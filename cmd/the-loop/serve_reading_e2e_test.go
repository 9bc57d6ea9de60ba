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

// octokitComment is octokit's issue_comment created example with the
// comment's id, author, body and time, and the number, filled in.
func octokitComment(t *testing.T, number, id int, author, body string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "octokit", "issue_comment.created.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	p["issue"].(map[string]any)["number"] = number
	c := p["comment"].(map[string]any)
	c["id"], c["body"], c["created_at"], c["updated_at"] = id, body, time.Now().UTC().Format(time.RFC3339), time.Now().UTC().Format(time.RFC3339)
	c["user"].(map[string]any)["login"] = author
	p["sender"].(map[string]any)["login"] = author
	out, _ := json.Marshal(p)
	return string(out)
}

// TestServeReadsAnAnswerAsThePersonMeantIt sends the real serve octokit's
// comment payloads, signed, on a work item waiting at its requirements
// approval: a negated approval, a questioned one, a quoted one followed by
// disagreement and an instruction that shows `approved` in code each
// leave the gate where it was; a stop keyword shown in code stops
// nothing; then a plain approval moves the item to design.
func TestServeReadsAnAnswerAsThePersonMeantIt(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	home := t.TempDir()
	state := filepath.Join(home, "state")
	t.Setenv("HOME", home)
	t.Setenv("THE_LOOP_CLI_CONFIG", "")
	t.Setenv("THE_LOOP_GH_WEBHOOK_SECRET", "s3cret")
	checkout := gateCheckout(t, filepath.Join(home, "hello"), "https://github.com/Codertocat/Hello-World.git")
	port := freePort(t)
	cfg := filepath.Join(home, "cli.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("state:\n  root: %s\nrouting:\n  authorizedUsers: [Codertocat]\nwebhooks:\n  ghWebhook:\n    port: %d\n", state, port)), 0o644)
	if _, stderr, code := runCLI(t, map[string]string{"THE_LOOP_CLI_CONFIG": ""}, "sessions", "bind", "github:Codertocat/Hello-World#12", "--repo", checkout, "--config", cfg); code != 0 {
		t.Fatalf("bind: exit %d: %s", code, stderr)
	}
	var stdout, stderr lockedBuffer
	code := make(chan int, 1)
	go func() { code <- run([]string{"serve", "--config", cfg}, &stdout, &stderr) }()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitUp(t, base, &stderr)

	at := func() string {
		data, _ := os.ReadFile(filepath.Join(checkout, "docs", "specs", "issue-12", "graph-state.json"))
		var st struct {
			CurrentNode string `json:"currentNode"`
		}
		json.Unmarshal(data, &st)
		return st.CurrentNode
	}
	log := filepath.Join(state, "logs", "events.jsonl")
	sent := 0
	send := func(id int, body string) map[string][]string {
		t.Helper()
		payload := octokitComment(t, 12, id, "Codertocat", body)
		if status := postSigned(t, base, fmt.Sprintf("d-%d", id), "issue_comment", "s3cret", []byte(payload)); status != http.StatusAccepted {
			t.Fatalf("comment %d: status %d\n%s", id, status, stderr.String())
		}
		sent++
		return waitOutcomes(t, log, sent, &stderr)
	}

	send(1, "the-loop start")
	for i, body := range []string{
		"This is not approved yet: the security section is empty.",
		"I have disapproved this",
		"approved?",
		"> approved\n\nI disagree with the above: the scope is too wide.",
		"reply `approved` here once we are happy",
		"FYI: anyone on the list can type `the-loop stop`.",
		"To pause it:\n\n```\nthe-loop pause\n```",
	} {
		send(10+i, body)
		if got := at(); got != "requirements-approval" {
			t.Fatalf("after %q the item is at %q, want it still at requirements-approval", body, got)
		}
	}
	outcomes := send(30, "Approved.")
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	if c := <-code; c != 0 {
		t.Fatalf("serve exited %d: %s", c, stderr.String())
	}
	for id := 10; id <= 16; id++ {
		if got := strings.Join(outcomes[fmt.Sprintf("d-%d", id)], ", "); got != "routed" {
			t.Errorf("d-%d: %s, want routed (handed to the gate, which waits)", id, got)
		}
	}
	if got := at(); got != "design" {
		t.Errorf("after a plain approval the item is at %q, want design (nothing stopped or paused it)\n%s", got, stderr.String())
	}
}
