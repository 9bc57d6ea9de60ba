package graph

import (
	"errors"
	"strings"
	"testing"
)

func TestApplyAppendsAfterTheShippedChain(t *testing.T) {
	g := mustCompile(t, "testdata/mini.yaml")
	x := fixed(Pass("x-check", nil))
	got, err := Apply(g, map[string]Hook{"x-check": x}, []Attachment{
		{Hook: "x-check", Node: "build"},
		{Hook: "x-check", Node: "draft", Boundary: Entry, Params: map[string]any{"k": "v"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	build, _ := got.Node("build")
	if names := hookNames(build.Exit); names != "nothing,ok,x-check" {
		t.Errorf("build exit: got %s", names)
	}
	draft, _ := got.Node("draft")
	if names := hookNames(draft.Entry); names != "x-check" || draft.Entry[0].Params["k"] != "v" {
		t.Errorf("draft entry: got %s", names)
	}
	orig, _ := g.Node("build")
	if names := hookNames(orig.Exit); names != "nothing,ok" {
		t.Errorf("Apply modified the shared graph: %s", names)
	}
	if _, ok := g.Hook("x-check"); ok {
		t.Error("the shared graph resolves a repository hook")
	}
	if h, ok := got.Hook("x-check"); !ok || h == nil {
		t.Error("the applied graph does not resolve x-check")
	}
}

func hookNames(c []ChainEntry) string {
	var n []string
	for _, e := range c {
		n = append(n, e.Hook)
	}
	return strings.Join(n, ",")
}

func TestApplyRefusesBadAttachments(t *testing.T) {
	g := mustCompile(t, "testdata/mini.yaml")
	x := fixed(Pass("x-check", nil))
	cases := []struct {
		name  string
		table map[string]Hook
		att   Attachment
		key   string
		want  string
	}{
		{"unregistered hook", map[string]Hook{"x-check": x}, Attachment{Hook: "x-other", Node: "build"}, "graph.hooks.attach.hook", "registered hooks are: x-check"},
		{"node not in this loop", map[string]Hook{"x-check": x}, Attachment{Hook: "x-check", Node: "design"}, "graph.hooks.attach.node", "its nodes are: select, draft, review, build, done"},
		{"bad boundary", map[string]Hook{"x-check": x}, Attachment{Hook: "x-check", Node: "build", Boundary: "middle"}, "graph.hooks.attach.boundary", "want entry or exit"},
		{"shipped name in the table", map[string]Hook{"ok": x}, Attachment{Hook: "ok", Node: "build"}, "graph.hooks", "must be named x-"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.att.File, c.att.Line = ".the-loop/harness-config.yaml", 12
			_, err := Apply(g, c.table, []Attachment{c.att})
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Key != c.key || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a ConfigError on %s mentioning %q", err, c.key, c.want)
			}
		})
	}
}

func TestARepositoryHookCannotRescueABlockedChain(t *testing.T) {
	g := mustCompile(t, "testdata/mini.yaml")
	ran := false
	x := HookFunc(func(*Context) (Result, error) { ran = true; return Pass("x-yes", nil), nil })
	src := "name: t\nnodes:\n  - id: a\n    exit: [deny]\n"
	g, _ = Compile("t.yaml", []byte(src), testRegistry())
	got, err := Apply(g, map[string]Hook{"x-yes": x}, []Attachment{{Hook: "x-yes", Node: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := got.Node("a")
	out := RunChain(a.Exit, &Context{Graph: got, Node: a})
	if out.Status != StatusBlock || ran {
		t.Errorf("got %s (x- hook ran: %v), want block with the repository hook never run", out.Status, ran)
	}
}

func TestTwoRepositoriesKeepTheirOwnImplementations(t *testing.T) {
	g := mustCompile(t, "testdata/mini.yaml")
	a, _ := Apply(g, map[string]Hook{"x-check": fixed(Pass("x-check", nil))}, []Attachment{{Hook: "x-check", Node: "build"}})
	b, _ := Apply(g, map[string]Hook{"x-check": fixed(Block("x-check", Errorf("b says no")))}, []Attachment{{Hook: "x-check", Node: "build"}})
	na, _ := a.Node("build")
	nb, _ := b.Node("build")
	if s := RunChain(na.Exit, &Context{Graph: a, Node: na}).Status; s != StatusPass {
		t.Errorf("repository a: got %s", s)
	}
	if s := RunChain(nb.Exit, &Context{Graph: b, Node: nb}).Status; s != StatusBlock {
		t.Errorf("repository b: got %s", s)
	}
}
