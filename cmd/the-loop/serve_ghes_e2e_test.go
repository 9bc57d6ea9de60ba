package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/deliver"
)

// TestServeDrivesAGHESWorkItem runs serve for a GitHub Enterprise Server,
// as an operator would: integrations.github.api.baseUrl names the GHES
// host octocoders.github.io (octokit's ghes-35 examples are on it), a
// checkout cloned from it is bound, and octokit's GHES issue_comment
// payload is posted, signed, with its body and time set. Its start and
// approval move the item to design as a github.com delivery would; an
// ordinary comment there is delivered to the work item's inbox and the
// node advanced (its work not met, it stays; once design.md is written,
// the next comment moves it on); a second checkout, cloned
// from github.com, stays foreign: its start is refused.
func TestServeDrivesAGHESWorkItem(t *testing.T) {
	home := t.TempDir()
	state := filepath.Join(home, "state")
	t.Setenv("HOME", home)
	t.Setenv("THE_LOOP_CLI_CONFIG", "")
	t.Setenv("THE_LOOP_GH_WEBHOOK_SECRET", "s3cret")
	t.Setenv("GH_TOKEN", "")
	t.Setenv("GITHUB_TOKEN", "")
	checkout := func(name, origin string) string {
		dir := gateCheckout(t, filepath.Join(home, name), origin)
		specs := filepath.Join(dir, "docs", "specs")
		if err := os.Rename(filepath.Join(specs, "issue-12"), filepath.Join(specs, "issue-1")); err != nil {
			t.Fatal(err)
		}
		st := filepath.Join(specs, "issue-1", "graph-state.json")
		data, _ := os.ReadFile(st)
		os.WriteFile(st, []byte(strings.Replace(string(data), `"issue-12"`, `"issue-1"`, 1)), 0o644)
		return dir
	}
	ghes := checkout("hello-world", "git@octocoders.github.io:Codertocat/Hello-World.git")
	foreign := checkout("spoon-knife", "https://github.com/Codertocat/Spoon-Knife.git")
	port := freePort(t)
	cfg := filepath.Join(home, "cli.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("state:\n  root: %s\nrouting:\n  authorizedUsers: [Codertocat]\nwebhooks:\n  ghWebhook:\n    port: %d\n"+
		"integrations:\n  github:\n    transport: api\n    api:\n      baseUrl: https://octocoders.github.io/api/v3\n", state, port)), 0o644)
	for ref, dir := range map[string]string{"github:Codertocat/Hello-World#1": ghes, "github:Codertocat/Spoon-Knife#1": foreign} {
		if _, stderr, code := runCLI(t, map[string]string{"THE_LOOP_CLI_CONFIG": ""}, "sessions", "bind", ref, "--repo", dir, "--config", cfg); code != 0 {
			t.Fatalf("bind %s: exit %d: %s", ref, code, stderr)
		}
	}
	var stdout, stderr lockedBuffer
	code := make(chan int, 1)
	go func() { code <- run([]string{"serve", "--config", cfg}, &stdout, &stderr) }()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitUp(t, base, &stderr)

	payload, err := os.ReadFile(filepath.Join("..", "..", "testdata", "octokit", "ghes-35", "issue_comment", "created.json"))
	if err != nil {
		t.Fatal(err)
	}
	comment := func(id int, repo, text string) string {
		var p map[string]any
		if err := json.Unmarshal(payload, &p); err != nil {
			t.Fatal(err)
		}
		c := p["comment"].(map[string]any)
		c["id"], c["body"], c["created_at"] = id, text, time.Now().UTC().Format(time.RFC3339)
		p["repository"].(map[string]any)["full_name"] = repo
		out, _ := json.Marshal(p)
		return string(out)
	}
	steps := []struct{ id, body string }{
		{"g-start", comment(101, "Codertocat/Hello-World", "the-loop start")},
		{"g-approve", comment(102, "Codertocat/Hello-World", "Approved")},
		{"g-agent", comment(103, "Codertocat/Hello-World", "Is the design under way?")},
		{"g-foreign-start", comment(104, "Codertocat/Spoon-Knife", "the-loop start")},
	}
	post := func(id, body string) {
		t.Helper()
		if status := postSigned(t, base, id, "issue_comment", "s3cret", []byte(body)); status != http.StatusAccepted {
			t.Fatalf("%s: status %d\n%s", id, status, stderr.String())
		}
	}
	for _, s := range steps {
		post(s.id, s.body)
	}
	log := filepath.Join(state, "logs", "events.jsonl")
	waitOutcomes(t, log, len(steps), &stderr)
	// The design written, the next comment finds the node's work met.
	os.WriteFile(filepath.Join(ghes, "docs", "specs", "issue-1", "design.md"), []byte(designDone), 0o644)
	post("g-done", comment(106, "Codertocat/Hello-World", "The design is up for review."))
	outcomes := waitOutcomes(t, log, len(steps)+1, &stderr)
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	if c := <-code; c != 0 {
		t.Fatalf("serve exited %d: %s", c, stderr.String())
	}
	want := map[string]string{
		"g-start":         "routed",
		"g-approve":       "routed",
		"g-agent":         "routed",
		"g-done":          "routed",
		"g-foreign-start": "dropped control-rejected",
	}
	for id, w := range want {
		if got := strings.Join(outcomes[id], ", "); got != w {
			t.Errorf("%s: %s, want %s", id, got, w)
		}
	}
	var st struct {
		CurrentNode string `json:"currentNode"`
	}
	data, _ := os.ReadFile(filepath.Join(ghes, "docs", "specs", "issue-1", "graph-state.json"))
	json.Unmarshal(data, &st)
	done := logRecord(t, log, "routing.routed", "g-done")
	if st.CurrentNode == "design" || st.CurrentNode == "" || done["to"] != st.CurrentNode || done["delivery"] != "inbox" {
		t.Errorf("issue-1 is at %q after g-done (routed with %v), want past design", st.CurrentNode, done)
	}
	if cfg, err := os.ReadFile(filepath.Join(ghes, ".the-loop", "harness-config.yaml")); err != nil || !strings.Contains(string(cfg), `owner: "Codertocat"`) {
		t.Errorf("the GHES checkout was not adopted as Codertocat/Hello-World's: %v\n%s", err, cfg)
	}
	if _, err := os.Stat(filepath.Join(foreign, ".the-loop")); err == nil {
		t.Error("the github.com checkout was adopted")
	}
	ref, _ := channels.ParseRef("github:Codertocat/Hello-World#1")
	msgs, err := deliver.ReadInbox(state, ref)
	if err != nil || len(msgs) != 2 || msgs[0].Text != "Is the design under way?" || msgs[0].TS != "103" || msgs[0].Channel != "github" || msgs[1].TS != "106" {
		t.Errorf("inbox: %+v %v", msgs, err)
	}
	if rec := logRecord(t, log, "routing.dropped", "g-foreign-start"); rec["why"] != "foreign-checkout" {
		t.Errorf("g-foreign-start dropped with %v, want why foreign-checkout", rec)
	}
	routed := logRecord(t, log, "routing.routed", "g-agent")
	if routed["delivery"] != "inbox" || routed["node"] != "design" || routed["status"] != "block" {
		t.Errorf("g-agent routed with %v", routed)
	}
}

// logRecord is the first record of event about delivery id in the event
// log.
func logRecord(t *testing.T, log, event, id string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec["event"] == event && rec["delivery_id"] == id {
			return rec
		}
	}
	return nil
}

// designDone is a design.md that meets the design node's exit chain on
// the gate fixture's requirements.
const designDone = `---
status: approved
---
# Design: rate limits on link creation

## Architecture

A token bucket per caller in front of the create handler.

## Security design

The create endpoint is the trust boundary; the abuse case is link spam
from one caller, answered with 429 and Retry-After.

## Testing strategy

One handler test per requirement, R1 and R2.
`
