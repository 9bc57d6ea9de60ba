package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/policy"
)

// GraphHooksCmd is `the-loop graph hooks`.
type GraphHooksCmd struct {
	TextFormat
}

func (c *GraphHooksCmd) Run(g *Globals, out *Output) error {
	// Listing runs nothing and judges nothing: outside a repository it is
	// the shipped hooks.
	e, err := g.openWith(out, policy.Options{OrWorkDir: true})
	if err != nil {
		return err
	}
	rep, err := e.Hooks()
	if err != nil {
		return err
	}
	if err := c.write(out, rep, func(w io.Writer) error { return writeHooks(w, rep) }); err != nil {
		return err
	}
	if len(rep.Errors) > 0 {
		return exitCode(2)
	}
	return nil
}

func writeHooks(w io.Writer, rep policy.HooksReport) error {
	var b strings.Builder
	fmt.Fprintf(&b, "shipped hooks (%d):\n", len(rep.Shipped))
	for _, h := range rep.Shipped {
		fmt.Fprintf(&b, "  %s\n", h)
	}
	d := rep.Declared
	if d.Empty() {
		fmt.Fprintln(&b, "\nthis repository declares no hooks of its own")
	} else {
		fmt.Fprintf(&b, "\nthis repository declares %d module(s) and %d attachment(s) in %s (nothing has been executed):\n", len(d.Modules), len(d.Attach), d.File)
		for _, m := range d.Modules {
			kind := "path  "
			if m.Module != "" {
				kind = "module"
			}
			fmt.Fprintf(&b, "  %s %s\n", kind, visible(m.Label()))
		}
		for _, a := range d.Attach {
			gates := "gates: the item leaves the node only if it passes"
			if a.Boundary == string(graph.Entry) {
				gates = "does not gate: it runs once the item has entered, and a block there is only a warning"
			}
			fmt.Fprintf(&b, "  attach %s -> %s (%s; %s)%s\n", visible(a.Hook), visible(a.Node), visible(a.Boundary), gates, visible(withParams(a.With)))
		}
		if rep.RepoHooks {
			fmt.Fprintln(&b, "\n`the-loop check` and the graph verbs load them; a module that cannot load fails there, naming the file and line. `the-loop hooks check` loads them now, to check them.")
		} else {
			fmt.Fprintln(&b, "\nthis machine refuses repository hooks (routing.graph.repoHooks is false): none of them will run.")
		}
	}
	writeDiagnostics(&b, "warnings", rep.Warnings)
	writeDiagnostics(&b, "errors", rep.Errors)
	_, err := io.WriteString(w, b.String())
	return err
}

// withParams is an attachment's parameters as the listing shows them.
func withParams(params map[string]any) string {
	if len(params) == 0 {
		return ""
	}
	return " with " + formatParams(params)
}
