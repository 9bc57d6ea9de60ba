package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/the-loop/the-loop/graph"
)

// GraphRunCmd is `the-loop graph run`.
type GraphRunCmd struct {
	Item     string `arg:"" predictor:"item" help:"Work item id."`
	MaxNodes int    `help:"Safety bound on advances (at least 1)." default:"20"`
	DryRun   bool   `help:"Report where a run would stop without writing, calling out or running anything."`
	TextFormat
	LoopFlags
	RefFlag
	EventFlags
}

func (c *GraphRunCmd) Run(g *Globals, out *Output) error {
	if c.MaxNodes < 1 {
		return fmt.Errorf("--max-nodes: got %d, want at least 1", c.MaxNodes)
	}
	e, sel, ev, err := g.engineWithEvent(out, c.LoopFlags, c.Ref, c.EventFlags, !c.DryRun)
	if err != nil {
		return err
	}
	rep, err := e.Run(c.Item, c.MaxNodes, c.DryRun, sel, ev)
	if err != nil {
		return err
	}
	if err := c.write(out, rep, func(w io.Writer) error { return writeRun(w, c.Item, rep) }); err != nil {
		return err
	}
	// Departure from the original (docs/compatibility.md#graph-run---dry-run-exits-as-graph-run-would): a dry run exits as the run would, not 1 whenever check is unmet.
	if rep.Fails() {
		return exitCode(1)
	}
	return nil
}

func writeRun(w io.Writer, item string, rep *graph.RunReport) error {
	var b strings.Builder
	for _, s := range rep.Steps {
		to := ""
		if s.To != "" {
			to = " -> " + s.To
		}
		fmt.Fprintf(&b, "  %s: %s%s\n", s.Node, s.Status, to)
		for _, m := range s.Messages {
			fmt.Fprintf(&b, "      - %s\n", visible(m))
		}
	}
	suffix := ""
	if rep.DryRun {
		suffix = " (dry run: nothing written)"
	}
	fmt.Fprintf(&b, "%s: stopped at %s (%s)%s\n", visible(item), rep.At, rep.Stopped, suffix)
	_, err := io.WriteString(w, b.String())
	return err
}
