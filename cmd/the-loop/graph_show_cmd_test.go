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
		if n.Optional {
			flags = append(flags, "optional")
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
