package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/policy"
)

// HooksRunCmd is `the-loop hooks run`.
type HooksRunCmd struct {
	Hook     string `arg:"" help:"The hook to run, e.g. x-licence-header."`
	Item     string `arg:"" predictor:"item" help:"Work item id (its spec folder's name)."`
	Node     string `help:"Run it at this node (default: where it is attached; else the item's current node)." placeholder:"NODE"`
	Boundary string `help:"Run it in this node's entry or exit chain (default: the attachment's, else exit)." enum:"entry,exit," default:""`
	With     string `help:"Parameters as a JSON object, instead of the attachment's with:." placeholder:"JSON"`
	Base     string `help:"A git revision: the hook sees the paths changed since it as ctx.changed." placeholder:"REV"`
	TextFormat
	LoopFlags
}

func (c *HooksRunCmd) Help() string {
	return `hooks run calls one hook the way check does (a frozen ctx, the same limits,
read-only), but wherever you ask and whatever the hooks before it decided:
they run first, so ctx.results is what check would give it. It prints the
result, every finding with its file and line, what the hook printed, the
Starlark steps it took, and whether check would run it at that place, and
if not, why not.

Exit codes: 0 the hook passed or skipped, 1 it blocked or waits, 2 it could
not run (an error in the hook, with its backtrace, or a bad argument).`
}

func (c *HooksRunCmd) Run(g *Globals, out *Output) error {
	if graph.IsExtension(c.Item) && !graph.IsExtension(c.Hook) {
		return fmt.Errorf("hooks run takes the hook first, then the work item: the-loop hooks run %s %s", c.Item, c.Hook)
	}
	t := graph.Trial{Hook: c.Hook, Node: c.Node, Boundary: graph.Boundary(c.Boundary)}
	if c.With != "" {
		params, err := policy.ParseParams(c.With)
		if err != nil {
			return fmt.Errorf("--with: %w", err)
		}
		t.Params = params
	}
	e, sel, err := g.engineWith(out, c.LoopFlags, "", policy.Options{Base: c.Base})
	if err != nil {
		return err
	}
	rep, err := e.Trial(c.Item, t, sel)
	if err != nil {
		return err
	}
	if err := c.write(out, rep, func(w io.Writer) error { return writeTrial(w, rep) }); err != nil {
		return err
	}
	switch {
	case !rep.Ran():
		return exitCode(2)
	case rep.Result.Status == graph.StatusBlock, rep.Result.Status == graph.StatusWait:
		return exitCode(1)
	}
	return nil
}

func writeTrial(w io.Writer, rep *graph.TrialReport) error {
	// Everything but the layout comes from the checkout: each value is made
	// visible, so that no newline in it can forge a line of this report.
	var b strings.Builder
	placed := "as if attached at the end of the chain"
	if rep.Attached {
		placed = "where it is attached"
	}
	fmt.Fprintf(&b, "%s at %s %s, %s (%s, item at %s)%s\n", visible(rep.Result.Hook), visible(rep.Node), rep.Boundary, placed, rep.Loop, visible(rep.CurrentNode), visible(withParams(rep.Params)))
	if len(rep.Before) > 0 {
		ran := make([]string, len(rep.Before))
		for i, r := range rep.Before {
			ran[i] = r.Hook + " " + string(r.Status)
			if (r.Status == graph.StatusBlock || r.Status == graph.StatusWait) && len(r.Messages) > 0 {
				ran[i] += " (" + graph.Cut(r.Messages[0].Render(), 200) + ")"
			}
		}
		fmt.Fprintf(&b, "before it: %s\n", visible(strings.Join(ran, ", ")))
	}
	fmt.Fprintf(&b, "result: %s", rep.Result.Status)
	if rep.Result.Status == graph.StatusBlock && !rep.Result.Retriable {
		b.WriteString(" (not retriable)")
	}
	b.WriteString("\n")
	if rep.Ran() {
		for _, f := range rep.Findings {
			text := f.Text
			if where := f.Where(); where != "" {
				text += " (" + where + ")"
			}
			fmt.Fprintf(&b, "  %s: %s\n", f.Severity, visible(text))
		}
	} else {
		// Its one finding is the error, said once, with where it happened.
		fmt.Fprintf(&b, "error: %s\n", visible(rep.Trace.Err))
		for _, line := range lines(rep.Trace.Backtrace) {
			fmt.Fprintf(&b, "%s\n", visible(line))
		}
	}
	if len(rep.Trace.Prints) > 0 {
		b.WriteString("print:\n")
		for _, p := range rep.Trace.Prints {
			fmt.Fprintf(&b, "  %s\n", visible(p))
		}
	}
	fmt.Fprintf(&b, "steps: %d\n", rep.Trace.Steps)
	if rep.UnderCheck != "" {
		fmt.Fprintf(&b, "under check: not run or not shown here: %s\n", visible(rep.UnderCheck))
	} else {
		b.WriteString("under check: runs here, and its findings are reported\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// lines splits a multi-line text the report lays out line by line.
func lines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
