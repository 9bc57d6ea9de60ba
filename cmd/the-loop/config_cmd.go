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
// where none was found and defaults apply) and the spec directory.
type ConfigReport struct {
	Harness string `json:"harness"`
	CLI     string `json:"cli"`
	SpecDir string `json:"specDir"`
}

func (c *ConfigValidateCmd) Run(g *Globals, out *Output) error {
	e, err := g.open(out)
	if err != nil {
		return err
	}
	rep := ConfigReport{Harness: e.Harness.Path, CLI: e.CLI.Path, SpecDir: e.SpecDirRel()}
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
		_, err := fmt.Fprintf(w, "spec directory: %s\n", visible(rep.SpecDir))
		return err
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
