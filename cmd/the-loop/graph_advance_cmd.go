package main

import (
	"fmt"
	"strings"

	"github.com/the-loop/the-loop/graph"
)

// GraphAdvanceCmd is `the-loop graph advance`.
type GraphAdvanceCmd struct {
	Item   string `arg:"" help:"Work item id."`
	Format string `help:"Output format (${enum})." enum:"${textFormats}" default:"text"`
	LoopFlags
	RefFlag
	EventFlags
}

func (c *GraphAdvanceCmd) Help() string {
	return `Enters the loop's start node first when the item has not begun. A human
gate classifies only the comments handed to it with --comment/--author or
--event-file, and only those by authorized users.

Exit codes: 0 passed or waiting, 1 blocked or escalated, 2 could not run.`
}

func (c *GraphAdvanceCmd) Run(g *Globals, out *Output) error {
	e, sel, ev, err := g.engineWithEvent(out, c.LoopFlags, c.Ref, c.EventFlags)
	if err != nil {
		return err
	}
	step, err := e.Advance(c.Item, sel, ev)
	if err != nil {
		return err
	}
	if c.Format == "json" {
		err = writeJSON(out.Stdout, step)
	} else {
		err = writeStep(out, c.Item, step)
	}
	if err != nil {
		return err
	}
	return stepExit(step)
}

func writeStep(out *Output, item string, s *graph.Step) error {
	line := fmt.Sprintf("%s: %s -> %s", item, s.Node, s.Status)
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
	if _, err := fmt.Fprintln(out.Stdout, line); err != nil {
		return err
	}
	for _, m := range s.Messages {
		if _, err := fmt.Fprintf(out.Stdout, "  - %s\n", m); err != nil {
			return err
		}
	}
	return nil
}

func stepExit(s *graph.Step) error {
	if s.Status == string(graph.StatusPass) || s.Status == string(graph.StatusWait) {
		return nil
	}
	return exitCode(1)
}
