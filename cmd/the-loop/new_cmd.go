package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/the-loop/the-loop/policy"
)

// NewCmd is `the-loop new`.
type NewCmd struct {
	Item   string `arg:"" help:"Work item id: the name of its folder in the spec directory, such as issue-42."`
	Bugfix bool   `help:"Draft bugfix.md in place of requirements.md: a bug's first spec artifact."`
	DryRun bool   `help:"Say what would be written, and write nothing."`
	TextFormat
}

func (c *NewCmd) Help() string {
	return `new creates the work item's folder in the spec directory (workflow.specDir,
default docs/specs) and drafts in it every artifact the work-item loop's gates
ask for: each with the sections they look for, a placeholder line under each,
and status: draft. Write each section, set status: approved once a document
is reviewed, and check says what is still unmet. An existing folder is never
written into. new writes no harness config: without one, the defaults apply.`
}

func (c *NewCmd) Run(g *Globals, out *Output) error {
	e, err := g.open(out)
	if err != nil {
		return err
	}
	rep, err := e.NewItem(c.Item, policy.NewItemOptions{Bugfix: c.Bugfix, DryRun: c.DryRun})
	if err != nil {
		return err
	}
	return c.write(out, rep, func(w io.Writer) error { return writeNew(w, rep) })
}

func writeNew(w io.Writer, rep *policy.NewItemReport) error {
	var b strings.Builder
	would := func(done, planned string) string {
		if rep.DryRun {
			return planned
		}
		return done
	}
	if rep.SpecDirCreated {
		fmt.Fprintf(&b, "%s the spec directory %s\n", would("created", "would create"), visible(rep.SpecDir))
	}
	fmt.Fprintf(&b, "%s %s, drafted for the %s loop (status: draft):\n", would("created", "would create"), visible(rep.Dir), rep.Loop)
	width := 0
	for _, d := range rep.Drafts {
		width = max(width, len(d.Name))
	}
	for _, d := range rep.Drafts {
		fmt.Fprintf(&b, "  %-*s  %s: %s\n", width, d.Name, d.Node, strings.Join(d.Sections, ", "))
	}
	for _, o := range rep.NotDrafted {
		fmt.Fprintf(&b, "not drafted: %s (%s is a phase an item walks only by choice)\n", o.Name, o.Node)
	}
	if !rep.DryRun {
		fmt.Fprintf(&b, "next: write each section in place of its placeholder line, set status: approved once a document is reviewed, and run `the-loop check %s`\n", visible(rep.Item))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
