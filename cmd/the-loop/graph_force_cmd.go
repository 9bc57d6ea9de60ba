package main

import (
	"fmt"
	"io"
)

// GraphForceCmd is `the-loop graph force`.
type GraphForceCmd struct {
	Item   string `arg:"" predictor:"item" help:"Work item id."`
	To     string `help:"Target node id." required:"" placeholder:"NODE"`
	Reason string `help:"Why you are bypassing the gate (required)." required:""`
	Actor  string `help:"Who is forcing this." placeholder:"WHO"`
	TextFormat
	LoopFlags
	RefFlag
}

func (c *GraphForceCmd) Run(g *Globals, out *Output) error {
	e, sel, err := g.movingEngine(out, c.LoopFlags, c.Ref)
	if err != nil {
		return err
	}
	res, err := e.Force(c.Item, c.To, c.Reason, c.Actor, sel)
	if err != nil {
		return err
	}
	return c.write(out, res, func(w io.Writer) error {
		fmt.Fprintf(w, "forced %s: %s -> %s\n  reason: %s\n", visible(c.Item), res.FromNode, res.ToNode, visible(res.Reason))
		for _, warning := range res.Warnings {
			fmt.Fprintf(w, "  WARNING: %s\n", visible(warning))
		}
		_, err := fmt.Fprintln(w, "  note: this moved the pointer only; the bypassed gate keeps its real verdict, so `the-loop check --recompute` still reports it.")
		return err
	})
}
