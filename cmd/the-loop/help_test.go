package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// commandPaths are every command of the tree, as the words that select
// it ("graph show").
func commandPaths(t *testing.T) []string {
	t.Helper()
	var cli CLI
	parser, err := kong.New(&cli, kong.Vars{"reportFormats": "", "textFormats": "", "graphFormats": "", "statusFormats": "", "version": ""})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	var walk func(n *kong.Node, prefix string)
	walk = func(n *kong.Node, prefix string) {
		for _, c := range n.Children {
			p := strings.TrimSpace(prefix + " " + c.Name)
			paths = append(paths, p)
			walk(c, p)
		}
	}
	walk(parser.Model.Node, "")
	return paths
}

// surfaceLines are command lines whose whole answer (stdout, stderr,
// exit code) is pinned in testdata/golden/cli-surface.txt: every help
// text, the version, and the errors a command line can have before any
// verb runs. The parser builds only the part of the command tree a
// command line names (see parseArgs); this is what keeps that invisible.
func surfaceLines(t *testing.T) [][]string {
	lines := [][]string{{"--help"}, {"-h"}, {"-vh"}}
	for _, p := range commandPaths(t) {
		lines = append(lines, append(strings.Fields(p), "--help"))
	}
	for _, l := range []string{
		"", "bogus", "graph", "graph shw", "graph show --bogus", "check --bogus",
		"--format json check --bogus", "--format sarif check", "--repo", "--repo graph",
		"--version", "-v --version", "check --version", "graph show --version", "bogus --version",
		"config schema yaml", "completion", "completion tcsh", "completion bash",
		"check --format nope", "graph status", "hooks", "hooks run", "reply --channel",
		"--repo /nonexistent check -- --help", "new", "-v", "--config",
		"-h graph show", "--help check", "graph -h show", "--repo x -h graph", "check --bogus --help",
		"graph show --format nope", "graph show --format", "sessions bind --help extra", "config schema cli --version",
	} {
		lines = append(lines, strings.Fields(l))
	}
	return lines
}

func TestTheCommandLineSurface(t *testing.T) {
	var b strings.Builder
	for _, args := range surfaceLines(t) {
		stdout, stderr, code := runCLI(t, nil, args...)
		fmt.Fprintf(&b, "$ the-loop %s\n%s", strings.Join(args, " "), stdout)
		if stderr != "" {
			fmt.Fprintf(&b, "[stderr]\n%s", stderr)
		}
		fmt.Fprintf(&b, "[exit %d]\n\n", code)
	}
	got := strings.ReplaceAll(b.String(), version(), "<version>")
	golden(t, "cli-surface.txt", got)
}
