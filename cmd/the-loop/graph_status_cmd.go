package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/the-loop/the-loop/graph"
)

// GraphStatusCmd is `the-loop graph status`.
type GraphStatusCmd struct {
	Item      string `arg:"" help:"Work item id."`
	Recompute bool   `help:"Ignore stored graph state; derive the position from the artifacts alone."`
	TextFormat
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
	if err := c.write(out, r, func(w io.Writer) error { return writeStatus(w, r) }); err != nil {
		return err
	}
	if !r.OK {
		return exitCode(1)
	}
	return nil
}

// writeStatus lists every node up to the pointer, met or not, where check's
// table lists only the unmet ones.
func writeStatus(w io.Writer, r *graph.StatusReport) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: at %s\n", visible(r.WorkItem), visible(r.CurrentNode))
	if r.Parked != nil {
		fmt.Fprintf(&b, "  parked since %s\n", visible(fmt.Sprint(r.Parked["since"])))
	}
	reached, ahead := r.Reached()
	for _, n := range reached {
		writeNode(&b, n)
	}
	writeAhead(&b, ahead)
	_, err := io.WriteString(w, b.String())
	return err
}
