package main

import (
	"fmt"
	"io"
)

// GraphSkipCmd is `the-loop graph skip`.
type GraphSkipCmd struct {
	Item   string   `arg:"" predictor:"item" help:"Work item id."`
	Nodes  []string `arg:"" optional:"" help:"Skippable node ids or skip-set names."`
	Node   []string `help:"A skippable node id or skip-set name (repeatable; the same as a positional)." placeholder:"NODE"`
	Reason string   `help:"Why the work item does not walk these phases (required)." required:""`
	Actor  string   `help:"Who is declaring this." placeholder:"WHO"`
	TextFormat
	LoopFlags
	RefFlag
}

func (c *GraphSkipCmd) Help() string {
	return `A declaration, not a verdict: check reports each node as skipped by
declaration, the never-skippable gates still run, and only nodes ahead of the
pointer can be declared. Exit codes: 0 something declared, 1 nothing was.`
}

func (c *GraphSkipCmd) Run(g *Globals, out *Output) error {
	e, sel, err := g.movingEngine(out, c.LoopFlags, c.Ref)
	if err != nil {
		return err
	}
	res, err := e.Skip(c.Item, append(c.Nodes, c.Node...), c.Reason, c.Actor, sel)
	if err != nil {
		return err
	}
	err = c.write(out, res, func(w io.Writer) error {
		for _, n := range res.Declared {
			fmt.Fprintf(w, "declared: %s will be skipped\n", n)
		}
		for _, r := range res.Rejected {
			fmt.Fprintf(w, "rejected: %s (%s)\n", visible(r.Token), visible(r.Why))
		}
		for _, warning := range res.Warnings {
			fmt.Fprintf(w, "  WARNING: %s\n", visible(warning))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(res.Declared) == 0 {
		return exitCode(1)
	}
	return nil
}
