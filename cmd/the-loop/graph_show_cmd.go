package main

import (
	"cmp"
	"io"
	"strconv"

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

// writeGraphText writes the loop as text, in one write: the whole of it is
// built in one buffer, by appending, since fmt and a builder grown a piece
// at a time were most of what printing it cost a process that does little
// else.
func writeGraphText(w io.Writer, gr *graph.Graph) error {
	b := make([]byte, 0, 8<<10) // the largest shipped loop is under 6 KB
	// Departure from the original (docs/compatibility.md#the-rest-of-the-text-of-graph-show-and-graph-run-is-ours): the header names the loop, and skip sets and chains are listed.
	b = append(b, gr.Name...)
	b = append(b, " v"...)
	b = strconv.AppendInt(b, int64(gr.Version), 10)
	b = append(b, ", start: "...)
	b = append(b, gr.Start...)
	b = append(b, '\n')
	for _, s := range gr.SkipSets {
		b = append(b, "  skip set "...)
		b = append(b, s.Name...)
		b = append(b, ": "...)
		b = appendJoined(b, s.Nodes)
		b = append(b, '\n')
	}
	var flags []string
	for _, n := range gr.Nodes {
		flags = flags[:0]
		if n.Required {
			flags = append(flags, "required")
		}
		// The flags are the original's: required, opt-in or else skippable,
		// human, terminal. A node's optional: (it may skip itself) is not
		// one: the original prints it nowhere, and scripts match these words.
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
		b = append(b, "  "...)
		b = append(b, n.ID...)
		if len(flags) > 0 {
			b = append(b, "  ["...)
			b = appendJoined(b, flags)
			b = append(b, ']')
		}
		b = append(b, '\n')
		b = appendChain(b, "entry:", n.Entry)
		b = appendChain(b, "exit:", n.Exit)
		for _, e := range gr.Edges { // gr.EdgesFrom(n.ID), without the slice
			if e.From != n.ID {
				continue
			}
			b = append(b, "      --"...)
			b = append(b, e.On...)
			b = append(b, "--> "...)
			b = append(b, e.To...)
			b = append(b, '\n')
		}
	}
	_, err := w.Write(b)
	return err
}

// appendChain appends a chain's line, "      exit: a, b{k: v}", its
// label padded to five; a chain with no entries has none.
func appendChain(b []byte, label string, chain []graph.ChainEntry) []byte {
	if len(chain) == 0 {
		return b
	}
	b = append(b, "      "...)
	b = append(b, label...)
	for n := len(label); n < 5; n++ {
		b = append(b, ' ')
	}
	b = append(b, ' ')
	// The entries are made visible as one line, as a whole: a parameter
	// value may hold a newline of its own.
	start := len(b)
	for i, e := range chain {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, e.Hook...)
		b = appendParams(b, e.Params)
	}
	if !cleanBytes(b[start:], false) {
		b = append(b[:start], visible(string(b[start:]))...)
	}
	return append(b, '\n')
}

// appendJoined appends strings.Join(s, ", ").
func appendJoined(b []byte, s []string) []byte {
	for i, v := range s {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, v...)
	}
	return b
}
