package main

import (
	"github.com/the-loop/the-loop/graph"
)

// GraphStatusCmd is `the-loop graph status`.
type GraphStatusCmd struct {
	Item      string `arg:"" help:"Work item id."`
	Recompute bool   `help:"Ignore stored graph state; derive the position from the artifacts alone."`
	Format    string `help:"Output format (${enum}); text lists every node up to the pointer, the others are check's." enum:"${reportFormats}" default:"text"`
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
	view := reportView(e, graph.FailOnUnmet)
	view.Status = true
	if err := writeReports(out, c.Format, reports, view); err != nil {
		return err
	}
	if !reports[0].OK {
		return exitCode(1)
	}
	return nil
}

func (c *GraphStatusCmd) outputFormat() string { return c.Format }
