package main

import (
	"errors"
	"fmt"
	"github.com/the-loop/the-loop/channels"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/the-loop/the-loop/channels/github"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/policy"
)

// Globals are accepted on every verb.
type Globals struct {
	Repo    string `help:"Repository root (default: the repository holding the working directory, the nearest with .git or .the-loop/harness-config.yaml)." type:"string" placeholder:"DIR"`
	Config  string `help:"Operator CLI config file (default: $THE_LOOP_CLI_CONFIG, then ~/.the-loop/cli-config.yaml; one in the checkout is never read unless named here)." type:"string" placeholder:"FILE"`
	Verbose bool   `help:"Print diagnostics to stderr." short:"v"`

	Version kong.VersionFlag `help:"Print the version and exit."`

	// opened is the engine a verb opened, whose notes are printed at the end.
	opened *policy.Engine
}

// CLI is the command tree. A verb's field is never named as a global
// flag's is (ConfigCmd, beside Globals.Config): kong, which flattens
// Globals into CLI, tells fields apart by name when a parser leaves verbs
// out (see newParser).
type CLI struct {
	Globals

	Check      CheckCmd      `cmd:"" help:"Evaluate work items against their checked-in artifacts; writes nothing."`
	Init       InitCmd       `cmd:"" help:"Adopt the repository: write the default harness config and create the spec directory."`
	New        NewCmd        `cmd:"" help:"Start a work item: create its spec folder with every artifact drafted for the loop's gates."`
	Graph      GraphCmd      `cmd:"" help:"Inspect the process graph and move a work item through it."`
	Hooks      HooksCmd      `cmd:"" help:"Check, run and test the repository's own Starlark hooks."`
	ConfigCmd  ConfigCmd     `cmd:"" name:"config" help:"Validate configuration and print the embedded schemas."`
	Serve      ServeCmd      `cmd:"" help:"Receive GitHub webhooks and Slack events: verify, queue durably, process in order per work item."`
	Sessions   SessionsCmd   `cmd:"" help:"Bind work items to the checkouts the-loop serve drives them in."`
	Events     EventsCmd     `cmd:"" help:"Print the operator's event log, filtered, or follow it; --list prints the catalog of event types."`
	Reply      ReplyCmd      `cmd:"" help:"Take one message heard on a chat channel through the inbound pipeline; print the outcome as JSON."`
	Mcp        McpCmd        `cmd:"" name:"mcp" help:"Serve the repository to coding agents as an MCP server over stdio: the graph verbs as tools, none of them a human's."`
	Completion CompletionCmd `cmd:"" help:"Print a completion script for bash, zsh or fish."`
}

// Output is where a command writes. Text goes to Stdout and Stderr, which
// show escaped whatever in it would act on a terminal (see visible.go);
// JSON goes to raw, as written.
type Output struct {
	Stdout io.Writer
	Stderr io.Writer
	raw    io.Writer
}

func newOutput(stdout, stderr io.Writer) *Output {
	return &Output{Stdout: visibleWriter{stdout}, Stderr: visibleWriter{stderr}, raw: stdout}
}

// exitCode is a negative answer: the command ran and the answer is no.
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit %d", int(c)) }

// run is the whole program, callable in-process by tests. It returns the
// exit code: 0 success, 1 a negative answer, 2 could not run.
func run(args []string, stdout, stderr io.Writer) int {
	out := newOutput(stdout, stderr)
	if completing() {
		exit := -1
		parser, err := newParser(new(CLI), &exit, stdout, stderr, whole)
		if err != nil {
			return badGrammar(err, stderr)
		}
		return report(answerCompletion(parser, out.Stdout), out.Stderr)
	}
	if len(args) == 1 && args[0] == "--version" {
		// The commonest way to ask, answered as kong's VersionFlag would
		// (TestVersionAloneIsKongsAnswer) without building even the
		// global flags' parser, which was most of what it cost.
		fmt.Fprintln(stdout, version())
		return 0
	}
	if answerHelp(args, stdout) {
		return 0 // as kong answers help, from help_text.go (see help_static.go)
	}
	if cli, verb, ok := parsePlain(args); ok {
		return runVerb(verb, cli, out)
	}
	cli, ctx, exit, err := parseArgs(args, stdout, stderr)
	if cli == nil {
		return badGrammar(err, stderr)
	}
	if exit >= 0 {
		return exit // --help, or kong's own exit
	}
	if err != nil {
		return reportAs(err, out, formatAsked(args))
	}
	err = flagged(ctx.Run(&cli.Globals, out))
	if cli.opened != nil {
		printNotes(out, cli.opened.Notes())
		err = overBudget(cli.opened, err, out)
	}
	return reportAs(err, out, selectedFormat(ctx))
}

// runVerb runs the verb a command line selected and reports its answer.
func runVerb(verb runner, cli *CLI, out *Output) int {
	err := flagged(verb.Run(&cli.Globals, out))
	if cli.opened != nil {
		printNotes(out, cli.opened.Notes())
		err = overBudget(cli.opened, err, out)
	}
	return reportAs(err, out, formatOf(verb))
}

// overBudget makes a verb whose repository hooks ran out of the rule time
// they share answer no (exit 1) at least: the hooks left were blocks, but
// a report-only one changes no verdict, and which hooks were stopped
// depends on timing, while that the budget ran out does not.
func overBudget(e *policy.Engine, err error, out *Output) error {
	total, spent := e.HookBudgetSpent()
	if !spent {
		return err
	}
	fmt.Fprintf(out.Stderr, "the-loop: the repository hooks spent their budget of %s of rule time (routing.graph.hookBudget.seconds); what it did not cover is blocked\n", total)
	var code exitCode
	if err == nil || (errors.As(err, &code) && code == 0) {
		return exitCode(1)
	}
	return err
}

// badGrammar reports a command tree kong refuses: a defect of this
// program, which no command line causes.
func badGrammar(err error, stderr io.Writer) int {
	fmt.Fprintf(stderr, "the-loop: %s\n", visible(err.Error()))
	return 2
}

// revisionFlags name the flag each kind of revision comes from.
var revisionFlags = map[string]string{policy.ForBase: "--base", policy.ForRules: "--rules-from"}

// flagged names the flag a revision came from in an engine error, which
// says only what the revision was for.
func flagged(err error) error {
	var re *policy.RevisionError
	if errors.As(err, &re) {
		if flag, ok := revisionFlags[re.Use]; ok {
			return fmt.Errorf("%s %s: %w", flag, re.Rev, re.Err)
		}
	}
	return err
}

// formatted is a verb with a --format flag.
type formatted interface{ outputFormat() string }

// selectedFormat is the --format of the verb ctx selected, "" for one
// without.
func selectedFormat(ctx *kong.Context) string {
	if n := ctx.Selected(); n != nil && n.Target.CanAddr() {
		return formatOf(n.Target.Addr().Interface())
	}
	return ""
}

// formatOf is verb's --format, "" for one without.
func formatOf(verb any) string {
	if f, ok := verb.(formatted); ok {
		return f.outputFormat()
	}
	return ""
}

// formatAsked is the --format args ask for, for an error found before
// they could be parsed; "" when they name none.
func formatAsked(args []string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--format="); ok {
			return v
		}
		if a == "--format" && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// reportAs is report, and an error is also said on stdout in the format
// asked for: a JSON object under --format json, an error annotation, SARIF
// log or JUnit suite under github, sarif or junit, so that a caller
// reading stdout (or the file it went to) reads why, not nothing.
func reportAs(err error, out *Output, format string) int {
	var code exitCode
	if err == nil || errors.As(err, &code) {
		return report(err, out.Stderr)
	}
	if f, ok := reportFormats[format].(failureWriter); ok {
		if werr := f.writeFailure(out, err, checkView{GitHub: githubEnvFrom(os.Getenv, ""), Version: version()}); werr != nil {
			fmt.Fprintf(out.Stderr, "the-loop: %s\n", visible(werr.Error()))
		}
	}
	return report(err, out.Stderr)
}

// printNotes says the engine's notes on stderr, one line each.
func printNotes(out *Output, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(out.Stderr, "the-loop: note: %s\n", visible(n))
	}
}

// report maps a command's error to an exit code, printing anything that is
// not a plain negative answer as one line naming what is wrong.
func report(err error, stderr io.Writer) int {
	var code exitCode
	switch {
	case err == nil:
		return 0
	case errors.As(err, &code):
		return int(code)
	}
	fmt.Fprintf(stderr, "the-loop: %s\n", visible(err.Error()))
	return 2
}

// open builds the engine for the global flags.
func (g *Globals) open(out *Output) (*policy.Engine, error) { return g.openWith(out, policy.Options{}) }

// openWith is open with options of the verb's own (init adopts a working
// directory that is in no repository).
func (g *Globals) openWith(out *Output, opts policy.Options) (*policy.Engine, error) {
	return g.openRepo(out, opts, false)
}

// openRepo is openWith for a verb that adopts the directory --repo names
// (init) when adopts is set. Every other verb refuses a --repo that is not
// a repository's root, as it refuses a working directory in no
// repository: a gate pointed at the wrong folder must not answer "nothing
// to check", nor graph hooks "no hooks".
//
// Departure from the original (docs/compatibility.md#a---repo-that-is-not-a-repository-is-exit-2): a folder with neither .git nor a harness config is refused, not "nothing to check".
func (g *Globals) openRepo(out *Output, opts policy.Options, adopts bool) (*policy.Engine, error) {
	if !adopts {
		if err := g.refuseNonRepository(); err != nil {
			return nil, err
		}
	}
	opts.Repo, opts.CLIConfig = g.Repo, g.Config
	if g.Verbose {
		opts.Log = slog.New(slog.NewTextHandler(out.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	e, err := policy.Open(opts)
	if errors.Is(err, policy.ErrNoRepository) {
		return nil, fmt.Errorf("%w; run the-loop inside a repository, or name one with --repo", err)
	}
	g.opened = e
	return e, err
}

// refuseNonRepository refuses a --repo that is a directory but no
// repository's root (see openRepo).
func (g *Globals) refuseNonRepository() error {
	if g.Repo != "" {
		if fi, err := os.Stat(g.Repo); err == nil && fi.IsDir() && !policy.IsRepositoryRoot(g.Repo) {
			return fmt.Errorf("--repo %s: %w: it holds %s; run the-loop init there to adopt it", g.Repo, policy.ErrNoRepository, policy.RepositoryMarkers())
		}
	}
	return nil
}

// LoopFlags select an inner pull-request loop.
type LoopFlags struct {
	PR     int    `help:"Walk this pull request's inner loop (pdlc-pr-loop) instead of the work item's." name:"pr" placeholder:"N"`
	PRRepo string `help:"Owner/name of the pull request's repository, when it is not the origin repository." name:"pr-repo" placeholder:"OWNER/NAME"`
}

// RefFlag names the work item for integrations, on the verbs that call out.
type RefFlag struct {
	Ref string `help:"Work item ref for integrations (default: derived from ticketing.github, e.g. github:owner/repo#12)." placeholder:"REF"`
}

func (l LoopFlags) selector(ref string) (policy.Selector, error) {
	switch {
	case l.PR < 0:
		return policy.Selector{}, fmt.Errorf("--pr: got %d, want a pull request number", l.PR)
	case l.PRRepo != "" && l.PR == 0:
		return policy.Selector{}, errors.New("--pr-repo names a repository, not a loop: pass --pr as well")
	}
	if l.PRRepo != "" {
		// Refused before anything is opened: the name becomes a directory
		// under pr-loops/.
		if _, err := graph.ParseRepoName(l.PRRepo); err != nil {
			return policy.Selector{}, fmt.Errorf("--pr-repo: %w", err)
		}
	}
	return policy.Selector{PR: l.PR, PRRepo: l.PRRepo, Ref: ref}, nil
}

// engine opens the repository for a verb that addresses one loop.
func (g *Globals) engine(out *Output, l LoopFlags, ref string) (*policy.Engine, policy.Selector, error) {
	return g.engineWith(out, l, ref, policy.Options{})
}

// movingEngine is engine for a verb that moves an item: its outbound hooks
// act through the integration the operator's CLI config declares, and an
// adoption that cannot write costs a note, never the verb.
func (g *Globals) movingEngine(out *Output, l LoopFlags, ref string) (*policy.Engine, policy.Selector, error) {
	cli, err := policy.LoadCLIConfig(g.Config)
	if err != nil {
		return nil, policy.Selector{}, err
	}
	in, err := github.Configured(cli, os.Getenv)
	if err != nil {
		return nil, policy.Selector{}, err
	}
	return g.engineWith(out, l, ref, policy.Options{CLI: cli, Integration: in, Moves: true})
}

// engineWith is engine with options of the verb's own.
func (g *Globals) engineWith(out *Output, l LoopFlags, ref string, opts policy.Options) (*policy.Engine, policy.Selector, error) {
	sel, err := l.selector(ref)
	if err != nil {
		return nil, sel, err
	}
	e, err := g.openWith(out, opts)
	return e, sel, err
}

// EventFlags hand an advance the inbound comments a gate classifies.
type EventFlags struct {
	Comment   wholeValues `help:"An inbound comment for a human gate (repeatable)." placeholder:"TEXT"`
	Author    wholeValues `help:"Login of the comment's author (one, or one per --comment)." placeholder:"LOGIN"`
	EventFile string      `help:"JSON file with the inbound comments: {\"comments\": [{\"author\", \"body\"}]} or a GitHub issue_comment payload." type:"existingfile" placeholder:"FILE"`
}

// wholeValues is a repeatable flag each of whose values is taken whole. A
// reply is free text: kong would split it at commas, and refuse one that
// starts "- [x]" as a flag.
type wholeValues []string

func (w *wholeValues) Decode(ctx *kong.DecodeContext) error {
	t := ctx.Scan.Pop()
	if t.IsEOL() {
		return errors.New("missing value")
	}
	*w = append(*w, fmt.Sprint(t.Value))
	return nil
}

// engineWithEvent is engine for the verbs that move an item and hand a
// gate its replies; one that moves it calls out (see movingEngine), a dry
// run previews the move on the configuration the move would read, and
// calls nothing.
func (g *Globals) engineWithEvent(out *Output, l LoopFlags, ref string, f EventFlags, moves bool) (*policy.Engine, policy.Selector, *graph.Event, error) {
	ev, err := f.event()
	if err != nil {
		return nil, policy.Selector{}, nil, err
	}
	var e *policy.Engine
	var sel policy.Selector
	if moves {
		e, sel, err = g.movingEngine(out, l, ref)
	} else {
		e, sel, err = g.engineWith(out, l, ref, policy.Options{Moves: true})
	}
	return e, sel, ev, err
}

func (f EventFlags) event() (*graph.Event, error) {
	if f.EventFile != "" {
		if len(f.Comment) > 0 {
			return nil, errors.New("--event-file and --comment are exclusive; give one")
		}
		return channels.ReadEvent(f.EventFile)
	}
	return channels.CommentEvent(f.Comment, f.Author)
}

// buildRef is set by a build that has no git history to stamp (the GitHub
// Action's, which is downloaded without it): the ref it was built from.
var buildRef string

// version is the module version the binary was built from and, when it
// was built from a git checkout, the revision: what a bug report or a CI
// log needs to say which the-loop judged.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "the-loop (devel)"
	}
	return versionOf(bi)
}

func versionOf(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, at string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" && buildRef != "" {
		return fmt.Sprintf("the-loop %s (%s)", v, buildRef)
	}
	if rev == "" {
		return "the-loop " + v
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	if at != "" {
		rev += ", " + at
	}
	return fmt.Sprintf("the-loop %s (%s)", v, rev)
}
