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
	Item            string   `arg:"" predictor:"item" optional:"" help:"Work item id (its spec folder's name), e.g. issue-109."`
	All             bool     `help:"Evaluate every work item."`
	Changed         bool     `help:"Evaluate the work items whose spec folder changed since --base (every item when the change touches .the-loop/ or a .star file)."`
	Recompute       bool     `help:"Ignore stored graph state; derive the position from the artifacts alone."`
	Base            string   `help:"A git revision: hooks see the paths changed since it (committed since the merge base, staged, unstaged and untracked) as ctx.changed." placeholder:"REV"`
	RulesFrom       string   `help:"A git revision to read the gate's own files from (the harness config and the .star rules), so that a change cannot rewrite the rules that judge it; artifacts and state still come from the checkout." placeholder:"REV"`
	FailOn          string   `help:"What makes the exit code 1: 'unmet' is any unsatisfied node up to the pointer, human waits included; 'block' only a node an agent can fix." enum:"unmet,block" default:"unmet"`
	Format          string   `help:"Output format (${enum}): text for people (table is its old name), json, github (Actions annotations and step summary), sarif, junit." enum:"${reportFormats}" default:"text"`
	CheckRun        bool     `name:"check-run" help:"Under GitHub Actions with --format github, also report as a check run named the-loop on the commit, through the REST API with the job's token (GITHUB_TOKEN): every annotation, in batches of 50, the summary and a conclusion. Without checks: write it says so once and annotates with workflow commands."`
	Output          []string `help:"Also write FORMAT to FILE from the same evaluation (repeatable; FORMAT is sarif, junit, json or text), e.g. --output sarif=the-loop.sarif --output junit=the-loop.xml. FILE is relative to the working directory and replaced whole once the run ends." placeholder:"FORMAT=FILE"`
	Replies         string   `help:"Where human gates read replies from: none, or github (each item's issue comments, and a pull request's reviews and diff comments under --pr, read through integrations.github; needs a token or gh)." enum:"none,github" default:"none"`
	Event           string   `help:"The GitHub event file of the pull request --changed judges (default: $GITHUB_EVENT_PATH when $GITHUB_EVENT_NAME is pull_request, pull_request_target or merge_group): the work items it links are checked whatever it changed." placeholder:"FILE"`
	RequireWorkItem bool     `help:"Under --changed, fail (exit 1) when the pull request links no work item (by \"Closes #N\" in its body, a branch named issue-N-..., or an inner loop bound to it)."`

	AllFindings bool `help:"Where a node's chain stopped (a hook blocked or waits), run the repository's own (x-) hooks it did not reach as well, report-only: their findings are shown, marked report only, and change neither the verdict nor the exit code. Nodes past the pointer are not run."`
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

A chain stops at its first block or wait, so a repository rule after it
says nothing until that is fixed. --all-findings runs those rules anyway
at every reached node, report-only, so one run shows every finding; the
verdict and the exit code stay those of the run without it. Every format
says which repository hooks did not run, and why (text under -v).

Exit codes: 0 all satisfied, 1 something unmet (see --fail-on), 2 could not run.`
}

// validate refuses flags that do not go together.
func (c *CheckCmd) validate() error {
	switch {
	case c.All && c.Changed:
		return errors.New("check: --all and --changed conflict; give one")
	case c.Item != "" && (c.All || c.Changed):
		return fmt.Errorf("check: a work item id (%s) and %s conflict; give one", visible(c.Item), map[bool]string{true: "--all", false: "--changed"}[c.All])
	case c.Item == "" && !c.All && !c.Changed:
		return errors.New("check: give a work item id, --all, or --changed")
	case (c.Event != "" || c.RequireWorkItem) && !c.Changed:
		return errors.New("check: --event and --require-work-item are about the pull request --changed judges; give --changed")
	case c.Changed && c.Base == "":
		return errors.New("check: --changed needs --base, the revision the change is compared with (e.g. --base origin/main)")
	case c.CheckRun && c.Format != "github":
		return fmt.Errorf("check: --check-run sends the github format's annotations; give --format github (got --format %s)", c.Format)
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
	var runner checkRunner
	if c.CheckRun {
		var err error
		if runner, err = checkRunFromEnv(os.Getenv); err != nil {
			return err
		}
	}
	opts := policy.Options{RulesFrom: c.RulesFrom, Base: c.Base, AllFindings: c.AllFindings}
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
	pr, err := c.pullRequest(os.Getenv)
	if err != nil {
		return err
	}
	items, unlinked, err := c.items(e, pr, out)
	if err != nil {
		return err
	}
	view := checkView{FailOn: c.FailOn, All: c.All || c.Changed, Verbose: g.Verbose,
		GitHub: githubEnvFrom(os.Getenv, e.Root), Version: version(), CheckRun: runner}
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
	if unlinked && c.RequireWorkItem {
		msg := "the pull request links no work item, and --require-work-item asks for one: " + policy.HowToLink
		if c.Format == "github" {
			fmt.Fprintf(out.Stdout, "::error title=the-loop::%s\n", ghData(msg))
		}
		fmt.Fprintf(out.Stderr, "the-loop: %s\n", msg)
		return exitCode(1)
	}
	if failing {
		return exitCode(1)
	}
	return nil
}

// pullRequest is the pull request --changed judges (see
// policy.PullRequestFrom); nil without --changed.
func (c *CheckCmd) pullRequest(getenv func(string) string) (*policy.PullRequest, error) {
	if !c.Changed {
		return nil, nil
	}
	return policy.PullRequestFrom(c.Event, getenv)
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

// items are the work items asked about; unlinked is set when pr links
// none.
func (c *CheckCmd) items(e *policy.Engine, pr *policy.PullRequest, out *Output) (items []string, unlinked bool, err error) {
	switch {
	case c.Changed:
		var s policy.Selection
		s, err = e.ChangedItemsFor(pr)
		items, unlinked = s.Items, s.Unlinked
	case c.All:
		items, err = e.Items()
	default:
		return []string{c.Item}, false, nil
	}
	if errors.Is(err, policy.ErrNoSpecDir) {
		fmt.Fprintf(out.Stderr, "the-loop: warning: nothing to check: %s\n", visible(err.Error()))
		err = nil
	}
	return items, unlinked, err
}

func (c *CheckCmd) outputFormat() string { return c.Format }
