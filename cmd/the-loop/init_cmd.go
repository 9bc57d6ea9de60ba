package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/the-loop/the-loop/policy"
)

// InitCmd is `the-loop init`.
type InitCmd struct {
	GitHub string `name:"github" help:"The repository tickets are filed in, OWNER/NAME (default: the origin remote's, when it is on GitHub)." placeholder:"OWNER/NAME"`
	DryRun bool   `help:"Say what would be done, and write nothing."`
	TextFormat
}

func (c *InitCmd) Help() string {
	return `init writes .the-loop/harness-config.yaml with the built-in defaults when the
repository has no harness config (under either name), names the GitHub
repository in ticketing.github, creates the spec directory, and adds the
lock files the graph verbs write (graph-state.lock) to .gitignore. It never
overwrites an existing config, and running it twice changes nothing. The
graph verbs that move an item adopt a repository the same way, without the
GitHub name; check and the other read-only verbs never write.`
}

func (c *InitCmd) Run(g *Globals, out *Output) error {
	e, err := g.openRepo(out, policy.Options{OrWorkDir: true}, true)
	if err != nil {
		return err
	}
	rep, err := e.Init(c.GitHub, c.DryRun)
	if err != nil {
		return err
	}
	return c.write(out, rep, func(w io.Writer) error { return writeInit(w, rep) })
}

func writeInit(w io.Writer, rep *policy.InitReport) error {
	var b strings.Builder
	would := func(done, planned string) string {
		if rep.DryRun {
			return planned
		}
		return done
	}
	switch rep.Outcome {
	case policy.ScaffoldWritten:
		fmt.Fprintf(&b, "%s %s with the built-in defaults\n", would("wrote", "would write"), rep.Config)
		if rep.Origin != "" {
			fmt.Fprintf(&b, "  ticketing.github: %s (from %s)\n", rep.Origin, rep.OriginFrom)
		} else {
			fmt.Fprintln(&b, "  ticketing.github: left empty (no --github, and no GitHub origin remote)")
		}
	default:
		fmt.Fprintf(&b, "%s is already there; left as it is\n", visible(rep.Config))
	}
	if rep.SpecDirCreated {
		fmt.Fprintf(&b, "%s the spec directory %s\n", would("created", "would create"), visible(rep.SpecDir))
	} else {
		fmt.Fprintf(&b, "spec directory %s is there\n", visible(rep.SpecDir))
	}
	if gi := rep.GitIgnore; gi != nil {
		switch {
		case gi.Skipped != "":
			fmt.Fprintf(&b, "left %s alone: %s; add %s to it yourself\n", gi.Path, visible(gi.Skipped), strings.Join(policy.IgnoredFiles(), ", "))
		case len(gi.Added) == 0:
			fmt.Fprintf(&b, "%s ignores the lock files\n", gi.Path)
		case gi.Created:
			fmt.Fprintf(&b, "%s %s, ignoring %s\n", would("created", "would create"), gi.Path, strings.Join(gi.Added, ", "))
		default:
			fmt.Fprintf(&b, "%s %s to %s\n", would("added", "would add"), strings.Join(gi.Added, ", "), gi.Path)
		}
	}
	if rep.Outcome == policy.ScaffoldWritten && !rep.DryRun {
		fmt.Fprintln(&b, "next: tailor the config (`the-loop config schema harness` lists every key), commit it, and start a work item with `the-loop new ID`")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
