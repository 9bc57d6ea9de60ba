package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gofrs/flock"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	mcpserver "github.com/the-loop/the-loop/channels/mcp"
)

// demo copies examples/demo to a temporary directory and returns it, with
// an operator CLI config of its own (state under the test's directory).
func demo(t *testing.T, cliConfig string) (root, config string) {
	t.Helper()
	dir := t.TempDir()
	root = filepath.Join(dir, "demo")
	if err := os.CopyFS(root, os.DirFS(filepath.Join("..", "..", "examples", "demo"))); err != nil {
		t.Fatal(err)
	}
	config = filepath.Join(dir, "cli-config.yaml")
	body := "state:\n  root: " + filepath.Join(dir, "state") + "\n" + cliConfig
	if err := os.WriteFile(config, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", dir)
	t.Setenv("THE_LOOP_CLI_CONFIG", "")
	return root, config
}

// connect serves cfg in-process and returns a client session on it.
func connect(t *testing.T, cfg mcpserver.Config) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcpserver.New(cfg).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool, failing the test on a protocol error.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// decode is a successful result's structured content as v, which must be
// the same document as its text.
func decode(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("got the tool error %q, want an answer", text(res))
	}
	if err := json.Unmarshal([]byte(text(res)), v); err != nil {
		t.Fatalf("the text is not JSON: %v\n%s", err, text(res))
	}
	structured, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	json.Unmarshal(structured, &a)
	json.Unmarshal([]byte(text(res)), &b)
	as, _ := json.Marshal(a)
	bs, _ := json.Marshal(b)
	if string(as) != string(bs) {
		t.Errorf("the structured content differs from the text:\n%s\n%s", as, bs)
	}
}

func TestTheServerListsSevenToolsWithTheirInputSchemas(t *testing.T) {
	root, config := demo(t, "")
	cs := connect(t, mcpserver.Config{Repo: root, CLIConfig: config})
	want := map[string]struct{ props, required []string }{
		"list_work_items": {},
		"check_work_item": {[]string{"recompute", "work_item"}, []string{"work_item"}},
		"graph_show":      {[]string{"loop"}, nil},
		"graph_status":    {[]string{"work_item"}, []string{"work_item"}},
		"graph_advance":   {[]string{"work_item"}, []string{"work_item"}},
		"graph_complete":  {[]string{"node", "work_item"}, []string{"work_item"}},
		"query_events":    {[]string{"event", "level", "limit", "since", "until", "work_item"}, nil},
	}
	var got []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tool.Name)
		w, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %s", tool.Name)
			continue
		}
		if tool.Description == "" {
			t.Errorf("%s has no description", tool.Name)
		}
		b, _ := json.Marshal(tool.InputSchema)
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(b, &schema); err != nil || schema.Type != "object" {
			t.Errorf("%s: input schema %s, want an object schema", tool.Name, b)
		}
		props := slices.Sorted(func(yield func(string) bool) {
			for k := range schema.Properties {
				if !yield(k) {
					return
				}
			}
		})
		if !slices.Equal(props, w.props) || !slices.Equal(slices.Sorted(slices.Values(schema.Required)), w.required) {
			t.Errorf("%s: properties %v required %v, want %v and %v", tool.Name, props, schema.Required, w.props, w.required)
		}
		for _, human := range []string{"comment", "author", "event_file", "to", "reason", "skip", "force"} {
			if _, ok := schema.Properties[human]; ok {
				t.Errorf("%s takes %s, a person's input", tool.Name, human)
			}
		}
	}
	if !slices.Equal(got, mcpserver.Tools) && !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(mcpserver.Tools))) {
		t.Errorf("got tools %v, want %v", got, mcpserver.Tools)
	}
	if len(got) != 7 {
		t.Errorf("got %d tools, want 7", len(got))
	}
}

func TestEachToolAnswersOnTheDemo(t *testing.T) {
	root, config := demo(t, "")
	cs := connect(t, mcpserver.Config{Repo: root, CLIConfig: config})

	var items mcpserver.Items
	decode(t, call(t, cs, "list_work_items", nil), &items)
	var ids []string
	for _, it := range items.WorkItems {
		ids = append(ids, it.ID+"@"+it.CurrentNode)
		if it.Loop != "pdlc-work-item-loop" {
			t.Errorf("%s: loop %q", it.ID, it.Loop)
		}
	}
	if want := []string{"issue-12@complete", "issue-21@design", "issue-27@design-approval", "issue-31@implementation"}; !slices.Equal(ids, want) {
		t.Errorf("list_work_items: got %v, want %v", ids, want)
	}

	var rep struct {
		WorkItem    string `json:"workItem"`
		CurrentNode string `json:"currentNode"`
		OK          bool   `json:"ok"`
		Nodes       []struct{ Node, Status string }
	}
	decode(t, call(t, cs, "check_work_item", map[string]any{"work_item": "issue-21"}), &rep)
	if rep.WorkItem != "issue-21" || rep.CurrentNode != "design" || rep.OK || len(rep.Nodes) == 0 {
		t.Errorf("check_work_item: got %+v", rep)
	}
	decode(t, call(t, cs, "check_work_item", map[string]any{"work_item": "issue-12", "recompute": true}), &rep)
	if rep.WorkItem != "issue-12" {
		t.Errorf("check_work_item recompute: got %+v", rep)
	}
	decode(t, call(t, cs, "graph_status", map[string]any{"work_item": "issue-27"}), &rep)
	if rep.CurrentNode != "design-approval" {
		t.Errorf("graph_status: got %+v", rep)
	}

	var show struct {
		Name  string            `json:"name"`
		Nodes []json.RawMessage `json:"nodes"`
	}
	decode(t, call(t, cs, "graph_show", nil), &show)
	if show.Name != "pdlc-work-item-loop" || len(show.Nodes) == 0 {
		t.Errorf("graph_show: got %s with %d nodes", show.Name, len(show.Nodes))
	}
	decode(t, call(t, cs, "graph_show", map[string]any{"loop": "pdlc-pr-loop"}), &show)
	if show.Name != "pdlc-pr-loop" {
		t.Errorf("graph_show pdlc-pr-loop: got %s", show.Name)
	}

	var step struct{ Node, Status, To string }
	decode(t, call(t, cs, "graph_advance", map[string]any{"work_item": "issue-12"}), &step)
	if step.Node != "complete" || step.Status != "pass" {
		t.Errorf("graph_advance: got %+v", step)
	}

	var done struct {
		Node, Status, CurrentNode string
		Moved                     bool
	}
	decode(t, call(t, cs, "graph_complete", map[string]any{"work_item": "issue-21"}), &done)
	if done.Node != "design" || done.Moved {
		t.Errorf("graph_complete on a blocked design: got %+v", done)
	}

	var events mcpserver.Events
	decode(t, call(t, cs, "query_events", map[string]any{"event": []string{"graph"}}), &events)
	if len(events.Events) == 0 {
		t.Error("query_events: the advance and the claim logged no graph. event")
	}
}

func TestAnAdvanceAtAHumanGateWaitsForAPerson(t *testing.T) {
	root, config := demo(t, "routing:\n  authorizedUsers: [alice]\n")
	state := filepath.Join(root, "docs/specs/issue-27/graph-state.json")
	before, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, mcpserver.Config{Repo: root, CLIConfig: config})
	var step struct{ Node, Status, To string }
	decode(t, call(t, cs, "graph_advance", map[string]any{"work_item": "issue-27"}), &step)
	if step.Node != "design-approval" || step.Status != "wait" || step.To != "" {
		t.Errorf("got %+v, want design-approval waiting, the pointer where it was", step)
	}
	var rep struct{ CurrentNode string }
	decode(t, call(t, cs, "graph_status", map[string]any{"work_item": "issue-27"}), &rep)
	if rep.CurrentNode != "design-approval" {
		t.Errorf("the item moved to %s", rep.CurrentNode)
	}
	after, _ := os.ReadFile(state)
	if strings.Contains(string(after), `"approved"`) && !strings.Contains(string(before), `"approved"`) {
		t.Errorf("the advance recorded an approval:\n%s", after)
	}
}

func TestABadWorkItemIsAToolErrorNeverAPath(t *testing.T) {
	root, config := demo(t, "")
	// A folder beside the spec root that a joined ".." would reach.
	if err := os.MkdirAll(filepath.Join(root, "docs", "outside"), 0o755); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, mcpserver.Config{Repo: root, CLIConfig: config})
	for _, tool := range []string{"check_work_item", "graph_status", "graph_advance", "graph_complete"} {
		for _, id := range []string{"", "..", "../outside", "issue-12/../issue-21", "/etc", "no-such-item"} {
			res := call(t, cs, tool, map[string]any{"work_item": id})
			if !res.IsError {
				t.Errorf("%s %q: got an answer %.80q, want a tool error", tool, id, text(res))
				continue
			}
			msg := text(res)
			if strings.Contains(msg, "\n") || msg == "" {
				t.Errorf("%s %q: got %q, want one line", tool, id, msg)
			}
			if id == "no-such-item" && !strings.Contains(msg, "no spec folder") {
				t.Errorf("%s %q: got %q, want the CLI's no spec folder", tool, id, msg)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(root, "docs", "outside", "graph-state.json")); err == nil {
		t.Error("a call wrote outside the spec folder")
	}
	// The server is still there.
	var items mcpserver.Items
	decode(t, call(t, cs, "list_work_items", nil), &items)
}

func TestABrokenHarnessConfigIsEveryToolsErrorAndTheServerGoesOn(t *testing.T) {
	root, config := demo(t, "")
	harness := filepath.Join(root, ".the-loop", "harness-config.yaml")
	good, err := os.ReadFile(harness)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(harness, []byte("version: \"0.2.0\"\nworkflow:\n  specDir: [not, a, path]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, mcpserver.Config{Repo: root, CLIConfig: config})
	calls := map[string]map[string]any{
		"list_work_items": nil,
		"check_work_item": {"work_item": "issue-12"},
		"graph_show":      nil,
		"graph_status":    {"work_item": "issue-12"},
		"graph_advance":   {"work_item": "issue-12"},
		"graph_complete":  {"work_item": "issue-12"},
	}
	for tool, args := range calls {
		res := call(t, cs, tool, args)
		if !res.IsError || !strings.Contains(text(res), "harness-config.yaml") || strings.Contains(text(res), "\n") {
			t.Errorf("%s: got error=%v %q, want a one-line tool error naming the config", tool, res.IsError, text(res))
		}
	}
	// Mended, the next call reads it.
	if err := os.WriteFile(harness, good, 0o644); err != nil {
		t.Fatal(err)
	}
	var items mcpserver.Items
	decode(t, call(t, cs, "list_work_items", nil), &items)
}

func TestAClaimOnAnItemWhoseLockIsHeldAnswersBusy(t *testing.T) {
	root, config := demo(t, "")
	lock := flock.New(filepath.Join(root, "docs/specs/issue-31/graph-state.lock"))
	if ok, err := lock.TryLock(); !ok || err != nil {
		t.Fatal(ok, err)
	}
	defer lock.Unlock()
	state := filepath.Join(root, "docs/specs/issue-31/graph-state.json")
	before, _ := os.ReadFile(state)
	cs := connect(t, mcpserver.Config{Repo: root, CLIConfig: config})
	// As the CLI's: busy is an answer, not a failure.
	var done struct {
		Status string
		Moved  bool
	}
	decode(t, call(t, cs, "graph_complete", map[string]any{"work_item": "issue-31"}), &done)
	if done.Status != "busy" || done.Moved {
		t.Errorf("got %+v, want busy", done)
	}
	if after, _ := os.ReadFile(state); string(after) != string(before) {
		t.Error("a busy claim changed the state")
	}
}

func TestTheKillSwitchTurnsRepositoryHooksOffForTheTools(t *testing.T) {
	run := func(cli string) string {
		root, config := demo(t, cli)
		cs := connect(t, mcpserver.Config{Repo: root, CLIConfig: config})
		res := call(t, cs, "check_work_item", map[string]any{"work_item": "issue-31"})
		var v any
		decode(t, res, &v)
		return text(res)
	}
	on, off := run(""), run("routing:\n  graph:\n    repoHooks: false\n")
	const rule = `"hook": "x-tests-beside"`
	if !strings.Contains(on, rule) {
		t.Fatalf("the demo's rule does not show in its check:\n%s", on)
	}
	if strings.Contains(off, rule) {
		t.Errorf("under routing.graph.repoHooks: false the check still lists the repository's rule")
	}
}
