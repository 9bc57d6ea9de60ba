package graph

import (
	"strings"
	"testing"
)

func chainOf(names ...string) []ChainEntry {
	out := make([]ChainEntry, len(names))
	for i, n := range names {
		out[i] = ChainEntry{Hook: n}
	}
	return out
}

func TestRunChain(t *testing.T) {
	reg := testRegistry()
	reg["panics"] = HookFunc(func(*Context) (Result, error) { panic("kaboom") })
	reg["weird"] = fixed(Result{Status: "maybe"})
	reg["approves"] = fixed(Pass("approves", map[string]any{"outcome": "approved"}))
	reg["x-approves"] = fixed(Pass("x-approves", map[string]any{"outcome": "approved"}))
	g := &Graph{Name: "t", registry: reg, extensions: map[string]Hook{"x-approves": reg["x-approves"]}}
	cases := []struct {
		name      string
		chain     []string
		status    Status
		outcome   string
		ran       int
		retriable bool
		message   string
	}{
		{"all pass", []string{"ok", "ok"}, StatusPass, "pass", 2, true, ""},
		{"a skip is not a decision", []string{"nothing", "deny"}, StatusBlock, "block", 2, true, "denied"},
		{"block short-circuits", []string{"deny", "ok"}, StatusBlock, "block", 1, true, "denied"},
		{"wait short-circuits", []string{"gate", "ok"}, StatusWait, "wait", 1, true, "no authorized feedback"},
		{"an erroring hook blocks for good", []string{"boom", "ok"}, StatusBlock, "block", 1, false, "exploded"},
		{"a panicking hook blocks for good", []string{"panics"}, StatusBlock, "block", 1, false, "kaboom"},
		{"an unknown status blocks", []string{"weird"}, StatusBlock, "block", 1, false, `unknown status "maybe"`},
		{"an unresolvable hook blocks", []string{"x-missing"}, StatusBlock, "block", 1, false, "no hook is registered"},
		{"last explicit outcome wins", []string{"approves", "ok"}, StatusPass, "approved", 2, true, ""},
		{"a repository hook cannot route", []string{"x-approves"}, StatusPass, "pass", 1, true, ""},
		{"empty chain passes", nil, StatusPass, "pass", 0, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := RunChain(chainOf(c.chain...), &Context{Graph: g, Node: &Node{ID: "n"}})
			if out.Status != c.status || out.Outcome() != c.outcome || len(out.Results) != c.ran {
				t.Fatalf("got %s/%s after %d hooks, want %s/%s after %d", out.Status, out.Outcome(), len(out.Results), c.status, c.outcome, c.ran)
			}
			if out.Blocking != nil && out.Blocking.Retriable != c.retriable {
				t.Errorf("retriable: got %v, want %v", out.Blocking.Retriable, c.retriable)
			}
			if c.message != "" && !strings.Contains(out.Render(), c.message) {
				t.Errorf("render %q does not mention %q", out.Render(), c.message)
			}
		})
	}
}

func TestARepositoryHookCannotDeclareAnOutcome(t *testing.T) {
	reg := testRegistry()
	x := fixed(Pass("x-approves", map[string]any{"outcome": "approved", "kept": 1}))
	g := &Graph{Name: "t", registry: reg, extensions: map[string]Hook{"x-approves": x}}
	out := RunChain(chainOf("x-approves"), &Context{Graph: g, Node: &Node{ID: "n"}})
	if out.Outcome() != OutcomePass {
		t.Errorf("outcome: got %q, want pass", out.Outcome())
	}
	if _, ok := out.Results[0].Data["outcome"]; ok || out.Results[0].Data["kept"] != 1 {
		t.Errorf("data: got %v, want outcome dropped and the rest kept", out.Results[0].Data)
	}
	if len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0].Text, "x-approves declared outcome approved") ||
		out.Warnings[0].Hook != "x-approves" || out.Warnings[0].Node != "n" || out.Warnings[0].Severity != SeverityWarning {
		t.Errorf("warnings: got %+v, want one warning from x-approves on n", out.Warnings)
	}
}

func TestRunChainHandsEachHookItsParamsAndEarlierResults(t *testing.T) {
	var seen []int
	var params []any
	reg := fakeRegistry{"probe": HookFunc(func(ctx *Context) (Result, error) {
		seen = append(seen, len(ctx.Results))
		params = append(params, ctx.Params["n"])
		return Pass("probe", nil), nil
	})}
	g := &Graph{registry: reg}
	base := &Context{Graph: g, Node: &Node{ID: "n"}}
	RunChain([]ChainEntry{{Hook: "probe", Params: map[string]any{"n": 1}}, {Hook: "probe", Params: map[string]any{"n": 2}}}, base)
	if len(seen) != 2 || seen[0] != 0 || seen[1] != 1 || params[0] != 1 || params[1] != 2 {
		t.Errorf("got results %v params %v", seen, params)
	}
	if base.Params != nil || base.Results != nil {
		t.Error("RunChain modified the caller's context")
	}
}

// TestARepositoryHookKeepsAContextNoLaterHookRefills: a read-only
// evaluation hands its shipped hooks one Context after another, refilled;
// a repository hook, which may outlive its deadline still reading it, gets
// one of its own, and what it holds is still its own after the chain ran.
func TestARepositoryHookKeepsAContextNoLaterHookRefills(t *testing.T) {
	var kept, shipped []*Context
	keep := HookFunc(func(ctx *Context) (Result, error) {
		kept = append(kept, ctx)
		return Pass("x-keep", nil), nil
	})
	probe := HookFunc(func(ctx *Context) (Result, error) {
		shipped = append(shipped, ctx)
		return Pass("probe", nil), nil
	})
	g := &Graph{registry: fakeRegistry{"x-keep": keep, "probe": probe}}
	item := (&Runtime{Graph: g}).pureItemContext(WorkItem{ID: "i"}, NewState("i"), nil, NewFiles(nil))
	for _, id := range []string{"a", "b"} {
		nc := item.at(&Node{ID: id}, Exit, nil)
		RunChain([]ChainEntry{
			{Hook: "x-keep", Params: map[string]any{"node": id}},
			{Hook: "probe", Params: map[string]any{"n": 1}},
			{Hook: "probe", Params: map[string]any{"n": 2}},
		}, &nc)
	}
	if len(kept) != 2 || kept[0] == kept[1] {
		t.Fatalf("the repository hook's contexts: %p", kept)
	}
	for i, ctx := range kept {
		if ctx.Params["node"] != []string{"a", "b"}[i] || len(ctx.Results) != 0 || ctx.Node.ID != []string{"a", "b"}[i] {
			t.Errorf("a repository hook's context was refilled after it ran: node %s, params %v, %d results",
				ctx.Node.ID, ctx.Params, len(ctx.Results))
		}
		if ctx == shipped[0] {
			t.Error("a repository hook was handed the context shipped hooks share")
		}
	}
	if len(shipped) != 4 || shipped[0] != shipped[3] {
		t.Errorf("the shipped hooks of one evaluation were not handed one context, refilled")
	}
}

func TestDegradedHooksPassAndAreReported(t *testing.T) {
	g := &Graph{registry: testRegistry()}
	out := RunChain(chainOf("degraded", "ok"), &Context{Graph: g, Node: &Node{ID: "n"}})
	if out.Status != StatusPass || len(out.Degradations()) != 1 {
		t.Fatalf("got %s, degradations %v", out.Status, out.Degradations())
	}
}
