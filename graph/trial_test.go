package graph

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// trialRuntime is the mini loop with a repository hook that reports what
// it saw, attached at draft's exit (behind file-present) and at build's
// entry.
func trialRuntime(t *testing.T) *Runtime {
	t.Helper()
	rt, _ := newRuntime(t)
	seen := HookFunc(func(ctx *Context) (Result, error) {
		if ctx.Trace != nil {
			ctx.Trace.Prints = append(ctx.Trace.Prints, "at "+ctx.Node.ID)
			ctx.Trace.Steps = 7
		}
		if !ctx.ReadOnly {
			return Result{}, errors.New("a trial must be read-only")
		}
		return Block("x-seen", Message{Text: "saw " + ctx.WorkItem.CurrentNode + " with " + strings.Join(hookList(ctx.Results), ","), Path: "a.md", Line: 2}), nil
	})
	boom := HookFunc(func(*Context) (Result, error) { panic("kaboom") })
	g, err := Apply(rt.Graph, map[string]Hook{"x-seen": seen, "x-boom": boom}, []Attachment{
		{Hook: "x-seen", Node: "draft", Params: map[string]any{"k": "attached"}},
		{Hook: "x-boom", Node: "build"},
		{Hook: "x-boom", Node: "draft", Boundary: Entry},
	})
	if err != nil {
		t.Fatal(err)
	}
	rt.Graph = g
	return rt
}

func hookList(rs []Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Hook+"="+string(r.Status))
	}
	return out
}

func TestATrialRunsOneHookWhereverTheItemIs(t *testing.T) {
	cases := []struct {
		name       string
		trial      Trial
		node       string
		boundary   Boundary
		attached   bool
		text       string
		underCheck string
	}{
		{name: "at its attachment, behind a blocking hook",
			trial: Trial{Hook: "x-seen"}, node: "draft", boundary: Exit, attached: true,
			text:       "saw select with file-present=block",
			underCheck: "the chain stops before it: file-present blocked (missing draft.md (draft.md)), and check runs a hook only when every hook before it in the chain passed or skipped; and the item is at select, before draft"},
		{name: "at another node, as if attached at the end",
			trial: Trial{Hook: "x-seen", Node: "build"}, node: "build", boundary: Exit,
			text:       "saw select with nothing=skip,ok=pass,x-boom=block",
			underCheck: "it is not attached at build's exit"},
		{name: "at its node's other boundary",
			trial: Trial{Hook: "x-seen", Boundary: Entry}, node: "draft", boundary: Entry,
			text:       "saw select with x-boom=block",
			underCheck: "check does not evaluate entry chains"},
		{name: "at an entry",
			trial: Trial{Hook: "x-seen", Node: "select", Boundary: Entry}, node: "select", boundary: Entry,
			text:       "saw select with degraded=pass",
			underCheck: "check does not evaluate entry chains"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rt := trialRuntime(t)
			rep, err := rt.Trial("item", tc.trial)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Node != tc.node || rep.Boundary != tc.boundary || rep.Attached != tc.attached || rep.CurrentNode != "select" {
				t.Errorf("ran at %s %s (attached %v, item at %s), want %s %s (attached %v, item at select)",
					rep.Node, rep.Boundary, rep.Attached, rep.CurrentNode, tc.node, tc.boundary, tc.attached)
			}
			if rep.Result.Status != StatusBlock || len(rep.Findings) != 1 || rep.Findings[0].Text != tc.text || rep.Findings[0].Where() != "a.md:2" {
				t.Errorf("findings = %+v, want one at a.md:2 saying %q", rep.Findings, tc.text)
			}
			if !strings.Contains(rep.UnderCheck, tc.underCheck) {
				t.Errorf("under check: %q, want it to say %q", rep.UnderCheck, tc.underCheck)
			}
			if len(rep.Trace.Prints) != 1 || rep.Trace.Steps != 7 {
				t.Errorf("trace = %+v, want the hook's print and steps", rep.Trace)
			}
		})
	}
}

func TestATrialSaysWhenCheckWouldRunTheHook(t *testing.T) {
	rt := trialRuntime(t)
	os.WriteFile(rt.Checkout.Abs("docs/specs/item/draft.md"), []byte("# d\n"), 0o644)
	os.WriteFile(rt.Checkout.Abs("docs/specs/item/graph-state.json"), []byte(`{"version": 1, "workItem": "item", "currentNode": "review"}`), 0o644)
	rep, err := rt.Trial("item", Trial{Hook: "x-seen", Params: map[string]any{"k": "given"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.UnderCheck != "" {
		t.Errorf("under check: %q; check would run x-seen at draft, which the item has passed", rep.UnderCheck)
	}
	if rep.Params["k"] != "given" {
		t.Errorf("with = %v, want the trial's own", rep.Params)
	}
	os.WriteFile(rt.Checkout.Abs("docs/specs/item/graph-state.json"), []byte(`{"version": 1, "workItem": "item", "currentNode": "select"}`), 0o644)
	rep, _ = rt.Trial("item", Trial{Hook: "x-seen"})
	if want := "the item is at select, before draft"; !strings.Contains(rep.UnderCheck, want) {
		t.Errorf("under check: %q, want %q", rep.UnderCheck, want)
	}
}

func TestATrialOfAHookThatPanicsReportsTheBlockCheckWouldShow(t *testing.T) {
	rt := trialRuntime(t)
	rep, err := rt.Trial("item", Trial{Hook: "x-boom", Node: "build"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Ran() || rep.Trace.Err != "panic: kaboom" || rep.Trace.Backtrace == "" {
		t.Errorf("trace = %+v, want the panic and its stack", rep.Trace)
	}
	if rep.Result.Status != StatusBlock || rep.Result.Retriable {
		t.Errorf("result = %+v, want a block that is not retriable", rep.Result)
	}
}

func TestATrialRefusesWhatCannotBeMeant(t *testing.T) {
	for _, tc := range []struct {
		trial Trial
		want  string
	}{
		{Trial{Hook: "x-none"}, `no hook "x-none" in the mini-loop loop; its repository hooks are: x-boom, x-seen`},
		{Trial{Hook: "x-seen", Node: "drfat"}, `the mini-loop loop has no node "drfat" (did you mean "draft"?); its nodes are: select, draft,`},
		{Trial{Hook: "x-sen"}, `no hook "x-sen" in the mini-loop loop (did you mean "x-seen"?)`},
		{Trial{Hook: "x-seen", Boundary: "middle"}, `boundary "middle": want entry or exit`},
		{Trial{Hook: "x-boom"}, "x-boom is attached at draft entry, build exit in the mini-loop loop; name the node"},
	} {
		rt := trialRuntime(t)
		if _, err := rt.Trial("item", tc.trial); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", tc.trial, err, tc.want)
		}
	}
	rt := trialRuntime(t)
	if _, err := rt.Trial("nope", Trial{Hook: "x-seen"}); err == nil {
		t.Error("a trial of a missing item ran")
	}
}
