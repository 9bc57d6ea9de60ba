package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/the-loop/the-loop/policy"
)

// HooksCheckCmd is `the-loop hooks check`.
type HooksCheckCmd struct {
	TextFormat
}

func (c *HooksCheckCmd) Help() string {
	return `hooks check checks what the repository declares under graph.hooks in
its harness config, as config validate does (every module's file, every
attachment's node and boundary), and then executes it the way check and the
graph verbs would, in the same sandbox: it loads every module (running its
top level), checks that each attachment names a hook a module registered,
applies each attachment to every shipped loop that has its node, and warns
of a hook registered but never attached. It reads each hook function,
without calling it, for a name ctx, ctx.repo, re, json or math does not
have (ctx.chnaged), and says the nearest. It writes nothing and calls no
hook function.

Every error names its file and line. A machine whose CLI config sets
routing.graph.repoHooks: false refuses to execute repository hooks, so this
verb refuses too; config validate checks without executing anything.

Exit codes: 0 no error (warnings allowed), 2 an error, or could not run.`
}

func (c *HooksCheckCmd) Run(g *Globals, out *Output) error {
	e, err := g.open(out)
	if err != nil {
		return err
	}
	rep, err := e.CheckHooks()
	if err != nil {
		return err
	}
	if err := c.write(out, rep, func(w io.Writer) error { return writeHooksCheck(w, rep) }); err != nil {
		return err
	}
	if len(rep.Errors) > 0 {
		return exitCode(2)
	}
	return nil
}

func writeHooksCheck(w io.Writer, rep policy.DeclarationReport) error {
	var b strings.Builder
	if len(rep.Modules) == 0 && len(rep.Attach) == 0 && len(rep.Errors) == 0 {
		fmt.Fprintln(&b, "this repository declares no hooks of its own; nothing to check")
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "%s declares %d module(s) and %d attachment(s)\n", visible(rep.File), len(rep.Modules), len(rep.Attach))
	if len(rep.Modules) > 0 {
		fmt.Fprintf(&b, "\nmodules (loaded in the sandbox):\n")
		for _, m := range rep.Modules {
			fmt.Fprintf(&b, "  %-9s %s", m.Verdict, visible(m.Label()))
			if m.Module != "" && m.Found != "" {
				fmt.Fprintf(&b, " (%s)", visible(m.Found))
			}
			if len(m.Hooks) > 0 {
				fmt.Fprintf(&b, ": registers %s", visible(strings.Join(m.Hooks, ", ")))
			}
			b.WriteString("\n")
		}
	}
	if len(rep.Attach) > 0 {
		fmt.Fprintf(&b, "\nattachments:\n")
		for _, a := range rep.Attach {
			fmt.Fprintf(&b, "  %-9s %s -> %s (%s)%s", a.Verdict, visible(a.Hook), visible(a.Node), visible(a.Boundary), visible(withParams(a.With)))
			if len(a.Loops) > 0 {
				fmt.Fprintf(&b, ", in %s", strings.Join(a.Loops, ", "))
			}
			if a.Verdict == policy.VerdictUnchecked {
				fmt.Fprintf(&b, "; not checked: a module that did not load may be the one registering %s", visible(a.Hook))
			}
			b.WriteString("\n")
		}
	}
	writeDiagnostics(&b, "warnings", rep.Warnings)
	writeDiagnostics(&b, "errors", rep.Errors)
	fmt.Fprintf(&b, "\n%d error(s), %d warning(s)\n", len(rep.Errors), len(rep.Warnings))
	_, err := io.WriteString(w, b.String())
	return err
}

// writeDiagnostics lists ds under a heading, nothing when there are none.
func writeDiagnostics(b *strings.Builder, heading string, ds []policy.Diagnostic) {
	if len(ds) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s:\n", heading)
	for _, d := range ds {
		fmt.Fprintf(b, "  %s\n", visible(d.Text))
	}
}
