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

	"github.com/the-loop/the-loop/builtins"
	"github.com/the-loop/the-loop/channels/github/githubtest"
	"github.com/the-loop/the-loop/channels/ingress"
	"github.com/the-loop/the-loop/channels/slack"
	"github.com/the-loop/the-loop/channels/slack/slacktest"
)

// The Slack thread github:acme/shop#12 is discussed in, and the people of
// these tests: the operator, whose token the-loop posts with (githubtest
// posts every comment as its token's login, the-loop-bot, and answers GET
// /user with it), and jc1993,
// who writes on Slack as U0456.
const (
	e2eChannel   = "C0123ABC"
	e2eThreadTS  = "1712345678.000100"
	e2eThread    = e2eChannel + ":" + e2eThreadTS
	e2eOperator  = "the-loop-bot"
	e2eSlackUser = "U0456"
	e2eWorkItem  = "github:acme/shop#12"
)

// slackRig is one operator's machine: a fake GitHub holding acme/shop#12,
// a fake Slack Web API, a CLI config naming both, github:acme/shop#12 bound
// to its Slack thread (and to a checkout of the gate fixture, parked at
// requirements-approval, when the rig has one), and `the-loop serve`
// running in this process.
type slackRig struct {
	t        *testing.T
	state    string
	checkout string // "" when the binding has no checkout
	cfg      string
	base     string
	eventLog string
	gh       *githubtest.Server
	sl       *slacktest.Server
	stderr   *lockedBuffer
	code     chan int
	stopped  bool
	nextID   int64
}

type rigOptions struct {
	// publish is channels.slack.publish.
	publish []string
	// noCheckout binds the work item to its thread alone.
	noCheckout bool
	// readMode is channels.slack.read.mode; "" is events.
	readMode string
}

func startSlackRig(t *testing.T, o rigOptions) *slackRig {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	home := t.TempDir()
	r := &slackRig{t: t, state: filepath.Join(home, "state"), cfg: filepath.Join(home, "cli.yaml"),
		stderr: &lockedBuffer{}, code: make(chan int, 1), nextID: 900}
	r.eventLog = filepath.Join(r.state, "logs", "events.jsonl")
	t.Setenv("HOME", home)
	t.Setenv("THE_LOOP_CLI_CONFIG", "")
	t.Setenv("THE_LOOP_GH_WEBHOOK_SECRET", "s3cret")
	t.Setenv("SLACK_SIGNING_SECRET", "slack-s3cret")
	t.Setenv("THE_LOOP_SLACK_BOT_TOKEN", "xoxb-e2e")
	t.Setenv("GH_TOKEN", "ghp-e2e")
	t.Setenv("GITHUB_TOKEN", "")

	r.gh = githubtest.NewServer()
	t.Cleanup(r.gh.Close)
	r.gh.SetToken("ghp-e2e")
	// GitHub dates a comment when it is posted.
	r.gh.SetClock(time.Now())
	r.gh.AddIssue(e2eWorkItem, githubtest.Issue{})
	r.sl = slacktest.NewServer()
	t.Cleanup(r.sl.Close)
	r.sl.SetToken("xoxb-e2e")

	bind := []string{"sessions", "bind", e2eWorkItem, "--slack", e2eThread}
	if !o.noCheckout {
		r.checkout = filepath.Join(home, "shop")
		if err := os.CopyFS(r.checkout, os.DirFS(filepath.Join("..", "..", "testdata", "repos", "gate"))); err != nil {
			t.Fatal(err)
		}
		// The item entered its gate an hour ago, whatever today is: a
		// comment written before that would be stale.
		statePath := filepath.Join(r.checkout, "docs", "specs", "issue-12", "graph-state.json")
		st, err := os.ReadFile(statePath)
		if err != nil {
			t.Fatal(err)
		}
		entered := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)
		st = bytes.Replace(st, []byte(`"enteredAt": "2026-05-01T09:00:00+00:00"`), []byte(`"enteredAt": "`+entered+`"`), 1)
		if !bytes.Contains(st, []byte(entered)) {
			t.Fatalf("the gate fixture's state no longer says when issue-12 entered requirements-approval:\n%s", st)
		}
		os.WriteFile(statePath, st, 0o644)
		os.MkdirAll(filepath.Join(r.checkout, ".git"), 0o755)
		os.WriteFile(filepath.Join(r.checkout, ".git", "config"), []byte("[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://github.com/acme/shop.git\n"), 0o644)
		bind = append(bind, "--repo", r.checkout)
	}
	mode := o.readMode
	if mode == "" {
		mode = "events"
	}
	port := freePort(t)
	cfg := fmt.Sprintf(`state:
  root: %s
routing:
  authorizedUsers:
    - %s
    - {github: jc1993, slack: %s, name: JC}
webhooks:
  ghWebhook:
    port: %d
integrations:
  github:
    transport: api
    api:
      baseUrl: %s
      tokenEnv: [GH_TOKEN]
channels:
  slack:
    enabled: true
    read: {mode: %s}
    publish: [%s]
    apiBaseUrl: %s
`, r.state, e2eOperator, e2eSlackUser, port, r.gh.URL, mode, strings.Join(o.publish, ", "), r.sl.URL)
	if err := os.WriteFile(r.cfg, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runCLI(t, nil, append(bind, "--config", r.cfg)...); code != 0 {
		t.Fatalf("bind: exit %d: %s", code, stderr)
	}
	go func() { r.code <- run([]string{"serve", "--config", r.cfg}, &lockedBuffer{}, r.stderr) }()
	r.base = fmt.Sprintf("http://127.0.0.1:%d", port)
	waitUp(t, r.base, r.stderr)
	t.Cleanup(r.stop)
	return r
}

// stop stops serve as an operator would, with SIGTERM, and checks it
// exited 0.
func (r *slackRig) stop() {
	if r.stopped {
		return
	}
	r.stopped = true
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		r.t.Fatal(err)
	}
	select {
	case c := <-r.code:
		if c != 0 {
			r.t.Errorf("serve exited %d:\n%s", c, r.stderr.String())
		}
	case <-time.After(20 * time.Second):
		r.t.Fatal("serve did not stop on SIGTERM")
	}
}

// postGitHub posts a signed webhook delivery, as GitHub sends one.
func (r *slackRig) postGitHub(id, event string, body []byte) {
	r.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, r.base+"/gh-webhook", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(ingress.HeaderEvent, event)
	req.Header.Set(ingress.HeaderDelivery, id)
	req.Header.Set(ingress.HeaderSignature256, ingress.Sign([]byte("s3cret"), body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		r.t.Fatalf("GitHub delivery %s: status %d, want 202\n%s", id, resp.StatusCode, r.stderr.String())
	}
}

// comment delivers c, a comment on acme/shop#12, as GitHub's
// issue_comment created webhook under the delivery id id, and returns the
// outcome.
func (r *slackRig) comment(id string, c githubtest.Comment) string {
	r.t.Helper()
	body, err := json.Marshal(map[string]any{
		"action":     "created",
		"repository": map[string]any{"full_name": "acme/shop"},
		"issue":      map[string]any{"number": 12},
		"comment": map[string]any{"id": c.ID, "body": c.Body, "created_at": c.CreatedAt.UTC().Format(time.RFC3339),
			"user": map[string]any{"login": c.Author, "type": "User"}},
		"sender": map[string]any{"login": c.Author, "type": "User"},
	})
	if err != nil {
		r.t.Fatal(err)
	}
	r.postGitHub(id, "issue_comment", body)
	return r.outcome(id)
}

// write has author write text on acme/shop#12 as a person would: GitHub
// keeps the comment, then delivers it. It returns the outcome.
func (r *slackRig) write(id, author, text string) string {
	r.t.Helper()
	r.nextID++
	c := githubtest.Comment{ID: r.nextID, Author: author, Body: text, CreatedAt: time.Now().UTC().Add(-time.Minute).Truncate(time.Second)}
	is, _ := r.gh.Issue(e2eWorkItem)
	is.Comments = append(is.Comments, c)
	r.gh.AddIssue(e2eWorkItem, is)
	return r.comment(id, c)
}

// postSlack posts a Slack-signed message event from user in the work
// item's thread, and returns the outcome.
func (r *slackRig) postSlack(eventID, user, ts, text string) string {
	r.t.Helper()
	m := slacktest.Message{Channel: e2eChannel, User: user, Text: text, TS: ts, ThreadTS: e2eThreadTS}
	if status := r.sendSlack(slacktest.MessageEvent(eventID, m), "slack-s3cret"); status != http.StatusOK {
		r.t.Fatalf("Slack event %s: status %d, want 200\n%s", eventID, status, r.stderr.String())
	}
	return r.outcome("slack:" + eventID)
}

// sendSlack posts body to the Events API endpoint signed with secret, as
// Slack would, and returns the status.
func (r *slackRig) sendSlack(body []byte, secret string) int {
	r.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, r.base+slack.EventsPath, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	slacktest.SignHeader(req.Header, []byte(secret), body, time.Now())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// events are the event log's records named event, in order.
func (r *slackRig) events(event string) []map[string]any {
	var out []map[string]any
	data, _ := os.ReadFile(r.eventLog)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec["event"] == event {
			out = append(out, rec)
		}
	}
	return out
}

// outcome waits for the delivery's first outcome: "routed", or "dropped"
// and its reason.
func (r *slackRig) outcome(id string) string {
	r.t.Helper()
	return r.outcomes(id, 1)[0]
}

// outcomes waits for n outcomes of the delivery id, and returns them in
// the order logged.
func (r *slackRig) outcomes(id string, n int) []string {
	r.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var out []string
		data, _ := os.ReadFile(r.eventLog)
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var rec map[string]any
			if json.Unmarshal(sc.Bytes(), &rec) != nil || rec["delivery_id"] != id {
				continue
			}
			switch rec["event"] {
			case "routing.routed":
				out = append(out, "routed")
			case "routing.dropped":
				out = append(out, fmt.Sprint("dropped ", rec["reason"]))
			}
		}
		if len(out) >= n {
			return out
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%d outcomes for %s after 20s, want %d: %v\n%s", len(out), id, n, out, r.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// comments are the comments on acme/shop#12.
func (r *slackRig) comments() []githubtest.Comment {
	is, _ := r.gh.Issue(e2eWorkItem)
	return is.Comments
}

// node is the node issue-12 stands at.
func (r *slackRig) node() string {
	r.t.Helper()
	data, err := os.ReadFile(filepath.Join(r.checkout, "docs", "specs", "issue-12", "graph-state.json"))
	if err != nil {
		r.t.Fatal(err)
	}
	var st struct {
		CurrentNode string `json:"currentNode"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		r.t.Fatal(err)
	}
	return st.CurrentNode
}

// inbox is what `the-loop sessions inbox` prints for the work item.
func (r *slackRig) inbox() string {
	r.t.Helper()
	stdout, stderr, code := runCLI(r.t, nil, "sessions", "inbox", e2eWorkItem, "--config", r.cfg)
	if code != 0 {
		r.t.Fatalf("sessions inbox: exit %d: %s", code, stderr)
	}
	return stdout
}

// reactions are the reactions on the fake Slack, as "channel ts name".
func (r *slackRig) reactions() []string {
	var out []string
	for _, x := range r.sl.Reactions() {
		out = append(out, x.Channel+" "+x.TS+" "+x.Name)
	}
	return out
}

// fields picks some of an event's fields, as "k=v" in the order asked.
func fields(rec map[string]any, keys ...string) string {
	var out []string
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%s=%v", k, rec[k]))
	}
	return strings.Join(out, " ")
}

// TestASlackApprovalLocksTheGateThroughTheLedger is the issue's
// reproduction (seed 003): github:acme/shop#12, started and parked at
// requirements-approval, is bound to a Slack thread, and jc1993 answers
// "approved" there. The pipeline reads the graph as the router would (open
// gate), records the answer on the issue unmarked, enveloped and
// attributed to jc1993, and hands nothing to the session; GitHub's webhook
// for that record then moves the item, and record-feedback names jc1993,
// not the operator whose token posted it. A replay of the record under
// another delivery id changes nothing.
func TestASlackApprovalLocksTheGateThroughTheLedger(t *testing.T) {
	r := startSlackRig(t, rigOptions{publish: []string{"work-item.reply", "gate.feedback"}})

	// --- jc1993 starts the item on GitHub (routing.control.requireStartCommand)
	if got := r.write("d-start", "jc1993", "the-loop start"); got != "routed" {
		t.Fatalf("start: %s, want routed\n%s", got, r.stderr.String())
	}
	if n := r.node(); n != "requirements-approval" {
		t.Fatalf("after start issue-12 is at %q, want requirements-approval", n)
	}
	before := len(r.comments())

	// --- what is not jc1993's word changes nothing, and is not acknowledged:
	// a forged event, a stranger in the thread, a bot
	forged := slacktest.MessageEvent("Ev00FORGED", slacktest.Message{Channel: e2eChannel, User: e2eSlackUser, Text: "approved", TS: "1712345999.000100", ThreadTS: e2eThreadTS})
	if status := r.sendSlack(forged, "not-the-secret"); status != http.StatusUnauthorized {
		t.Errorf("a forged Slack event: status %d, want 401", status)
	}
	if got := r.postSlack("Ev00STRANGER", "U0999", "1712345999.000110", "approved"); got != "dropped unauthorized-actor" {
		t.Errorf("a stranger's approval: %s, want dropped unauthorized-actor", got)
	}
	bot := slacktest.MessageEvent("Ev00BOT", slacktest.Message{Channel: e2eChannel, BotID: "B0LOOP", Text: "approved", TS: "1712345999.000120", ThreadTS: e2eThreadTS})
	if status := r.sendSlack(bot, "slack-s3cret"); status != http.StatusOK {
		t.Errorf("a bot's message: status %d, want 200", status)
	}
	if got := r.outcome("slack:Ev00BOT"); got != "dropped self-authored" {
		t.Errorf("a bot's approval: %s, want dropped self-authored", got)
	}
	if got := r.comments(); len(got) != before {
		t.Errorf("what no authorized person wrote was recorded: %+v", got[before:])
	}
	if got := r.reactions(); len(got) != 0 {
		t.Errorf("what no authorized person wrote was acknowledged: %q", got)
	}

	// --- "approved" in the Slack thread
	if got := r.postSlack("Ev01APPROVE", e2eSlackUser, "1712345999.000200", "approved"); got != "routed" {
		t.Fatalf("the Slack message: %s, want routed\n%s", got, r.stderr.String())
	}
	// Slack retries an event it thinks went unanswered, under its event_id:
	// recorded once.
	retry := slacktest.MessageEvent("Ev01APPROVE", slacktest.Message{Channel: e2eChannel, User: e2eSlackUser, Text: "approved", TS: "1712345999.000200", ThreadTS: e2eThreadTS})
	if status := r.sendSlack(retry, "slack-s3cret"); status != http.StatusOK {
		t.Errorf("Slack's retry: status %d, want 200", status)
	}
	if got := r.outcomes("slack:Ev01APPROVE", 2); !slices.Equal(got, []string{"routed", "dropped duplicate-delivery"}) {
		t.Errorf("the event and its retry: %v, want routed then dropped duplicate-delivery", got)
	}
	after := r.comments()
	if len(after) != before+1 {
		t.Fatalf("the issue got %d comments, want 1: %+v", len(after)-before, after[before:])
	}
	rec := after[before]
	if builtins.IsSelfAuthored(rec.Body) {
		t.Errorf("the record of a gate answer is marked as the-loop's own, so no gate would read it:\n%s", rec.Body)
	}
	env, ok := builtins.ParseEnvelope(rec.Body)
	switch {
	case !ok:
		t.Errorf("the record carries no envelope:\n%s", rec.Body)
	case env.Type != "gate.feedback" || env.Source != "slack" || env.Actor["github"] != "jc1993" || env.Actor["slack"] != e2eSlackUser:
		t.Errorf("envelope %+v, want gate.feedback from slack by github jc1993 / slack %s", env, e2eSlackUser)
	}
	for _, want := range []string{"\n> approved\n", "an answer to the open gate", "`JC` (`slack:U0456`)"} {
		if !strings.Contains(rec.Body, want) {
			t.Errorf("the record lacks %q:\n%s", want, rec.Body)
		}
	}
	if got := r.inbox(); !strings.Contains(got, "is empty") {
		t.Errorf("a gate answer was delivered to the session too:\n%s", got)
	}
	want := []string{e2eChannel + " 1712345999.000200 eyes", e2eChannel + " 1712345999.000200 white_check_mark"}
	if got := r.reactions(); !slices.Equal(got, want) {
		t.Errorf("Slack reactions %q, want %q", got, want)
	}
	recv := r.events("channel.reply_received")
	if len(recv) != 1 || fields(recv[0], "kind", "gate", "work_item", "actor") != "kind=gate.feedback gate=open work_item=github:acme/shop#12 actor=U0456" {
		t.Errorf("channel.reply_received: %v, want one with kind gate.feedback and gate open", recv)
	}
	if n := r.node(); n != "requirements-approval" {
		t.Fatalf("the pipeline moved the item itself, to %q: only the ledger's ingress may", n)
	}

	// --- GitHub delivers the record: the gate judges it, and it is jc1993's
	if got := r.comment("d-record", rec); got != "routed" {
		t.Fatalf("the record's webhook: %s, want routed\n%s", got, r.stderr.String())
	}
	if n := r.node(); n != "design" {
		t.Fatalf("issue-12 is at %q after the record of jc1993's approval, want design\n%s", n, r.stderr.String())
	}
	reqPath := filepath.Join(r.checkout, "docs", "specs", "issue-12", "requirements.md")
	req, _ := os.ReadFile(reqPath)
	if !strings.Contains(string(req), "## Review comments") || !strings.Contains(string(req), "**@jc1993** wrote:\n\napproved\n") {
		t.Errorf("requirements.md does not record jc1993's approval:\n%s", req)
	}
	if strings.Contains(string(req), "@"+e2eOperator) || strings.Contains(string(req), "recorded an answer") {
		t.Errorf("requirements.md attributes the approval to the poster, or records the record's own words:\n%s", req)
	}

	// --- the same record again, under a new delivery id, changes nothing
	state, _ := os.ReadFile(filepath.Join(r.checkout, "docs", "specs", "issue-12", "graph-state.json"))
	if got := r.comment("d-record-again", rec); got != "dropped replayed-comment" {
		t.Errorf("the replayed record: %s, want dropped replayed-comment", got)
	}
	if now, _ := os.ReadFile(filepath.Join(r.checkout, "docs", "specs", "issue-12", "graph-state.json")); !bytes.Equal(now, state) {
		t.Errorf("the replay changed the state:\n%s\nwas\n%s", now, state)
	}
	if now, _ := os.ReadFile(reqPath); !bytes.Equal(now, req) {
		t.Errorf("the replay changed requirements.md:\n%s", now)
	}
}

// TestASlackApprovalAtAnOpenGateOnAChannelWithoutTheGrant: the same
// started item at requirements-approval, on a channel granted
// work-item.reply only. The graph says the item waits at a human gate, so
// the message is gate.feedback whatever the grants, and the grant check
// then drops it (unpublishable-event): it is never downgraded to a reply
// (seed 003 § 3), so nothing is recorded on the issue, nothing reaches the
// session, and the item stays where it is.
func TestASlackApprovalAtAnOpenGateOnAChannelWithoutTheGrant(t *testing.T) {
	r := startSlackRig(t, rigOptions{publish: []string{"work-item.reply"}})
	if got := r.write("d-start", "jc1993", "the-loop start"); got != "routed" {
		t.Fatalf("start: %s, want routed\n%s", got, r.stderr.String())
	}
	before := len(r.comments())
	if got := r.postSlack("Ev02APPROVE", e2eSlackUser, "1712345999.000300", "approved"); got != "dropped unpublishable-event" {
		t.Fatalf("the Slack message: %s, want dropped unpublishable-event\n%s", got, r.stderr.String())
	}
	if got := r.comments(); len(got) != before {
		t.Errorf("a message the channel may not publish was recorded: %+v", got[before:])
	}
	if got := r.inbox(); !strings.Contains(got, "is empty") {
		t.Errorf("a gate answer the channel may not give was delivered as a reply:\n%s", got)
	}
	want := []string{e2eChannel + " 1712345999.000300 eyes", e2eChannel + " 1712345999.000300 warning"}
	if got := r.reactions(); !slices.Equal(got, want) {
		t.Errorf("Slack reactions %q, want %q", got, want)
	}
	drops := r.events("channel.dropped")
	if len(drops) != 1 || fields(drops[0], "reason", "kind", "gate") != "reason=unpublishable-event kind=gate.feedback gate=open" {
		t.Errorf("channel.dropped: %v, want one unpublishable-event of a gate.feedback at an open gate", drops)
	}
	if got := r.events("channel.reply_received"); len(got) != 0 {
		t.Errorf("a dropped message was logged as received: %v", got)
	}
	if n := r.node(); n != "requirements-approval" {
		t.Errorf("issue-12 moved to %q", n)
	}
}

// TestASlackReplyRecordedAsTheLoopsOwnIsNotReadBack: on a channel granted
// work-item.reply only, a message whose gate the pipeline cannot tell
// (the item waits at requirements-approval, but has not been started, so
// the router would not drive it) is a reply: recorded on the issue marked
// as the-loop's own, and delivered to the session's inbox. GitHub's
// webhook for that record is then dropped as self-authored, and the item
// stays where it is.
func TestASlackReplyRecordedAsTheLoopsOwnIsNotReadBack(t *testing.T) {
	r := startSlackRig(t, rigOptions{publish: []string{"work-item.reply"}})
	if got := r.postSlack("Ev03APPROVE", e2eSlackUser, "1712345999.000400", "approved"); got != "routed" {
		t.Fatalf("the Slack message: %s, want routed\n%s", got, r.stderr.String())
	}
	cs := r.comments()
	if len(cs) != 1 {
		t.Fatalf("the issue got %d comments, want 1: %+v", len(cs), cs)
	}
	rec := cs[0]
	if !builtins.IsSelfAuthored(rec.Body) {
		t.Errorf("the record of a reply the pipeline delivered itself is not marked:\n%s", rec.Body)
	}
	if env, ok := builtins.ParseEnvelope(rec.Body); !ok || env.Type != "work-item.reply" || env.Actor["github"] != "jc1993" {
		t.Errorf("envelope %+v (%v), want work-item.reply naming github jc1993", env, ok)
	}
	if !strings.Contains(rec.Body, "\n> approved\n") || !strings.Contains(rec.Body, "delivered to the work item's session") {
		t.Errorf("the record does not quote the reply, or say it was delivered:\n%s", rec.Body)
	}
	if got := r.inbox(); !strings.Contains(got, " slack U0456 (thread "+e2eThreadTS+"): approved\n") {
		t.Errorf("the inbox does not hold the reply:\n%s", got)
	}
	recv := r.events("channel.reply_received")
	if len(recv) != 1 || fields(recv[0], "kind", "gate") != "kind=work-item.reply gate=unknown" {
		t.Errorf("channel.reply_received: %v, want one work-item.reply with gate unknown", recv)
	}
	if got := r.comment("d-record", rec); !strings.HasPrefix(got, "dropped self-authored") {
		t.Errorf("the marked record's webhook: %s, want dropped self-authored", got)
	}
	if n := r.node(); n != "requirements-approval" {
		t.Errorf("issue-12 moved to %q on a reply", n)
	}
}

// TestASlackReplyOnAThreadWithNoCheckout: the work item is bound to its
// Slack thread and no checkout, so the pipeline cannot tell whether it
// waits at a gate. On a channel granted gate.feedback the message is
// relayed for the ledger's ingress to judge, unmarked and worded as a
// reply (no open gate was seen); on one that is not, it is a marked reply,
// delivered to the inbox.
func TestASlackReplyOnAThreadWithNoCheckout(t *testing.T) {
	t.Run("granted gate.feedback", func(t *testing.T) {
		r := startSlackRig(t, rigOptions{publish: []string{"work-item.reply", "gate.feedback"}, noCheckout: true})
		if got := r.write("d-start", "jc1993", "the-loop start"); got != "routed" {
			t.Fatalf("start: %s, want routed\n%s", got, r.stderr.String())
		}
		before := len(r.comments())
		if got := r.postSlack("Ev04", e2eSlackUser, "1712345999.000500", "approved"); got != "routed" {
			t.Fatalf("the Slack message: %s, want routed\n%s", got, r.stderr.String())
		}
		cs := r.comments()
		if len(cs) != before+1 {
			t.Fatalf("the issue got %d comments, want 1", len(cs)-before)
		}
		rec := cs[before]
		if builtins.IsSelfAuthored(rec.Body) {
			t.Errorf("a relayed gate answer is marked:\n%s", rec.Body)
		}
		if env, ok := builtins.ParseEnvelope(rec.Body); !ok || env.Type != "gate.feedback" || env.Actor["github"] != "jc1993" {
			t.Errorf("envelope %+v (%v), want gate.feedback naming github jc1993", env, ok)
		}
		if !strings.Contains(rec.Body, "recorded a reply from") || strings.Contains(rec.Body, "open gate") {
			t.Errorf("the record of a message no gate was seen for does not say reply:\n%s", rec.Body)
		}
		if got := r.inbox(); !strings.Contains(got, "is empty") {
			t.Errorf("a relayed gate answer was delivered too:\n%s", got)
		}
		recv := r.events("channel.reply_received")
		if len(recv) != 1 || fields(recv[0], "kind", "gate") != "kind=gate.feedback gate=unknown" {
			t.Errorf("channel.reply_received: %v, want one gate.feedback with gate unknown", recv)
		}
		// The ingress judges it: there is no checkout to drive a graph in.
		if got := r.comment("d-record", rec); got != "dropped no-checkout" {
			t.Errorf("the record's webhook: %s, want dropped no-checkout", got)
		}
	})
	t.Run("not granted gate.feedback", func(t *testing.T) {
		r := startSlackRig(t, rigOptions{publish: []string{"work-item.reply"}, noCheckout: true})
		if got := r.postSlack("Ev05", e2eSlackUser, "1712345999.000600", "approved"); got != "routed" {
			t.Fatalf("the Slack message: %s, want routed\n%s", got, r.stderr.String())
		}
		cs := r.comments()
		if len(cs) != 1 || !builtins.IsSelfAuthored(cs[0].Body) {
			t.Fatalf("want one marked record, got %+v", cs)
		}
		if env, ok := builtins.ParseEnvelope(cs[0].Body); !ok || env.Type != "work-item.reply" {
			t.Errorf("envelope %+v (%v), want work-item.reply", env, ok)
		}
		if got := r.inbox(); !strings.Contains(got, " slack U0456 (thread "+e2eThreadTS+"): approved\n") {
			t.Errorf("the inbox does not hold the reply:\n%s", got)
		}
		recv := r.events("channel.reply_received")
		if len(recv) != 1 || fields(recv[0], "kind", "gate") != "kind=work-item.reply gate=unknown" {
			t.Errorf("channel.reply_received: %v, want one work-item.reply with gate unknown", recv)
		}
	})
}

// TestServeReadsSlackOnlyThroughTheEventsAPI: channels.slack enabled with
// read.mode poll starts serve, saying it reads Slack only through the
// Events API, and mounts no Slack endpoint.
func TestServeReadsSlackOnlyThroughTheEventsAPI(t *testing.T) {
	r := startSlackRig(t, rigOptions{publish: []string{"work-item.reply"}, readMode: "poll"})
	if got := r.stderr.String(); !strings.Contains(got, "serve reads Slack only through the Events API") || !strings.Contains(got, "read.mode=poll") {
		t.Errorf("serve did not warn that it reads Slack only through the Events API:\n%s", got)
	}
	body := slacktest.MessageEvent("Ev06", slacktest.Message{Channel: e2eChannel, User: e2eSlackUser, Text: "approved", TS: "1712345999.000700", ThreadTS: e2eThreadTS})
	req, _ := http.NewRequest(http.MethodPost, r.base+slack.EventsPath, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	slacktest.SignHeader(req.Header, []byte("slack-s3cret"), body, time.Now())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST %s: status %d, want 404 when Slack is not read through the Events API", slack.EventsPath, resp.StatusCode)
	}
	r.stop()
}

// TestASlackApprovalSurvivesA502FromGitHub: jc1993 approves on Slack, and
// GitHub answers the ledger's POST with a 502: before it posted, after it
// posted (the proxy gave up waiting), or for longer than the ledger waits.
// Each time the record is on the issue exactly once, under the envelope id
// of the Slack message; the event is routed once, and only once it was
// recorded; and GitHub's webhook for the record moves the gate.
func TestASlackApprovalSurvivesA502FromGitHub(t *testing.T) {
	const comments = "/repos/acme/shop/issues/12/comments"
	for _, tc := range []struct {
		name    string
		fault   githubtest.Fault
		posts   int  // POSTs of the record GitHub saw
		found   bool // the ledger found the record a lost answer hid
		retries int  // times the queue processed the event again
	}{
		{"a 502 before GitHub posted", githubtest.Fault{Method: "POST", Path: comments, Status: 502}, 2, false, 0},
		{"a 502 after GitHub posted", githubtest.Fault{Method: "POST", Path: comments, Status: 502, Applied: true}, 1, true, 0},
		{"502s for longer than the ledger waits", githubtest.Fault{Method: "POST", Path: comments, Status: 502, Times: 3}, 4, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startSlackRig(t, rigOptions{publish: []string{"work-item.reply", "gate.feedback"}})
			if got := r.write("d-start", "jc1993", "the-loop start"); got != "routed" {
				t.Fatalf("start: %s, want routed\n%s", got, r.stderr.String())
			}
			before := len(r.comments())
			r.gh.Fail(tc.fault)
			const ts = "1712345999.000900"
			if got := r.postSlack("Ev07APPROVE", e2eSlackUser, ts, "approved"); got != "routed" {
				t.Fatalf("the Slack approval: %s, want routed\n%s", got, r.stderr.String())
			}
			if got := r.outcomes("slack:Ev07APPROVE", 1); len(got) != 1 {
				t.Errorf("outcomes %v, want one", got)
			}
			posts := 0
			for _, c := range r.gh.Calls() {
				if c.Method == "POST" && c.Path == comments {
					posts++
				}
			}
			if posts != tc.posts {
				t.Errorf("%d POSTs of the record, want %d", posts, tc.posts)
			}
			after := r.comments()
			if len(after) != before+1 {
				t.Fatalf("the issue got %d records, want exactly 1: %+v", len(after)-before, after[before:])
			}
			rec := after[before]
			if env, ok := builtins.ParseEnvelope(rec.Body); !ok || env.ID != "slack:"+e2eChannel+":"+ts || env.Type != "gate.feedback" || env.Actor["github"] != "jc1993" {
				t.Errorf("envelope %+v (%v), want jc1993's gate.feedback under the Slack message's id", env, ok)
			}
			mirrored := r.events("channel.mirrored")
			if len(mirrored) != 1 || (mirrored[0]["found"] == true) != tc.found {
				t.Errorf("channel.mirrored %v, want one, found %v", mirrored, tc.found)
			}
			retrying := r.events("routing.retrying")
			if len(retrying) != tc.retries {
				t.Errorf("routing.retrying %v, want %d", retrying, tc.retries)
			}
			for _, rt := range retrying {
				if rt["delivery_id"] != "slack:Ev07APPROVE" || !strings.Contains(fmt.Sprint(rt["error"]), "502") {
					t.Errorf("routing.retrying %v, want the event and GitHub's 502", rt)
				}
			}
			if tc.retries > 0 {
				routed := r.events("routing.routed")
				if last := routed[len(routed)-1]; last["delivery_id"] != "slack:Ev07APPROVE" || last["retries"] != float64(tc.retries) {
					t.Errorf("routing.routed %v, want the event's, after %d retries", last, tc.retries)
				}
			}
			want := []string{e2eChannel + " " + ts + " eyes", e2eChannel + " " + ts + " white_check_mark"}
			if got := r.reactions(); !slices.Equal(got, want) {
				t.Errorf("Slack reactions %q, want %q", got, want)
			}
			if got := r.comment("d-record", rec); got != "routed" {
				t.Fatalf("the record's webhook: %s, want routed\n%s", got, r.stderr.String())
			}
			if n := r.node(); n != "design" {
				t.Fatalf("issue-12 is at %q after the record of jc1993's approval, want design\n%s", n, r.stderr.String())
			}
		})
	}
}

// TestASlackApprovalWithAFileIsHeard: a threaded answer with a screenshot
// attached is a file_share message, in the shape Slack's Java SDK tests
// (channels/slack/testdata): it is read as the approval it is.
func TestASlackApprovalWithAFileIsHeard(t *testing.T) {
	r := startSlackRig(t, rigOptions{publish: []string{"work-item.reply", "gate.feedback"}})
	if got := r.write("d-start", "jc1993", "the-loop start"); got != "routed" {
		t.Fatalf("start: %s, want routed\n%s", got, r.stderr.String())
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "channels", "slack", "testdata", "message_file_share_in_thread.json"))
	if err != nil {
		t.Fatal(err)
	}
	var event map[string]any
	if err := json.Unmarshal(data, &event); err != nil {
		t.Fatal(err)
	}
	event["channel"], event["user"], event["ts"], event["thread_ts"], event["text"] = e2eChannel, e2eSlackUser, "1712345999.001000", e2eThreadTS, "approved, screenshot attached"
	if status := r.sendSlack(slacktest.EventCallback("Ev08FILE", event), "slack-s3cret"); status != http.StatusOK {
		t.Fatalf("status %d, want 200", status)
	}
	if got := r.outcome("slack:Ev08FILE"); got != "routed" {
		t.Fatalf("the approval with a file: %s, want routed\n%s", got, r.stderr.String())
	}
	cs := r.comments()
	rec := cs[len(cs)-1]
	if !strings.Contains(rec.Body, "\n> approved, screenshot attached\n") {
		t.Fatalf("the record does not quote the answer:\n%s", rec.Body)
	}
	if got := r.comment("d-record", rec); got != "routed" {
		t.Fatalf("the record's webhook: %s, want routed\n%s", got, r.stderr.String())
	}
	if n := r.node(); n != "design" {
		t.Errorf("issue-12 is at %q, want design", n)
	}
}
