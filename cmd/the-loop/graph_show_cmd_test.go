package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/graphs"
	"github.com/the-loop/the-loop/policy"
)

// legacyGraphText is writeGraphText as it was, with fmt, a builder and
// json.Marshal, kept so that a test can compare every byte.
func legacyGraphText(w io.Writer, gr *graph.Graph) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s v%d, start: %s\n", gr.Name, gr.Version, gr.Start)
	for _, s := range gr.SkipSets {
		fmt.Fprintf(&b, "  skip set %s: %s\n", s.Name, strings.Join(s.Nodes, ", "))
	}
	for _, n := range gr.Nodes {
		var flags []string
		if n.Required {
			flags = append(flags, "required")
		}
		if n.OptIn {
			flags = append(flags, "opt-in")
		} else if n.Skippable {
			flags = append(flags, "skippable")
		}
		if n.Actor == graph.ActorHuman {
			flags = append(flags, "human")
		}
		if n.Terminal {
			flags = append(flags, "terminal")
		}
		suffix := ""
		if len(flags) > 0 {
			suffix = "  [" + strings.Join(flags, ", ") + "]"
		}
		fmt.Fprintf(&b, "  %s%s\n", n.ID, suffix)
		for _, ch := range []struct {
			label string
			chain []graph.ChainEntry
		}{{"entry", n.Entry}, {"exit", n.Exit}} {
			if len(ch.chain) == 0 {
				continue
			}
			names := make([]string, len(ch.chain))
			for i, e := range ch.chain {
				names[i] = e.Hook + legacyFormatParams(e.Params)
			}
			fmt.Fprintf(&b, "      %-5s %s\n", ch.label+":", visible(strings.Join(names, ", ")))
		}
		for _, e := range gr.EdgesFrom(n.ID) {
			fmt.Fprintf(&b, "      --%s--> %s\n", e.On, e.To)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func legacyFormatParams(params map[string]any) string {
	if len(params) == 0 {
		return ""
	}
	parts := make([]string, 0, len(params))
	for _, k := range slices.Sorted(maps.Keys(params)) {
		v, _ := json.Marshal(params[k])
		if str, ok := params[k].(string); ok {
			v = []byte(str)
		}
		parts = append(parts, fmt.Sprintf("%s: %s", k, v))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// countingWriter counts the writes made to it.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

func TestGraphTextIsAsItWas(t *testing.T) {
	loops := map[string]*graph.Graph{}
	for _, name := range graphs.Names {
		g, err := policy.Loop(name)
		if err != nil {
			t.Fatal(err)
		}
		loops[name] = g
	}
	loops["odd"] = &graph.Graph{
		Name: "odd", Version: 12, Start: "a",
		SkipSets: []graph.SkipSet{{Name: "none"}, {Name: "one", Nodes: []string{"b"}}},
		Nodes: []*graph.Node{
			{ID: "a", Required: true, Optional: true, OptIn: true, Skippable: true, Actor: graph.ActorHuman, Terminal: true},
			{ID: "b", Skippable: true, Entry: []graph.ChainEntry{{Hook: "h", Params: map[string]any{"s": "two\nlines\x1b[2K", "l": []any{"\u202e", 1.0}}}}},
			{ID: "c", Exit: []graph.ChainEntry{{Hook: "x-\xff"}, {Hook: "y", Params: map[string]any{"n": nil, "v": 1e-9, "m": map[string]any{"k": "<\u2028>"}}}}},
			{ID: "d", Actor: "agent"},
		},
		Edges: []graph.Edge{{From: "a", To: "b", On: "pass"}, {From: "c", To: "a", On: "more-work"}, {From: "a", To: "c", On: "skipped"}},
	}
	for name, g := range loops {
		var want, got countingWriter
		if err := legacyGraphText(visibleWriter{&want}, g); err != nil {
			t.Fatal(err)
		}
		if err := writeGraphText(visibleWriter{&got}, g); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%s: writeGraphText wrote\n%s\nwant\n%s", name, got.String(), want.String())
		}
		if got.writes != 1 {
			t.Errorf("%s: writeGraphText wrote in %d writes, want one", name, got.writes)
		}
	}
}

// TestShowMarksEachNodeWithTheOriginalsFlags pins the bracketed flags of
// graph show's text, as the original's graph_cmd.py prints them: a node that
// is optional and skippable reads [skippable], and opt-in wins over
// skippable, which it implies.
func TestShowMarksEachNodeWithTheOriginalsFlags(t *testing.T) {
	cases := []struct {
		name string
		node graph.Node
		want string
	}{
		{"a skippable optional node", graph.Node{ID: "n", Optional: true, Skippable: true}, "  n  [skippable]"},
		{"an optional node alone has no flag", graph.Node{ID: "n", Optional: true}, "  n"},
		{"opt-in over skippable", graph.Node{ID: "n", OptIn: true, Skippable: true}, "  n  [opt-in]"},
		{"a required human gate", graph.Node{ID: "n", Required: true, Actor: graph.ActorHuman}, "  n  [required, human]"},
		{"a skippable human gate", graph.Node{ID: "n", Skippable: true, Actor: graph.ActorHuman}, "  n  [skippable, human]"},
		{"the terminal node", graph.Node{ID: "n", Terminal: true}, "  n  [terminal]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			g := &graph.Graph{Name: "l", Version: 1, Start: "n", Nodes: []*graph.Node{&tc.node}}
			if err := writeGraphText(&b, g); err != nil {
				t.Fatal(err)
			}
			if got := strings.Split(b.String(), "\n")[1]; got != tc.want {
				t.Errorf("node line = %q, want %q", got, tc.want)
			}
		})
	}
}
