package builtins

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/repo"
)

// obCall is one recorded integration call.
type obCall struct {
	Op     string
	Params map[string]any
}

// obFake is an integration that records calls and serves a thread: the
// comments list-comments answers with and the comments add-comment appends.
// Answers maps an op to the result it returns (nil means {}).
type obFake struct {
	mu      sync.Mutex
	Thread  []map[string]any
	Answers map[string]map[string]any
	Calls   []obCall
}

func (f *obFake) Name() string { return "fake" }

func (f *obFake) Call(op string, params map[string]any) (map[string]any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Calls = append(f.Calls, obCall{Op: op, Params: params})
	switch op {
	case opListComments:
		list := make([]any, len(f.Thread))
		for i, c := range f.Thread {
			list[i] = c
		}
		return map[string]any{"comments": list}, nil
	case opAddComment:
		body, _ := params["body"].(string)
		f.Thread = append(f.Thread, map[string]any{"user": map[string]any{"login": "the-loop-bot"}, "body": body})
	}
	return f.Answers[op], nil
}

// ops lists the operations called, in order.
func (f *obFake) ops() []string {
	var ops []string
	for _, c := range f.Calls {
		ops = append(ops, c.Op)
	}
	return ops
}

// posted lists the bodies of every add-comment call.
func (f *obFake) posted() []string {
	var bodies []string
	for _, c := range f.Calls {
		if c.Op == opAddComment {
			bodies = append(bodies, c.Params["body"].(string))
		}
	}
	return bodies
}

// obBroken fails every call, the way an outage does.
type obBroken struct{ calls int }

func (b *obBroken) Name() string { return "broken" }

func (b *obBroken) Call(op string, _ map[string]any) (map[string]any, error) {
	b.calls++
	return nil, fmt.Errorf("%s: github is down", op)
}

// obCtx is a context for one hook run with sensible defaults: an "owner"
// allowlist, a work item issue-1 in dir (may be ""), the given node.
func obCtx(in graph.Integration, node *graph.Node, dir string) *graph.Context {
	if node == nil {
		node = &graph.Node{ID: "design", Phase: "design", Actor: graph.ActorAgent}
	}
	item := graph.WorkItem{Ref: "github:o/r#1", ID: "issue-1"}
	var co *repo.Checkout
	if dir != "" {
		var err error
		if co, err = repo.Open(dir); err != nil {
			panic(err)
		}
		item.Dir = "."
	}
	return &graph.Context{
		WorkItem:    item,
		Node:        node,
		Boundary:    graph.Entry,
		Checkout:    co,
		Files:       graph.DirectFiles(co),
		Params:      map[string]any{},
		Decisions:   map[string]any{},
		Settings:    graph.Settings{AuthorizedUsers: []string{"@owner"}},
		Integration: in,
		Log:         slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// eventOf builds an event of comments, alternating author and body.
func eventOf(authorBody ...string) *graph.Event {
	ev := &graph.Event{}
	for i := 0; i+1 < len(authorBody); i += 2 {
		ev.Comments = append(ev.Comments, graph.Comment{Author: authorBody[i], Body: authorBody[i+1]})
	}
	return ev
}

// outboundCases puts every outbound hook in a state where it would call out.
func outboundCases(t *testing.T) []struct {
	name string
	hook graph.Hook
	prep func(*graph.Context)
} {
	t.Helper()
	withFile := func(name, content string) func(*graph.Context) {
		return func(ctx *graph.Context) {
			obWriteFile(t, itemDir(ctx), name, content)
		}
	}
	return []struct {
		name string
		hook graph.Hook
		prep func(*graph.Context)
	}{
		{"post-phase-selection", postPhaseSelection{}, nil},
		{"post-goal-request", postGoalRequest{}, nil},
		{"set-phase-label", setPhaseLabel{}, nil},
		{"log-entry", logEntry{}, withFile(executionLog, "# Log\n")},
		{"request-review", requestReview{}, nil},
		{"publish-artifact", publishArtifact{}, func(ctx *graph.Context) {
			ctx.Params["artifact"] = "contribution.md"
			obWriteFile(t, itemDir(ctx), "contribution.md", "## Goal\n")
		}},
		{"notify", notify{}, func(ctx *graph.Context) { ctx.Params["roles"] = []any{"approver"} }},
		{"deliver-assignment", deliverAssignment{}, nil},
		{"mcp-call", mcpCall{}, func(ctx *graph.Context) { ctx.Params["tool"] = "jira.create" }},
	}
}

// obUnsupported performs no operation at all, the way the GitHub
// integration answers notify, deliver-assignment and mcp-call.
type obUnsupported struct{ calls int }

func (u *obUnsupported) Name() string { return "unsupported" }

func (u *obUnsupported) Call(op string, _ map[string]any) (map[string]any, error) {
	u.calls++
	return nil, fmt.Errorf("github %s: %w", op, errors.ErrUnsupported)
}

// What an outbound hook does when it cannot act, as the original's hook does.
type obVerdict int

const (
	obDegrades      obVerdict = iota // pass, data["error"]: a warning and graph.hook_degraded
	obSkipsQuietly                   // skip, no data["error"]: nothing surfaced
	obBlocks                         // block, retriable
	obBlocksForGood                  // block, not retriable
)

func (v obVerdict) String() string {
	return [...]string{"degrades", "skips quietly", "blocks", "blocks for good"}[v]
}

// TestEachOutboundHookFailsAsTheOriginalDoes pins, per hook, what happens
// with no integration at all (the CLI path), with an integration that does
// not perform the hook's operation (no channel for it), and when the call
// fails. The original: the GitHub hooks catch every failure of their
// transport and degrade (hooks/sideeffects.py, goal.py, selection.py);
// deliver-assignment skips without a delivery callable and on a failed
// delivery (hooks/assignment.py); notify skips when no channel is subscribed
// and degrades when none delivered (sideeffects.py); mcp-call blocks, for
// good when there is no harness to delegate to (hooks/mcp.py).
func TestEachOutboundHookFailsAsTheOriginalDoes(t *testing.T) {
	type want struct{ none, unsupported, failed obVerdict }
	wants := map[string]want{
		"post-phase-selection": {obDegrades, obDegrades, obDegrades},
		"post-goal-request":    {obDegrades, obDegrades, obDegrades},
		"set-phase-label":      {obDegrades, obDegrades, obDegrades},
		"request-review":       {obDegrades, obDegrades, obDegrades},
		"publish-artifact":     {obDegrades, obDegrades, obDegrades},
		"notify":               {obSkipsQuietly, obSkipsQuietly, obDegrades},
		"deliver-assignment":   {obSkipsQuietly, obSkipsQuietly, obSkipsQuietly},
		"mcp-call":             {obBlocksForGood, obBlocksForGood, obBlocks},
	}
	for _, tc := range outboundCases(t) {
		if tc.name == "log-entry" {
			continue // writes a file, calls nothing: the TestLogEntry tests
		}
		w, ok := wants[tc.name]
		if !ok {
			t.Fatalf("%s: no expectation; add it to the table", tc.name)
		}
		for _, c := range []struct {
			name string
			in   graph.Integration
			want obVerdict
			says string
		}{
			{"no integration", graph.NoIntegration{}, w.none, graph.ErrIntegrationUnavailable.Error()},
			{"no channel for the operation", &obUnsupported{}, w.unsupported, errors.ErrUnsupported.Error()},
			{"the call failed", &obBroken{}, w.failed, "github is down"},
		} {
			t.Run(tc.name+"/"+c.name, func(t *testing.T) {
				ctx := obCtx(c.in, nil, t.TempDir())
				if tc.prep != nil {
					tc.prep(ctx)
				}
				r, err := tc.hook.Run(ctx)
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				msg, _ := r.Data["error"].(string)
				var got obVerdict
				switch {
				case r.Status == graph.StatusPass && msg != "":
					got = obDegrades
				case r.Status == graph.StatusSkip && msg == "":
					got = obSkipsQuietly
				case r.Status == graph.StatusBlock && r.Retriable:
					got = obBlocks
				case r.Status == graph.StatusBlock:
					got = obBlocksForGood
				default:
					t.Fatalf("got %s with data %v (%s), want it to %s", r.Status, r.Data, r.Render(), c.want)
				}
				if got != c.want {
					t.Fatalf("it %s (%s %v: %s), want it to %s", got, r.Status, r.Data, r.Render(), c.want)
				}
				// A degradation or a block says what went wrong; a quiet skip
				// carries no error for the runtime to surface.
				if said := msg + r.Render(); c.want != obSkipsQuietly && !strings.Contains(said, c.says) {
					t.Errorf("%q does not say %q", said, c.says)
				}
			})
		}
	}
}

// TestAnOutboundHookWithNothingToDoSkipsWithoutCallingOut pins the
// original's "not configured" skips: each is decided before any call, so no
// integration is asked and nothing is surfaced.
func TestAnOutboundHookWithNothingToDoSkipsWithoutCallingOut(t *testing.T) {
	cases := []struct {
		name string
		hook graph.Hook
		prep func(*graph.Context)
		want string
	}{
		{"set-phase-label on a node with no phase", setPhaseLabel{}, func(ctx *graph.Context) { ctx.Node = &graph.Node{ID: "work"} }, "node declares no phase label"},
		{"notify with no roles for its event", notify{}, nil, "no roles configured for phase-approval-pending"},
		{"mcp-call with no tool named", mcpCall{}, nil, "no MCP tool named"},
		{"publish-artifact in an adopted repository", publishArtifact{}, func(ctx *graph.Context) {
			ctx.Settings.RepoInitialized = true
			ctx.Params["artifact"] = "design.md"
		}, "the repository carries the artifact"},
		{"publish-artifact with no artifact named", publishArtifact{}, nil, "no artifact named"},
		{"publish-artifact with the artifact not written", publishArtifact{}, func(ctx *graph.Context) { ctx.Params["artifact"] = "design.md" }, "no design.md for this work item"},
		{"log-entry with no execution log", logEntry{}, nil, "no execution log for this work item"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := &obFake{}
			ctx := obCtx(fake, nil, t.TempDir())
			if tc.prep != nil {
				tc.prep(ctx)
			}
			r, err := tc.hook.Run(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != graph.StatusSkip || !strings.Contains(r.Render(), tc.want) || r.Data["error"] != nil {
				t.Errorf("got %s %v %q, want a quiet skip saying %q", r.Status, r.Data, r.Render(), tc.want)
			}
			if len(fake.Calls) > 0 {
				t.Errorf("called out: %v", fake.ops())
			}
		})
	}
}

func TestEveryOutboundHookSkipsUnderReadOnlyWithoutCallingOut(t *testing.T) {
	for _, tc := range outboundCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			fake := &obFake{}
			dir := t.TempDir()
			ctx := obCtx(fake, nil, dir)
			if tc.prep != nil {
				tc.prep(ctx)
			}
			before := obSnapshotDir(t, dir)
			ctx.ReadOnly = true
			r, err := tc.hook.Run(ctx)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if r.Status != graph.StatusSkip {
				t.Errorf("status = %s, want skip", r.Status)
			}
			if len(fake.Calls) > 0 {
				t.Errorf("called out under read-only: %v", fake.ops())
			}
			if after := obSnapshotDir(t, dir); after != before {
				t.Errorf("wrote under read-only:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

func TestEveryOutboundHookPassesWhenTheCallSucceeds(t *testing.T) {
	for _, tc := range outboundCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			fake := &obFake{Answers: map[string]map[string]any{opMCPCall: {"ok": true, "result": "JIRA-1"}}}
			ctx := obCtx(fake, nil, t.TempDir())
			if tc.prep != nil {
				tc.prep(ctx)
			}
			r, err := tc.hook.Run(ctx)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if r.Status != graph.StatusPass {
				t.Fatalf("status = %s, want pass: %+v", r.Status, r)
			}
			if _, degraded := r.Data["error"]; degraded {
				t.Errorf("data[error] = %v on a successful call", r.Data["error"])
			}
		})
	}
}

func TestEveryCommentTheLoopPostsIsSelfMarked(t *testing.T) {
	for _, tc := range outboundCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			fake := &obFake{}
			ctx := obCtx(fake, nil, t.TempDir())
			if tc.prep != nil {
				tc.prep(ctx)
			}
			if _, err := tc.hook.Run(ctx); err != nil {
				t.Fatalf("Run: %v", err)
			}
			for _, body := range fake.posted() {
				if !isSelfAuthored(body) {
					t.Errorf("posted a comment without the self-authored marker:\n%s", body)
				}
			}
		})
	}
}

// ownHooks are the hooks this package's outbound and gate files register.
var ownHooks = []string{
	"post-phase-selection", "classify-phase-selection", "post-goal-request",
	"classify-goal", "classify-adhoc-reply", "set-phase-label", "log-entry",
	"request-review", "publish-artifact", "notify", "deliver-assignment",
	"mcp-call", "verify-tests",
}

func TestEachHookIsRegisteredAndChecksItsParams(t *testing.T) {
	for _, name := range ownHooks {
		t.Run(name, func(t *testing.T) {
			h, ok := Registry().Lookup(name)
			if !ok {
				t.Fatalf("%s is not registered", name)
			}
			pc, ok := h.(graph.ParamChecker)
			if !ok {
				t.Fatalf("%s does not implement graph.ParamChecker", name)
			}
			err := pc.CheckParams(map[string]any{"bogus": 1})
			if err == nil || !strings.Contains(err.Error(), "with.bogus") {
				t.Errorf("unknown key: got %v, want an error naming with.bogus", err)
			}
			if err := pc.CheckParams(map[string]any{}); err != nil {
				t.Errorf("no params: %v", err)
			}
		})
	}
}

func TestParamErrorsNameTheKeyAndWhatWouldBeRight(t *testing.T) {
	cases := []struct {
		hook   string
		params map[string]any
		want   string // "" means accepted
	}{
		{"notify", map[string]any{"event": "pr-review-pending", "roles": []any{"lead"}}, ""},
		{"notify", map[string]any{"event": 3}, "with.event: got 3, want a string"},
		{"notify", map[string]any{"roles": "lead"}, `with.roles: got "lead", want a list of strings`},
		{"notify", map[string]any{"evnt": "x"}, "with.evnt: unknown parameter; notify accepts: event, roles"},
		{"publish-artifact", map[string]any{"artifact": "contribution.md"}, ""},
		{"publish-artifact", map[string]any{"artifact": "../../etc/passwd"}, "with.artifact"},
		{"publish-artifact", map[string]any{"artifact": []any{"a"}}, "want a string"},
		{"mcp-call", map[string]any{"tool": "t", "arguments": map[string]any{"a": 1}, "harness": "cursor", "timeoutSeconds": 30}, ""},
		{"mcp-call", map[string]any{"arguments": []any{}}, "with.arguments: got [], want a mapping"},
		{"mcp-call", map[string]any{"timeoutSeconds": -1}, "want a number greater than zero"},
		{"verify-tests", map[string]any{"command": "go test ./...", "timeoutSeconds": 60}, ""},
		{"verify-tests", map[string]any{"command": []any{"go", "test"}}, ""},
		{"verify-tests", map[string]any{"command": []any{"go", 1}}, "want a command string or a list of argument strings"},
		{"verify-tests", map[string]any{"command": `echo "open`}, "with.command: no closing quotation"},
		{"verify-tests", map[string]any{"timeoutSeconds": "soon"}, `with.timeoutSeconds: got "soon"`},
		{"set-phase-label", map[string]any{"label": "x"}, "set-phase-label takes no parameters"},
	}
	for _, tc := range cases {
		t.Run(tc.hook+"/"+fmt.Sprint(tc.params), func(t *testing.T) {
			h, _ := Registry().Lookup(tc.hook)
			err := h.(graph.ParamChecker).CheckParams(tc.params)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused valid params: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestCallOutTreatsAMissingIntegrationAsNone(t *testing.T) {
	ctx := obCtx(nil, nil, "")
	_, err := callOut(ctx, opAddComment, nil)
	if !errors.Is(err, graph.ErrIntegrationUnavailable) {
		t.Fatalf("got %v, want ErrIntegrationUnavailable", err)
	}
}

func TestRenderValueKeepsErrorMessagesShort(t *testing.T) {
	long := strings.Repeat("é", 100)
	got := obRenderValue(long)
	if n := len([]rune(got)); n != 60 || !strings.HasSuffix(got, "...") {
		t.Errorf("renderValue(long) = %q (%d runes), want 60 runes ending in ...", got, n)
	}
	if got := obRenderValue([]any{"a", 1}); got != `["a",1]` {
		t.Errorf("renderValue(list) = %s", got)
	}
}

// obWriteFile writes dir/name, creating directories.
// itemDir is the host path of the context's work item folder, for a test
// to lay out files in.
func itemDir(ctx *graph.Context) string { return ctx.Checkout.Abs(ctx.WorkItem.Dir) }

func obWriteFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// obSnapshotDir renders every file under dir with its content, sorted.
func obSnapshotDir(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		fmt.Fprintf(&b, "%s=%q;", strings.TrimPrefix(path, dir), data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
