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
	// Departure from the original (docs/compatibility.md#graph-run---max-nodes-below-1-is-exit-2): no silent bound of one.
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
	if err := c.write(out, rep, func(w io.Writer) error { return writeRun(w, c.Item, c.MaxNodes, rep) }); err != nil {
		return err
	}
	// Departure from the original (docs/compatibility.md#graph-run---dry-run-exits-as-graph-run-would): a dry run exits as the run would, not 1 whenever check is unmet.
	if rep.Fails() {
		return exitCode(1)
	}
	return nil
}

// writeRun writes the run's steps, then the original's last line: what a
// script reads to learn how the run ended.
func writeRun(w io.Writer, item string, maxNodes int, rep *graph.RunReport) error {
	var b strings.Builder
	for _, s := range rep.Steps {
		// Departure from the original (docs/compatibility.md#the-rest-of-the-text-of-graph-show-and-graph-run-is-ours): a step names the node it moved to and bullets its messages with "-".
		to := ""
		if s.To != "" {
			to = " -> " + s.To
		}
		fmt.Fprintf(&b, "  %s: %s%s\n", s.Node, s.Status, to)
		for _, m := range s.Messages {
			fmt.Fprintf(&b, "      - %s\n", visible(m))
		}
	}
	b.WriteString(runEnding(visible(item), maxNodes, rep))
	if rep.DryRun {
		// Departure from the original (docs/compatibility.md#the-rest-of-the-text-of-graph-show-and-graph-run-is-ours): a dry run walks the run and ends as it would, not with graph status's table.
		b.WriteString(" (dry run: nothing written)")
	}
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

// runEnding is the original's last line of a run, for each way a run ends.
func runEnding(item string, maxNodes int, rep *graph.RunReport) string {
	switch rep.Stopped {
	case graph.StoppedTerminal:
		return item + ": complete"
	case graph.StoppedLooping:
		// The node evaluated once too often is the last step's; rep.At is
		// where that step's edge led.
		node := rep.At
		if n := len(rep.Steps); n > 0 {
			node = rep.Steps[n-1].Node
		}
		return fmt.Sprintf("%s: looping on %s; stopping", item, node)
	case graph.StoppedMaxNodes:
		return fmt.Sprintf("%s: hit --max-nodes (%d); stopping", item, maxNodes)
	}
	return fmt.Sprintf("%s: stopped at %s (%s)", item, rep.At, rep.Stopped)
}
