package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"

	"github.com/the-loop/the-loop/channels/github"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/policy"
)

// CheckCmd is `the-loop check`.
type CheckCmd struct {
	Item      string   `arg:"" predictor:"item" optional:"" help:"Work item id (its spec folder's name), e.g. issue-109."`
	All       bool     `help:"Evaluate every work item."`
	Changed   bool     `help:"Evaluate the work items whose spec folder changed since --base (every item when the change touches .the-loop/ or a .star file)."`
	Recompute bool     `help:"Ignore stored graph state; derive the position from the artifacts alone."`
	Base      string   `help:"A git revision: hooks see the paths changed since it (committed since the merge base, staged, unstaged and untracked) as ctx.changed." placeholder:"REV"`
	RulesFrom string   `help:"A git revision to read the gate's own files from (the harness config and the .star rules), so that a change cannot rewrite the rules that judge it; artifacts and state still come from the checkout." placeholder:"REV"`
	FailOn    string   `help:"What makes the exit code 1: 'unmet' is any unsatisfied node up to the pointer, human waits included; 'block' only a node an agent can fix." enum:"unmet,block" default:"unmet"`
	Format    string   `help:"Output format (${enum}): text for people (table is its old name), json, github (Actions annotations and step summary), sarif, junit." enum:"${reportFormats}" default:"text"`
	Output    []string `help:"Also write FORMAT to FILE from the same evaluation (repeatable; FORMAT is sarif, junit, json or text), e.g. --output sarif=the-loop.sarif --output junit=the-loop.xml. FILE is relative to the working directory and replaced whole once the run ends." placeholder:"FORMAT=FILE"`
	Replies   string   `help:"Where human gates read replies from: none, or github (each item's issue comments, and a pull request's reviews and diff comments under --pr, read through integrations.github; needs a token or gh)." enum:"none,github" default:"none"`
	LoopFlags
}

func (c *CheckCmd) Help() string {
	return `check is pure: it writes nothing in the repository, calls out to nothing
(but GitHub, to read comments and who the token is, under --replies github)
and runs no subprocess
but read-only git (when --base or --rules-from names a revision) and gh (for
--replies github over the cli transport), so it is safe on a read-only
checkout and as a CI gate. (Under
GitHub Actions, --format github appends a summary to $GITHUB_STEP_SUMMARY.)
Human gates read "wait" because no reply is handed to them, unless
--replies github reads each item's issue comments (read-only, one listing
per item): a gate then reads the replies posted while the item's state had
it open, and only those by routing.authorizedUsers, as advance does. A
pull request's inner loop (--pr) reads its reviews and the comments on
its diff as well: an approving or changes-requesting review is the
reviewer's answer. A reply edited after its gate moved on is not read for
that gate. It never reads the-loop's own comments: those carrying its
marker, and those by the login its token authenticates (asked once with
GET /user and kept in <state.root>/github/identity.json) but for the
ledger's relays of chat answers. So an approved gate passes, and
--fail-on unmet works in CI:

  GH_TOKEN=... the-loop check --all --replies github --fail-on unmet

In CI, judge a pull request by its base branch:

  the-loop check --changed --base origin/main --rules-from origin/main --format github --fail-on block

Exit codes: 0 all satisfied, 1 something unmet (see --fail-on), 2 could not run.`
}

// validate refuses flags that do not go together.
func (c *CheckCmd) validate() error {
	switch {
	case (c.All || c.Changed) == (c.Item != ""), c.All && c.Changed:
		return errors.New("check: give a work item id, --all, or --changed")
	case c.Changed && c.Base == "":
		return errors.New("check: --changed needs --base, the revision the change is compared with (e.g. --base origin/main)")
	case c.Replies == policy.IntegrationGitHub && c.Recompute:
		return errors.New("check: --replies reads each gate's replies from when the stored state says it was open, and --recompute ignores the state; give one")
	}
	return nil
}

func (c *CheckCmd) Run(g *Globals, out *Output) error {
	if err := c.validate(); err != nil {
		return err
	}
	outputs, err := parseOutputs(c.Output, out)
	if err != nil {
		return err
	}
	err = c.run(g, out, outputs)
	var code exitCode
	if err != nil && !errors.As(err, &code) {
		// The run could not answer: each file says so, in its format.
		view := checkView{GitHub: githubEnvFrom(os.Getenv, ""), Version: version()}
		for _, o := range outputs {
			if ferr := o.fail(err, view); ferr != nil {
				fmt.Fprintf(out.Stderr, "the-loop: %s\n", visible(ferr.Error()))
			}
		}
	}
	return err
}

func (c *CheckCmd) run(g *Globals, out *Output, outputs []*extraOutput) error {
	opts := policy.Options{RulesFrom: c.RulesFrom, Base: c.Base}
	if c.Replies == policy.IntegrationGitHub {
		if err := g.withReplies(&opts); err != nil {
			return err
		}
	}
	e, sel, err := g.engineWith(out, c.LoopFlags, "", opts)
	if err != nil {
		return err
	}
	// A base git cannot use is the answer, before anything is listed.
	if _, err := e.Changes(); err != nil {
		return err
	}
	items, err := c.items(e, out)
	if err != nil {
		return err
	}
	view := checkView{FailOn: c.FailOn, All: c.All || c.Changed, Verbose: g.Verbose,
		GitHub: githubEnvFrom(os.Getenv, e.Root), Version: version()}
	// Each report is written as it comes and let go: stdout is buffered
	// here, and flushed before anything else is said.
	buffered := bufio.NewWriterSize(out.raw, 64<<10)
	bout := &Output{Stdout: visibleWriter{buffered}, Stderr: out.Stderr, raw: buffered}
	w := teeWriter{reportFormats[c.Format].start(bout, view)}
	for _, o := range outputs {
		w = append(w, reportFormats[o.format].start(o.out, view))
	}
	failing := false
	err = e.CheckEach(items, c.Recompute, sel, func(r *graph.StatusReport) error {
		failing = failing || r.Fails(c.FailOn)
		return w.report(r)
	})
	var failed policy.ItemsError
	switch {
	case errors.As(err, &failed) && (c.All || c.Changed):
		// The others are reported; the ones that could not be are named,
		// and the run could not answer for them.
	case err != nil:
		if ferr := buffered.Flush(); ferr != nil {
			return ferr
		}
		return err
	}
	view.Unevaluated, view.Notes = failed, e.Notes()
	if err := w.finish(view); err != nil {
		return err
	}
	if err := buffered.Flush(); err != nil {
		return err
	}
	for i, o := range outputs {
		if err := o.commit(); err != nil {
			for _, rest := range outputs[i+1:] {
				rest.discard()
			}
			return err
		}
	}
	if c.Format != "github" {
		printNotes(out, view.Notes)
	}
	for _, f := range failed {
		fmt.Fprintf(out.Stderr, "the-loop: %s\n", visible(f.Err.Error()))
	}
	if len(failed) > 0 {
		return exitCode(2)
	}
	if failing {
		return exitCode(1)
	}
	return nil
}

// withReplies has check read replies through the GitHub integration the
// operator's CLI config describes (its defaults when it declares none),
// which must be able to make calls.
func (g *Globals) withReplies(opts *policy.Options) error {
	cli, err := policy.LoadCLIConfig(g.Config)
	if err != nil {
		return err
	}
	in, err := github.FromConfig(cli, os.Getenv)
	if err != nil {
		return err
	}
	if err := in.Available(); err != nil {
		return fmt.Errorf("check --replies github: %w", err)
	}
	opts.CLI, opts.Replies = cli, in
	return nil
}

// items are the work items asked about.
func (c *CheckCmd) items(e *policy.Engine, out *Output) ([]string, error) {
	var items []string
	var err error
	switch {
	case c.Changed:
		var s policy.Selection
		s, err = e.ChangedItems()
		items = s.Items
	case c.All:
		items, err = e.Items()
	default:
		return []string{c.Item}, nil
	}
	if errors.Is(err, policy.ErrNoSpecDir) {
		fmt.Fprintf(out.Stderr, "the-loop: warning: nothing to check: %s\n", visible(err.Error()))
		err = nil
	}
	return items, err
}

func (c *CheckCmd) outputFormat() string { return c.Format }
