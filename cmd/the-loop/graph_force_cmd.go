package main

import "fmt"

// GraphForceCmd is `the-loop graph force`.
type GraphForceCmd struct {
	Item   string `arg:"" help:"Work item id."`
	To     string `help:"Target node id." required:"" placeholder:"NODE"`
	Reason string `help:"Why you are bypassing the gate (required)." required:""`
	Actor  string `help:"Who is forcing this." placeholder:"WHO"`
	LoopFlags
	RefFlag
}

func (c *GraphForceCmd) Run(g *Globals, out *Output) error {
	e, sel, err := g.engine(out, c.LoopFlags, c.Ref)
	if err != nil {
		return err
	}
	res, err := e.Force(c.Item, c.To, c.Reason, c.Actor, sel)
	if err != nil {
		return err
	}
	fmt.Fprintf(out.Stdout, "forced %s: %s -> %s\n  reason: %s\n", visible(c.Item), res.FromNode, res.ToNode, visible(res.Reason))
	for _, w := range res.Warnings {
		fmt.Fprintf(out.Stdout, "  WARNING: %s\n", visible(w))
	}
	fmt.Fprintln(out.Stdout, "  note: this moved the pointer only; the bypassed gate keeps its real verdict, so `the-loop check --recompute` still reports it.")
	return nil
}
