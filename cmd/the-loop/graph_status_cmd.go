package main

import (
	"io"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/policy"
)

// GraphStatusCmd is `the-loop graph status`.
type GraphStatusCmd struct {
	Item      string `arg:"" predictor:"item" help:"Work item id."`
	Recompute bool   `help:"Ignore stored graph state; derive the position from the artifacts alone."`
	Format    string `help:"Output format (${enum}); text lists every node up to the pointer, mermaid draws the loop coloured by the verdicts, the others are check's." enum:"${statusFormats}" default:"text"`
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
	if c.Format == mermaidFormat {
		err = writeMermaidStatus(out, e, reports[0], view)
	} else {
		err = writeReports(out, c.Format, reports, view)
	}
	if err != nil {
		return err
	}
	if !reports[0].OK {
		return exitCode(1)
	}
	return nil
}

// writeMermaidStatus draws the loop rep was judged against, coloured by
// its verdicts, then says the notes on stderr.
func writeMermaidStatus(out *Output, e *policy.Engine, rep *graph.StatusReport, view checkView) error {
	gr, err := e.Graph(rep.Loop)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(out.Stdout, graph.Mermaid(gr, rep)); err != nil {
		return err
	}
	printNotes(out, view.Notes)
	return nil
}

func (c *GraphStatusCmd) outputFormat() string { return c.Format }
