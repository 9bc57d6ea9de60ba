package inbound

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/the-loop/the-loop/builtins"
	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/bindings"
	"github.com/the-loop/the-loop/channels/deliver"
	"github.com/the-loop/the-loop/channels/github"
	"github.com/the-loop/the-loop/channels/route"
	"github.com/the-loop/the-loop/eventlog"
	"github.com/the-loop/the-loop/policy"
)

// The work item of every test: the gate fixture's issue-12, which waits
// at requirements-approval, bound with its Slack thread.
const (
	workRef    = "github:acme/shop#12"
	slackChan  = "C0123ABC"
	threadTS   = "1712345678.000100"
	memberID   = "U0456"
	memberGH   = "jc1993"
	strangerID = "UEVIL"
)

var (
	replyGrant = []string{channels.EventReply}
	gateGrant  = []string{channels.EventReply, channels.EventGateFeedback}
	allGrants  = []string{channels.EventReply, channels.EventGateFeedback, channels.EventControl}
)

// ledgerCalls is a GitHub integration that keeps the comments the ledger
// posts; fail makes them fail.
type ledgerCalls struct {
	mu    sync.Mutex
	posts []map[string]any
	fail  error
}

func (l *ledgerCalls) Name() string { return "fake" }

func (l *ledgerCalls) Call(op string, params map[string]any) (map[string]any, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if op != github.OpAddComment {
		return nil, fmt.Errorf("unexpected op %s", op)
	}
	if l.fail != nil {
		return nil, l.fail
	}
	l.posts = append(l.posts, params)
	return map[string]any{"id": int64(100 + len(l.posts))}, nil
}

// bodies are the comments posted, in order.
func (l *ledgerCalls) bodies() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, p := range l.posts {
		out = append(out, p["body"].(string))
	}
	return out
}

// events keeps what was emitted, refusing what the catalog does not know.
type events struct {
	mu  sync.Mutex
	all []map[string]any
}

func (e *events) Emit(event, level string, fields map[string]any) error {
	if err := eventlog.Discard.Emit(event, level, fields); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	f := map[string]any{"event": event}
	for k, v := range fields {
		f[k] = v
	}
	e.all = append(e.all, f)
	return nil
}

func (e *events) named(name string) []map[string]any {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []map[string]any
	for _, f := range e.all {
		if f["event"] == name {
			out = append(out, f)
		}
	}
	return out
}

// syncBuffer is a log destination safe for the pipeline's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// world is a state root, a CLI config, the gate fixture as a checkout of
// acme/shop, and a pipeline over them.
type world struct {
	t        *testing.T
	state    string
	checkout string
	cli      *policy.CLIConfig
	store    *bindings.Store
	ledger   *ledgerCalls
	events   *events
	log      *syncBuffer
	p        *Pipeline
}

// opts shape a world.
type opts struct {
	publish []string
	// routing is extra YAML under routing:, indented two spaces.
	routing string
	// people replaces the allow-list's YAML entries.
	people string
}

func newWorld(t *testing.T, o opts) *world {
	t.Helper()
	dir := t.TempDir()
	w := &world{t: t, state: filepath.Join(dir, "state"), ledger: &ledgerCalls{}, events: &events{}, log: &syncBuffer{}}
	people := o.people
	if people == "" {
		people = "    - operator\n    - github: " + memberGH + "\n      slack: " + memberID + "\n      name: J. Chou\n"
	}
	publish := "[" + strings.Join(o.publish, ", ") + "]"
	config := "state:\n  root: " + w.state + "\neventLog:\n  enabled: false\nrouting:\n  authorizedUsers:\n" + people + o.routing +
		"channels:\n  slack:\n    enabled: true\n    read:\n      mode: events\n    publish: " + publish + "\n"
	path := filepath.Join(dir, "cli-config.yaml")
	writeFile(t, path, config)
	cli, err := policy.LoadCLIConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	w.cli = cli
	w.store = bindings.Open(w.state)
	w.checkout = w.copyFixture("https://github.com/acme/shop.git")
	w.build(o.publish)
	return w
}

// build makes the pipeline as serve does: over a link route.NewLink
// built, with the GitHub ledger.
func (w *world) build(publish []string) {
	w.t.Helper()
	link, err := route.NewLink(route.Config{CLI: w.cli, Integration: w.ledger, Events: w.events,
		Log: slog.New(slog.NewTextHandler(w.log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		w.t.Fatal(err)
	}
	w.p, err = New(Config{Link: link, Channel: Channel{Name: channels.ChannelSlack, Enabled: true, Publish: publish},
		Ledger: github.NewLedger(w.ledger, w.cli), Events: w.events})
	if err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) copyFixture(origin string) string {
	w.t.Helper()
	dir := filepath.Join(w.t.TempDir(), "shop")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "..", "testdata", "repos", "gate"))); err != nil {
		w.t.Fatal(err)
	}
	if origin != "" {
		writeFile(w.t, filepath.Join(dir, ".git", "config"), "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = "+origin+"\n")
	}
	return dir
}

// bind binds the work item to its thread and to checkout ("" for none),
// started unless command says otherwise ("-" for no control record).
func (w *world) bind(ref, checkout, command string) {
	w.t.Helper()
	r := mustRef(w.t, ref)
	if _, err := w.store.Set(r, bindings.Options{Repo: checkout, Slack: &bindings.Thread{Channel: slackChan, TS: threadTS}}); err != nil {
		w.t.Fatal(err)
	}
	if command == "" {
		command = channels.CommandStart
	}
	if command != "-" {
		if _, err := w.store.Record(r, bindings.Control{Command: command, Actor: "operator"}); err != nil {
			w.t.Fatal(err)
		}
	}
}

// say is a reply in the bound thread by author.
func (w *world) say(author, text string) (Result, error) {
	w.t.Helper()
	return w.p.Process(context.Background(), channels.Reply{Channel: channels.ChannelSlack, ChannelID: slackChan,
		Thread: threadTS, TS: "1712345999.000200", Author: author, Text: text})
}

// relay hands a record the ledger posted to the webhook ingress, as
// GitHub delivers it: a new comment on the work item's issue by the
// operator's account, whose credential the ledger posts with.
func (w *world) relay(body string) channels.Outcome {
	w.t.Helper()
	router, err := route.New(route.Config{CLI: w.cli, Integration: w.ledger})
	if err != nil {
		w.t.Fatal(err)
	}
	payload, _ := json.Marshal(map[string]any{"action": "created", "repository": map[string]any{"full_name": "acme/shop"},
		"issue":   map[string]any{"number": 12},
		"comment": map[string]any{"id": 7001, "body": body, "created_at": time.Now().UTC().Format(time.RFC3339), "user": map[string]any{"login": "operator", "type": "User"}},
		"sender":  map[string]any{"login": "operator", "type": "User"}})
	out, err := router.Process(context.Background(), channels.Delivery{ID: "relayed", Event: "issue_comment", Body: payload, Item: workRef})
	router.WaitReactions(time.Minute)
	if err != nil {
		w.t.Fatal(err)
	}
	return out
}

func (w *world) inbox() []deliver.Message {
	w.t.Helper()
	msgs, err := deliver.ReadInbox(w.state, mustRef(w.t, workRef))
	if err != nil {
		w.t.Fatal(err)
	}
	return msgs
}

// setState rewrites issue-12's graph-state.json to stand at node.
func (w *world) setState(node string) {
	w.t.Helper()
	path := filepath.Join(w.checkout, "docs", "specs", "issue-12", "graph-state.json")
	data, err := os.ReadFile(path)
	if err != nil {
		w.t.Fatal(err)
	}
	s := strings.Replace(string(data), `"currentNode": "requirements-approval"`, `"currentNode": "`+node+`"`, 1)
	s = strings.Replace(s, `"requirements-approval": {`, `"`+node+`": {`, 1)
	writeFile(w.t, path, s)
}

// snapshot is every file under dir and its digest: what "moves nothing"
// is held to.
func snapshot(t *testing.T, dirs ...string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[p] = sha256.Sum256(data)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func mustRef(t *testing.T, s string) channels.Ref {
	t.Helper()
	r, err := channels.ParseRef(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func marked(body string) bool { return builtins.IsSelfAuthored(body) }

func envelopeOf(t *testing.T, body string) builtins.Envelope {
	t.Helper()
	e, ok := builtins.ParseEnvelope(body)
	if !ok {
		t.Fatalf("the record carries no envelope:\n%s", body)
	}
	return e
}
