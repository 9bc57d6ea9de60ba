package main

import (
	"fmt"
	"io"

	"github.com/the-loop/the-loop/policy"
)

// ConfigCmd groups the configuration verbs.
type ConfigCmd struct {
	Validate ConfigValidateCmd `cmd:"" help:"Validate the repository's harness config and the operator's CLI config."`
	Schema   ConfigSchemaCmd   `cmd:"" help:"Print an embedded JSON Schema."`
}

// ConfigValidateCmd is `the-loop config validate`.
type ConfigValidateCmd struct {
	TextFormat
}

// ConfigReport is what config validate found: the files read (""
// where none was found and defaults apply), the spec directory, and the
// static check of the repository's own hooks.
type ConfigReport struct {
	Harness string                   `json:"harness"`
	CLI     string                   `json:"cli"`
	SpecDir string                   `json:"specDir"`
	Hooks   policy.DeclarationReport `json:"hooks"`
}

func (c *ConfigValidateCmd) Run(g *Globals, out *Output) error {
	e, err := g.open(out)
	if err != nil {
		return err
	}
	hooks, err := e.CheckDeclaration()
	if err != nil {
		return err
	}
	rep := ConfigReport{Harness: e.Harness.Path, CLI: e.CLI.Path, SpecDir: e.SpecDirRel(), Hooks: hooks}
	if len(hooks.Errors) > 0 {
		// The harness config is not valid: its faults are said as any
		// other invalid config's are, each on a line of its own.
		for _, d := range hooks.Errors {
			fmt.Fprintf(out.Stderr, "the-loop: %s\n", visible(d.Text))
		}
		for _, d := range hooks.Warnings {
			fmt.Fprintf(out.Stderr, "the-loop: warning: %s\n", visible(d.Text))
		}
		if c.Format == "json" {
			if err := writeJSON(out, rep); err != nil {
				return err
			}
		}
		return exitCode(2)
	}
	return c.write(out, rep, func(w io.Writer) error {
		for _, line := range []struct{ what, path string }{
			{"harness config", rep.Harness},
			{"CLI config", rep.CLI},
		} {
			if line.path == "" {
				fmt.Fprintf(w, "%s: none found, defaults apply\n", line.what)
				continue
			}
			fmt.Fprintf(w, "%s: %s is valid\n", line.what, visible(line.path))
		}
		fmt.Fprintf(w, "spec directory: %s\n", visible(rep.SpecDir))
		if h := rep.Hooks; len(h.Modules) == 0 && len(h.Attach) == 0 {
			fmt.Fprintln(w, "repository hooks: none declared")
		} else {
			fmt.Fprintf(w, "repository hooks: %d module(s) found and %d attachment(s) checked, nothing executed (`the-loop hooks check` loads them)\n", len(h.Modules), len(h.Attach))
			if !h.RepoHooks {
				fmt.Fprintln(w, "repository hooks: this machine refuses them (routing.graph.repoHooks is false): none will run")
			}
		}
		for _, d := range rep.Hooks.Warnings {
			fmt.Fprintf(w, "warning: %s\n", visible(d.Text))
		}
		return nil
	})
}

// ConfigSchemaCmd is `the-loop config schema`.
type ConfigSchemaCmd struct {
	Which string `arg:"" optional:"" enum:"harness,cli" default:"harness" help:"Which schema: harness or cli."`
	JSONFormat
}

func (c *ConfigSchemaCmd) Run(g *Globals, out *Output) error {
	schema := policy.HarnessSchema()
	if c.Which == "cli" {
		schema = policy.CLISchema()
	}
	_, err := out.raw.Write(schema)
	return err
}
