package route

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/bindings"
	"github.com/the-loop/the-loop/eventlog"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/policy"
)

// call is one outbound call the fake integration received.
type call struct {
	Op     string
	Params map[string]any
}

// fakeIntegration records every call and answers as a GitHub that has no
// comments; fail makes an operation fail.
type fakeIntegration struct {
	mu    sync.Mutex
	calls []call
	fail  map[string]error
}

func (f *fakeIntegration) Name() string { return "fake" }

func (f *fakeIntegration) Call(op string, params map[string]any) (map[string]any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call{op, params})
	if err := f.fail[op]; err != nil {
		return nil, err
	}
	if op == "list-comments" {
		return map[string]any{"comments": []any{}}, nil
	}
	return map[string]any{}, nil
}

// reactions are the contents of the add-reaction calls, in order.
func (f *fakeIntegration) reactions() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if c.Op == OpAddReaction {
			out = append(out, c.Params["content"].(string))
		}
	}
	return out
}

func (f *fakeIntegration) ops() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, c.Op)
	}
	return out
}

// record is one event emitted.
type record struct {
	Event, Level string
	Fields       map[string]any
}

// recorder is an emitter that keeps what it is given, refusing events the
// catalog does not describe as the real log does.
type recorder struct {
	mu      sync.Mutex
	records []record
}

func (r *recorder) Emit(event, level string, fields map[string]any) error {
	if err := eventlog.Discard.Emit(event, level, fields); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, record{event, level, fields})
	return nil
}

func (r *recorder) find(event string) (record, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range r.records {
		if rec.Event == event {
			return rec, true
		}
	}
	return record{}, false
}

func (r *recorder) names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rec := range r.records {
		out = append(out, rec.Event)
	}
	return out
}

// env is a router on a fresh state root, with the gate fixture copied in as
// a checkout whose origin is github.com/acme/shop.
type env struct {
	t        *testing.T
	router   *Router
	in       *fakeIntegration
	events   *recorder
	bindings *bindings.Store
	checkout string
}

// newEnv builds the router from a CLI config document (YAML); "" is
// routing.authorizedUsers [alice] and nothing else.
func newEnv(t *testing.T, config string) *env {
	t.Helper()
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	if config == "" {
		config = "routing:\n  authorizedUsers: [alice]\n"
	}
	path := filepath.Join(dir, "cli-config.yaml")
	if err := os.WriteFile(path, []byte("version: \"0.5.0\"\nstate:\n  root: "+state+"\neventLog:\n  enabled: false\n"+config), 0o644); err != nil {
		t.Fatal(err)
	}
	cli, err := policy.LoadCLIConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, in: &fakeIntegration{}, events: &recorder{}, bindings: bindings.Open(state)}
	e.router, err = New(Config{CLI: cli, Integration: e.in, Events: e.events})
	if err != nil {
		t.Fatal(err)
	}
	e.checkout = e.copyFixture("https://github.com/acme/shop.git")
	return e
}

// copyFixture copies testdata/repos/gate to a new directory and gives it a
// git config naming origin ("" for none).
func (e *env) copyFixture(origin string) string {
	e.t.Helper()
	dir := filepath.Join(e.t.TempDir(), "shop")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "..", "testdata", "repos", "gate"))); err != nil {
		e.t.Fatal(err)
	}
	if origin != "" {
		writeFile(e.t, filepath.Join(dir, ".git", "config"), "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = "+origin+"\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n")
	}
	return dir
}

// bind binds ref to the fixture checkout, recording command ("" for none).
func (e *env) bind(ref, command string) {
	e.t.Helper()
	r, err := channels.ParseRef(ref)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.bindings.Bind(r, e.checkout); err != nil {
		e.t.Fatal(err)
	}
	if command != "" {
		if _, err := e.bindings.Record(r, bindings.Control{Command: command, Actor: "alice"}); err != nil {
			e.t.Fatal(err)
		}
	}
}

func (e *env) binding(ref string) bindings.Binding {
	e.t.Helper()
	r, _ := channels.ParseRef(ref)
	b, ok, err := e.bindings.Lookup(r)
	if err != nil || !ok {
		e.t.Fatalf("%s: %v %v", ref, ok, err)
	}
	return b
}

func (e *env) process(d channels.Delivery) (channels.Outcome, error) {
	e.t.Helper()
	defer e.router.WaitReactions(time.Minute)
	return e.router.Process(context.Background(), d)
}

// read is a file of the checkout, "" when it is absent.
func (e *env) read(rel string) string {
	data, err := os.ReadFile(filepath.Join(e.checkout, filepath.FromSlash(rel)))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		e.t.Fatal(err)
	}
	return string(data)
}

// state is an item's graph state in the checkout.
func (e *env) state(rel string) graph.State {
	e.t.Helper()
	var st graph.State
	data := e.read(rel)
	if data == "" {
		return st
	}
	if err := json.Unmarshal([]byte(data), &st); err != nil {
		e.t.Fatalf("%s: %v", rel, err)
	}
	return st
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

// delivery is a webhook delivery; opts edit its payload before it is
// encoded.
type delivery struct {
	id, event string
	p         map[string]any
}

// commentIDs numbers the comments tests make: each is a comment of its own.
var commentIDs atomic.Int64

// newComment is an issue_comment "created" now on repo's issue number by
// actor.
func newComment(id, repo string, number int, actor, body string) *delivery {
	return &delivery{id: id, event: "issue_comment", p: map[string]any{
		"action":     "created",
		"repository": map[string]any{"full_name": repo},
		"issue":      map[string]any{"number": number, "body": "", "title": "an issue"},
		"comment": map[string]any{"id": 9000 + commentIDs.Add(1), "body": body, "created_at": time.Now().UTC().Format(time.RFC3339),
			"user": map[string]any{"login": actor, "type": "User"}},
		"sender": map[string]any{"login": actor, "type": "User"},
	}}
}

// onPR makes the comment's issue a pull request with description body.
func (d *delivery) onPR(body string) *delivery {
	issue := d.p["issue"].(map[string]any)
	issue["pull_request"] = map[string]any{"url": "https://api.github.com/repos/x/y/pulls/1"}
	issue["body"] = body
	return d
}

func (d *delivery) set(key string, v any) *delivery {
	d.p[key] = v
	return d
}

func (d *delivery) as(event string) *delivery {
	d.event = event
	return d
}

func (d *delivery) bot() *delivery {
	d.p["comment"].(map[string]any)["user"] = map[string]any{"login": "renovate[bot]", "type": "Bot"}
	return d
}

func (d *delivery) build() channels.Delivery {
	body, _ := json.Marshal(d.p)
	return channels.Delivery{ID: d.id, Event: d.event, Body: body, Item: channels.ItemOf(body)}
}

// wantDropped fails unless out is a drop for reason.
func wantDropped(t *testing.T, out channels.Outcome, err error, reason string) {
	t.Helper()
	if err != nil {
		t.Fatalf("got error %v, want dropped %s", err, reason)
	}
	if out.Routed || out.Reason != reason {
		t.Fatalf("got %+v, want dropped %s", out, reason)
	}
}

// wantRouted fails unless out is routed; it returns its fields.
func wantRouted(t *testing.T, out channels.Outcome, err error) map[string]any {
	t.Helper()
	if err != nil {
		t.Fatalf("got error %v, want routed", err)
	}
	if !out.Routed {
		t.Fatalf("got %+v, want routed", out)
	}
	return out.Fields
}

func contains(list []string, s string) bool { return slices.Contains(list, s) }

func hasPrefix(list []string, prefix string) bool {
	return slices.ContainsFunc(list, func(s string) bool { return strings.HasPrefix(s, prefix) })
}
