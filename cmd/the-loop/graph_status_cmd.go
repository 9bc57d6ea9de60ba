package main

import (
	"fmt"
	"strings"
)

// GraphStatusCmd is `the-loop graph status`.
type GraphStatusCmd struct {
	Item      string `arg:"" help:"Work item id."`
	Recompute bool   `help:"Ignore stored graph state; derive the position from the artifacts alone."`
	Format    string `help:"Output format (${enum})." enum:"${textFormats}" default:"text"`
	LoopFlags
}

func (c *GraphStatusCmd) Run(g *Globals, out *Output) error {
	e, sel, err := g.engine(out, c.LoopFlags, "")
	if err != nil {
		return err
	}
	reports, err := e.Check([]string{c.Item}, c.Recompute, sel)
	if err != nil {
		return err
	}
	r := reports[0]
	if c.Format == "json" {
		err = writeJSON(out.Stdout, r)
	} else {
		var b strings.Builder
		fmt.Fprintf(&b, "%s: at %s\n", r.WorkItem, r.CurrentNode)
		if r.Parked != nil {
			fmt.Fprintf(&b, "  parked since %v\n", r.Parked["since"])
		}
		reached, ahead := r.Reached()
		for _, n := range reached {
			writeNode(&b, n)
		}
		if pending := countUnsatisfied(ahead); pending > 0 {
			fmt.Fprintf(&b, "  ....   %d node(s) ahead not met yet\n", pending)
		}
		_, err = fmt.Fprint(out.Stdout, b.String())
	}
	if err != nil {
		return err
	}
	if !r.OK {
		return exitCode(1)
	}
	return nil
}
