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
	// Departure from the original (docs/compatibility.md#a-broken-declaration-is-listed-with-every-fault): the listing goes out with every fault in it, then the exit says it is broken.
	if len(rep.Errors) > 0 {
		return exitCode(2)
	}
	return nil
}

// writeHooks lays the listing out as the original does: the shipped hooks
// on one line, then the declaration, an entry a line, then what loads it.
func writeHooks(w io.Writer, rep policy.HooksReport) error {
	var b strings.Builder
	fmt.Fprintf(&b, "shipped hooks (%d): %s\n", len(rep.Shipped), strings.Join(rep.Shipped, ", "))
	if rep.Empty() {
		fmt.Fprintln(&b, "this repository declares no graph hooks (`graph.hooks` in .the-loop/harness-config.yaml)")
	} else {
		// Departure from the original (docs/compatibility.md#the-text-says-more-where-a-reader-needs-it): the file, entry attachments that do not gate, hooks check and the kill switch are said too.
		in := ""
		if rep.File != "" {
			in = " in " + visible(rep.File)
		}
		fmt.Fprintf(&b, "\nthis repository declares %d module(s) and %d attachment(s)%s — nothing here has been executed:\n", len(rep.Modules), len(rep.Attach), in)
		for _, m := range rep.Modules {
			fmt.Fprintf(&b, "  module  %s\n", visible(m.Label()))
		}
		for _, a := range rep.Attach {
			boundary := visible(a.Boundary)
			if a.Boundary == string(graph.Entry) {
				boundary += "; does not gate: it runs once the item has entered, and a block there is only a warning"
			}
			fmt.Fprintf(&b, "  attach  %s → %s (%s)%s\n", visible(a.Hook), visible(a.Node), boundary, visible(listedParams(a.With)))
		}
		if rep.RepoHooks {
			fmt.Fprintln(&b, "\n`the-loop check <work item>` and the graph verbs are what load them; a declaration that cannot load fails there, naming the file and line, rather than being skipped. `the-loop hooks check` loads them now, to check them.")
		} else {
			fmt.Fprintln(&b, "\nthis machine refuses repository hooks (routing.graph.repoHooks is false): none of them will run.")
		}
	}
	writeDiagnostics(&b, "warnings", rep.Warnings)
	writeDiagnostics(&b, "errors", rep.Errors)
	_, err := io.WriteString(w, b.String())
	return err
}

// withParams is an attachment's parameters as hooks check and hooks run
// show them.
func withParams(params map[string]any) string {
	if len(params) == 0 {
		return ""
	}
	return " with " + formatParams(params)
}

// listedParams is an attachment's parameters as graph hooks lists them,
// set off as the original sets them off.
func listedParams(params map[string]any) string {
	if len(params) == 0 {
		return ""
	}
	return "  with: " + formatParams(params)
}
