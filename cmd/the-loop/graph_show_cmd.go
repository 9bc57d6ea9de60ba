package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/policy"
)

// GraphShowCmd is `the-loop graph show`.
type GraphShowCmd struct {
	Loop string `help:"Shipped loop to show (default: the work-item loop; with --pr the PR loop)." placeholder:"NAME" predictor:"loop"`
	GraphFormat
	LoopFlags
}

func (c *GraphShowCmd) Run(g *Globals, out *Output) error {
	// Describing a loop judges nothing: outside a repository it is the
	// shipped loop.
	e, sel, err := g.engineWith(out, c.LoopFlags, "", policy.Options{OrWorkDir: true})
	if err != nil {
		return err
	}
	gr, err := e.Graph(cmp.Or(c.Loop, sel.Loop()))
	if err != nil {
		return err
	}
	switch c.Format {
	case "json":
		return writeJSON(out, policy.DescribeGraph(gr))
	case mermaidFormat:
		_, err := io.WriteString(out.Stdout, graph.Mermaid(gr, nil))
		return err
	}
	return writeGraphText(out.Stdout, gr)
}

func writeGraphText(w io.Writer, gr *graph.Graph) error {
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
				names[i] = e.Hook + formatParams(e.Params)
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

// formatParams renders a chain entry's with: compactly, keys sorted, so two
// entries of one hook read apart: record-feedback{into: design.md}.
func formatParams(params map[string]any) string {
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
