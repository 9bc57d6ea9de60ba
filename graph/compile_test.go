package graph

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func mustCompile(t testing.TB, file string) *Graph {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Compile(file, src, testRegistry())
	if err != nil {
		t.Fatalf("compile %s: %v", file, err)
	}
	return g
}

func TestCompileIndexesNodesEdgesAndSkipSets(t *testing.T) {
	g := mustCompile(t, "testdata/mini.yaml")
	if g.Name != "mini-loop" || g.Start != "select" || len(g.Nodes) != 5 {
		t.Fatalf("got name %q start %q %d nodes", g.Name, g.Start, len(g.Nodes))
	}
	if to, ok := g.Next("review", "approved"); !ok || to != "build" {
		t.Errorf("review on approved: got %q, %v", to, ok)
	}
	if set, ok := g.SkipSet("docs"); !ok || strings.Join(set, ",") != "draft,review" {
		t.Errorf("skip set docs: got %v", set)
	}
	n, _ := g.Node("draft")
	if n.MaxAttempts != 2 || n.Exit[0].Params["path"] != "draft.md" || n.Line == 0 {
		t.Errorf("draft compiled wrong: %+v", n)
	}
	if _, err := g.Node("nope"); !errors.Is(err, ErrUnknownNode) || !strings.Contains(err.Error(), "select, draft") {
		t.Errorf("unknown node error: %v", err)
	}
}

func TestCompileRefusesBrokenGraphs(t *testing.T) {
	base := func(nodes, edges string) string {
		return "name: t\nnodes:\n" + nodes + "edges:\n" + edges
	}
	cases := []struct {
		name, src string
		line      int
		node, key string
		want      string
	}{
		{"not yaml", "nodes: [", 1, "", "", "not valid YAML"},
		{"no nodes", "name: t\nnodes: []\n", 2, "", "nodes", "declares no nodes"},
		{"unknown hook", base("  - id: a\n    exit: [nope]\n", ""), 4, "a", "exit", `unknown hook "nope"; registered hooks are: boom, degraded, deny`},
		{"bad params", base("  - id: a\n    exit: [{hook: file-present, with: {pth: x}}]\n", ""), 4, "a", "exit.file-present.with", "with.pth"},
		{"required and skippable", base("  - id: a\n    required: true\n    skippable: true\n", ""), 3, "a", "skippable", "both required and skippable"},
		{"required and optIn", base("  - id: a\n    required: true\n    optIn: true\n", ""), 3, "a", "optIn", "both required and optIn"},
		{"skippable without skipped edge", base("  - id: a\n    skippable: true\n  - id: b\n", "  - {from: a, to: b, on: pass}\n"), 3, "a", "skippable", "no edge for the outcome skipped"},
		{"bad skip set member", "name: t\nskipSets:\n  s: [a]\nnodes:\n  - id: a\n", 3, "", "skipSets.s", "not a declared skippable node"},
		{"opt-in in skip set", "name: t\nskipSets:\n  s: [a]\nnodes:\n  - id: a\n    optIn: true\n  - id: b\nedges:\n  - {from: a, to: b, on: skipped}\n", 3, "", "skipSets.s", "opt-in node"},
		{"empty alternative", base("  - id: a\n    produces: [\"a.md||b.md\"]\n", ""), 4, "a", "produces", "empty alternative"},
		{"duplicate id", base("  - id: a\n  - id: a\n", ""), 4, "a", "id", `duplicate node id "a"`},
		{"edge to nowhere", base("  - id: a\n", "  - {from: a, to: z, on: pass}\n"), 5, "", "edges.to", `undeclared node "z"`},
		{"edge missing on", base("  - id: a\n", "  - {from: a, to: a}\n"), 5, "", "edges.on", `missing "on"`},
		{"bad actor", base("  - id: a\n    actor: robot\n", ""), 4, "a", "actor", "want agent, human or code"},
		{"unknown node key", base("  - id: a\n    exits: []\n", ""), 4, "a", "exits", "unknown node key"},
		{"start undeclared", "name: t\nstart: z\nnodes:\n  - id: a\n", 2, "", "start", `start node "z" is not declared`},
		{"malformed entry", base("  - id: a\n    exit: [{with: {}}]\n", ""), 4, "a", "exit", "malformed hook entry"},
		{"no id", base("  - phase: x\n", ""), 3, "", "id", "every node needs an id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Compile("loop.yaml", []byte(c.src), testRegistry())
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want a *ConfigError", err)
			}
			if ce.File != "loop.yaml" || ce.Line != c.line || ce.Node != c.node || ce.Key != c.key {
				t.Errorf("got file %q line %d node %q key %q, want line %d node %q key %q (%v)", ce.File, ce.Line, ce.Node, ce.Key, c.line, c.node, c.key, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("message %q does not contain %q", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "loop.yaml:") {
				t.Errorf("message %q does not start with the file", err)
			}
		})
	}
}

func TestOptInImpliesSkippable(t *testing.T) {
	src := "name: t\nnodes:\n  - id: a\n    optIn: true\n  - id: b\nedges:\n  - {from: a, to: b, on: skipped}\n"
	g, err := Compile("t.yaml", []byte(src), testRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := g.Node("a"); !n.Skippable {
		t.Error("an opt-in node must be skippable")
	}
}

func TestTheFirstDeclaredEdgeWins(t *testing.T) {
	src := "name: t\nnodes:\n  - id: a\n  - id: b\n  - id: c\nedges:\n  - {from: a, to: b, on: pass}\n  - {from: a, to: c, on: pass}\n"
	g, err := Compile("t.yaml", []byte(src), testRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if to, _ := g.Next("a", "pass"); to != "b" {
		t.Errorf("got %q, want b", to)
	}
}

func FuzzCompile(f *testing.F) {
	seed, _ := os.ReadFile("testdata/mini.yaml")
	f.Add(seed)
	f.Add([]byte("nodes: [{id: a, exit: [ok]}]"))
	f.Add([]byte("name: x\nskipSets: {a: [b]}\nnodes: [{id: b, skippable: true}]\nedges: [{from: b, to: b, on: skipped}]"))
	f.Fuzz(func(t *testing.T, src []byte) {
		g, err := Compile("fuzz.yaml", src, testRegistry())
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("non-config error: %v", err)
			}
			return
		}
		if !g.Has(g.Start) {
			t.Fatalf("compiled graph with undeclared start %q", g.Start)
		}
	})
}
