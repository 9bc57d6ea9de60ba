package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/the-loop/the-loop/channels/ingress"
)

// TestServeDrivesABoundWorkItemFromSignedComments runs the whole ingress
// as an operator would: a checkout bound to github:acme/shop#12, waiting at
// requirements-approval; serve started; signed deliveries posted. An
// authorized "the-loop start" then "approved" moves the item to design;
// a bad signature, a replayed delivery, an unauthorized actor, the-loop's
// own comment, a disabled event and an ambiguous keyword each change
// nothing, and the event log says why.
func TestServeDrivesABoundWorkItemFromSignedComments(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	home := t.TempDir()
	state := filepath.Join(home, "state")
	t.Setenv("HOME", home)
	t.Setenv("THE_LOOP_CLI_CONFIG", "")
	t.Setenv("THE_LOOP_GH_WEBHOOK_SECRET", "s3cret")
	checkout := gateCheckout(t, filepath.Join(home, "shop"), "https://github.com/acme/shop.git")
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

	post := func(id, event, body string, secret string) int {
		t.Helper()
		return postSigned(t, base, id, event, secret, []byte(body))
	}
	comment := func(id int, author, text string) string {
		return fmt.Sprintf(`{"action":"created","repository":{"full_name":"acme/shop"},"issue":{"number":12},"comment":{"id":%d,"user":{"login":%q,"type":"User"},"body":%q,"created_at":%q},"sender":{"login":%q}}`,
			id, author, text, time.Now().UTC().Format(time.RFC3339), author)
	}
	steps := []struct {
		id, event, body, secret string
		status                  int
	}{
		{"d-forged", "issue_comment", comment(1, "alice", "approved"), "wrong", http.StatusUnauthorized},
		{"d-start", "issue_comment", comment(2, "alice", "the-loop start"), "s3cret", http.StatusAccepted},
		{"d-mallory", "issue_comment", comment(3, "mallory", "approved"), "s3cret", http.StatusAccepted},
		{"d-self", "issue_comment", comment(4, "alice", "approved\n\n<!-- the-loop:agent-comment -->"), "s3cret", http.StatusAccepted},
		{"d-star", "star", `{"action":"created","repository":{"full_name":"acme/shop"}}`, "s3cret", http.StatusAccepted},
		{"d-both", "issue_comment", comment(5, "alice", "the-loop stop the-loop start"), "s3cret", http.StatusAccepted},
		{"d-approve", "issue_comment", comment(6, "alice", "approved"), "s3cret", http.StatusAccepted},
		{"d-approve", "issue_comment", comment(6, "alice", "approved"), "s3cret", http.StatusAccepted},
	}
	for _, s := range steps {
		if got := post(s.id, s.event, s.body, s.secret); got != s.status {
			t.Fatalf("%s: status %d, want %d\n%s", s.id, got, s.status, stderr.String())
		}
	}
	outcomes := waitOutcomes(t, filepath.Join(state, "logs", "events.jsonl"), 7, &stderr)
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	if c := <-code; c != 0 {
		t.Fatalf("serve exited %d: %s", c, stderr.String())
	}
	want := map[string]string{
		"d-start":   "routed",
		"d-mallory": "dropped unauthorized-actor",
		"d-star":    "dropped disabled-event",
		"d-both":    "dropped control-ambiguous",
		"d-approve": "dropped duplicate-delivery, routed",
	}
	for id, w := range want {
		// A replay may be answered before or after the first is processed.
		slices.Sort(outcomes[id])
		if got := strings.Join(outcomes[id], ", "); got != w {
			t.Errorf("%s: %s, want %s", id, got, w)
		}
	}
	if got := strings.Join(outcomes["d-self"], ", "); !strings.HasPrefix(got, "dropped self-authored") {
		t.Errorf("d-self: %s, want dropped self-authored", got)
	}
	if _, seen := outcomes["d-forged"]; seen {
		t.Error("a forged delivery reached routing")
	}
	// start proved the checkout is acme/shop's, and adopted it (seed 002).
	if cfg, err := os.ReadFile(filepath.Join(checkout, ".the-loop", "harness-config.yaml")); err != nil || !strings.Contains(string(cfg), `owner: "acme"`) {
		t.Errorf("start did not adopt the checkout as acme/shop's: %v\n%s", err, cfg)
	}
	data, _ := os.ReadFile(filepath.Join(checkout, "docs", "specs", "issue-12", "graph-state.json"))
	var st struct {
		CurrentNode string `json:"currentNode"`
	}
	json.Unmarshal(data, &st)
	if st.CurrentNode != "design" {
		t.Errorf("issue-12 is at %q, want design after alice's approval", st.CurrentNode)
	}
}

// gateCheckout copies the gate fixture repository (issue-12 waiting at
// requirements-approval) to dir, as a git checkout whose origin is origin.
func gateCheckout(t *testing.T, dir, origin string) string {
	t.Helper()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "..", "testdata", "repos", "gate"))); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, ".git"), 0o755)
	os.WriteFile(filepath.Join(dir, ".git", "config"), []byte("[core]\n\tbare = false\n[remote \"origin\"]\n\turl = "+origin+"\n"), 0o644)
	return dir
}

// postSigned sends body to serve's GitHub endpoint at base as a delivery
// of event with id, signed with secret, and returns the status.
func postSigned(t *testing.T, base, id, event, secret string, body []byte) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/gh-webhook", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(ingress.HeaderEvent, event)
	req.Header.Set(ingress.HeaderDelivery, id)
	req.Header.Set(ingress.HeaderSignature256, ingress.Sign([]byte(secret), body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func waitUp(t *testing.T, base string, stderr *lockedBuffer) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not come up: %v\n%s", err, stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitOutcomes reads the event log until it holds n outcomes, and returns each delivery's outcomes in order: "routed", or "dropped"
// and its reason.
func waitOutcomes(t *testing.T, log string, n int, stderr *lockedBuffer) map[string][]string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, lines := map[string][]string{}, 0
		if data, err := os.ReadFile(log); err == nil {
			sc := bufio.NewScanner(bytes.NewReader(data))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var rec map[string]any
				if json.Unmarshal(sc.Bytes(), &rec) != nil {
					continue
				}
				id, _ := rec["delivery_id"].(string)
				switch rec["event"] {
				case "routing.routed":
					out[id], lines = append(out[id], "routed"), lines+1
				case "routing.dropped":
					out[id], lines = append(out[id], fmt.Sprint("dropped ", rec["reason"])), lines+1
				}
			}
		}
		if lines >= n {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d outcomes after 20s, want %d: %v\n%s", len(out), n, out, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
