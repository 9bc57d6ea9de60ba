package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/policy"
)

// Globals are accepted on every verb.
type Globals struct {
	Repo    string `help:"Repository root." default:"." type:"string" placeholder:"DIR"`
	Config  string `help:"Operator CLI config file (default: $THE_LOOP_CLI_CONFIG, ./.the-loop/cli-config.yaml, ~/.the-loop/cli-config.yaml)." type:"string" placeholder:"FILE"`
	Verbose bool   `help:"Print diagnostics to stderr." short:"v"`
}

// CLI is the command tree.
type CLI struct {
	Globals

	Check  CheckCmd  `cmd:"" help:"Evaluate work items against their checked-in artifacts; writes nothing."`
	Graph  GraphCmd  `cmd:"" help:"Inspect the process graph and move a work item through it."`
	Config ConfigCmd `cmd:"" help:"Validate configuration and print the embedded schemas."`
}

// Output is where a command writes.
type Output struct {
	Stdout io.Writer
	Stderr io.Writer
}

// exitCode is a negative answer: the command ran and the answer is no.
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit %d", int(c)) }

func execute(args []string, stdout, stderr io.Writer) int {
	var cli CLI
	exit := -1
	parser, err := kong.New(&cli,
		kong.Name("the-loop"),
		kong.Description("A policy engine for spec-driven development: which gates a work item has met, and which it has not."),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { exit = code }),
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.Vars{
			"checkFormats": strings.Join(checkFormatNames(), ","),
			"textFormats":  "text,json",
		},
	)
	if err != nil {
		fmt.Fprintf(stderr, "the-loop: %v\n", err)
		return 2
	}
	ctx, err := parser.Parse(args)
	if exit >= 0 {
		return exit // --help, or kong's own exit
	}
	if err != nil {
		fmt.Fprintf(stderr, "the-loop: %v\n", err)
		return 2
	}
	out := &Output{Stdout: stdout, Stderr: stderr}
	err = ctx.Run(&cli.Globals, out)
	return report(err, stderr)
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
	fmt.Fprintf(stderr, "the-loop: %v\n", err)
	return 2
}

// open builds the engine for the global flags.
func (g *Globals) open(out *Output) (*policy.Engine, error) {
	opts := policy.Options{Repo: g.Repo, CLIConfig: g.Config}
	if g.Verbose {
		opts.Log = slog.New(slog.NewTextHandler(out.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return policy.Open(opts)
}

// LoopFlags select an inner pull-request loop.
type LoopFlags struct {
	PR     int    `help:"Walk this pull request's inner loop (pdlc-pr-loop) instead of the work item's." name:"pr" placeholder:"N"`
	PRRepo string `help:"Owner/name of the pull request's repository, when it is not the origin repository." name:"pr-repo" placeholder:"OWNER/NAME"`
}

func (l LoopFlags) selector() (policy.Selector, error) {
	if l.PRRepo != "" && l.PR == 0 {
		return policy.Selector{}, errors.New("--pr-repo names a repository, not a loop: pass --pr as well")
	}
	return policy.Selector{PR: l.PR, PRRepo: l.PRRepo}, nil
}

// EventFlags hand an advance the inbound comments a gate classifies.
type EventFlags struct {
	Comment   []string `help:"An inbound comment for a human gate (repeatable)." placeholder:"TEXT" sep:"none"`
	Author    []string `help:"Login of the comment's author (one, or one per --comment)." placeholder:"LOGIN" sep:"none"`
	EventFile string   `help:"JSON file with the inbound comments: {\"comments\": [{\"author\", \"body\"}]} or a GitHub issue_comment payload." type:"existingfile" placeholder:"FILE"`
}

func (f EventFlags) event() (*graph.Event, error) {
	if f.EventFile != "" {
		if len(f.Comment) > 0 {
			return nil, errors.New("--event-file and --comment are exclusive; give one")
		}
		return policy.ReadEvent(f.EventFile)
	}
	return policy.CommentEvent(f.Comment, f.Author)
}

func sortedKeys[M ~map[string]V, V any](m M) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
