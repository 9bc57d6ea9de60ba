package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/the-loop/the-loop/policy"
)

// CheckCmd is `the-loop check`.
type CheckCmd struct {
	Item      string `arg:"" optional:"" help:"Work item id (its spec folder's name), e.g. issue-109."`
	All       bool   `help:"Evaluate every work item."`
	Recompute bool   `help:"Ignore stored graph state; derive the position from the artifacts alone."`
	Base      string `help:"A git revision: hooks see the paths changed since it as ctx.changed (runs a read-only git diff)." placeholder:"REV"`
	FailOn    string `help:"What makes the exit code 1: 'unmet' is any unsatisfied node up to the pointer, human waits included; 'block' only a node an agent can fix." enum:"unmet,block" default:"unmet"`
	Format    string `help:"Output format (${enum}): text for people (table is its old name), json, github (Actions annotations and step summary), sarif, junit." enum:"${reportFormats}" default:"text"`
	LoopFlags
}

func (c *CheckCmd) Help() string {
	return `check is pure: it reads the repository and writes nothing, calls out to
nothing and runs no subprocess (but one read-only git diff when --base is
given), so it is safe on a read-only checkout and as a CI gate. Human gates read "wait" because no reply is handed to them.

Exit codes: 0 all satisfied, 1 something unmet (see --fail-on), 2 could not run.`
}

func (c *CheckCmd) Run(g *Globals, out *Output) error {
	if c.All == (c.Item != "") {
		return errors.New("check: give a work item id, or --all")
	}
	e, sel, err := g.engine(out, c.LoopFlags, "")
	if err != nil {
		return err
	}
	if err := e.UseBase(c.Base); err != nil {
		return err
	}
	items := []string{c.Item}
	if c.All {
		items, err = e.Items()
		switch {
		case errors.Is(err, policy.ErrNoSpecDir):
			fmt.Fprintf(out.Stderr, "the-loop: warning: nothing to check: %s\n", visible(err.Error()))
		case err != nil:
			return err
		}
	}
	reports, err := e.Check(items, c.Recompute, sel)
	var failed policy.ItemsError
	switch {
	case errors.As(err, &failed) && c.All:
		// The others are reported; the ones that could not be are named,
		// and the run could not answer for them.
	case err != nil:
		return err
	}
	view := c.view(e, failed)
	if err := reportFormats[c.Format].write(out, reports, view); err != nil {
		return err
	}
	printNotes(out, view.Notes)
	for _, f := range failed {
		fmt.Fprintf(out.Stderr, "the-loop: %s\n", visible(f.Err.Error()))
	}
	if len(failed) > 0 {
		return exitCode(2)
	}
	for _, r := range reports {
		if r.Fails(c.FailOn) {
			return exitCode(1)
		}
	}
	return nil
}

func (c *CheckCmd) outputFormat() string { return c.Format }

// view is how the reports are written: the engine's notes are taken here,
// so that a format that can carry them (github, sarif) does.
func (c *CheckCmd) view(e *policy.Engine, failed policy.ItemsError) checkView {
	return checkView{
		All: c.All, FailOn: c.FailOn, Unevaluated: failed, Notes: e.Notes(),
		GitHub: githubEnvFrom(os.Getenv, e.Root), Version: version(),
	}
}
