package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/the-loop/the-loop/graph"
)

// GraphAdvanceCmd is `the-loop graph advance`.
type GraphAdvanceCmd struct {
	Item string `arg:"" predictor:"item" help:"Work item id."`
	TextFormat
	LoopFlags
	RefFlag
	EventFlags
}

func (c *GraphAdvanceCmd) Help() string {
	return `An item that has not begun is evaluated at the loop's start node, without
entering it (entering is the ingress's job). A human
gate classifies only the comments handed to it with --comment/--author or
--event-file, and only those by authorized users.

Exit codes: 0 passed or waiting, 1 blocked or escalated, 2 could not run.`
}

func (c *GraphAdvanceCmd) Run(g *Globals, out *Output) error {
	e, sel, ev, err := g.engineWithEvent(out, c.LoopFlags, c.Ref, c.EventFlags, true)
	if err != nil {
		return err
	}
	step, err := e.Advance(c.Item, sel, ev)
	if err != nil {
		return err
	}
	if err := c.write(out, step, func(w io.Writer) error { return writeStep(w, c.Item, step) }); err != nil {
		return err
	}
	return stepExit(step)
}

func writeStep(w io.Writer, item string, s *graph.Step) error {
	// Departure from the original (docs/compatibility.md#the-text-is-plain-ascii): "->" and "-" where it draws "→" and "·".
	line := fmt.Sprintf("%s: %s -> %s", visible(item), s.Node, s.Status)
	var notes []string
	if s.Outcome != "" && s.Outcome != s.Status {
		notes = append(notes, s.Outcome)
	}
	if s.To != "" {
		notes = append(notes, "now at "+s.To)
	}
	if len(notes) > 0 {
		line += " (" + strings.Join(notes, "; ") + ")"
	}
	if _, err := fmt.Fprintln(w, line); err != nil {
		return err
	}
	for _, m := range s.Messages {
		if _, err := fmt.Fprintf(w, "  - %s\n", visible(m)); err != nil {
			return err
		}
	}
	return nil
}

func stepExit(s *graph.Step) error {
	if s.Fails() {
		return exitCode(1)
	}
	return nil
}
