package main

import (
	"fmt"

	"github.com/the-loop/the-loop/policy"
)

// ConfigCmd groups the configuration verbs.
type ConfigCmd struct {
	Validate ConfigValidateCmd `cmd:"" help:"Validate the repository's harness config and the operator's CLI config."`
	Schema   ConfigSchemaCmd   `cmd:"" help:"Print an embedded JSON Schema."`
}

// ConfigValidateCmd is `the-loop config validate`.
type ConfigValidateCmd struct{}

func (c *ConfigValidateCmd) Run(g *Globals, out *Output) error {
	e, err := g.open(out)
	if err != nil {
		return err
	}
	for _, line := range []struct{ what, path string }{
		{"harness config", e.Harness.Path},
		{"CLI config", e.CLI.Path},
	} {
		if line.path == "" {
			fmt.Fprintf(out.Stdout, "%s: none found, defaults apply\n", line.what)
			continue
		}
		fmt.Fprintf(out.Stdout, "%s: %s is valid\n", line.what, visible(line.path))
	}
	fmt.Fprintf(out.Stdout, "spec directory: %s\n", visible(e.SpecDirRel()))
	return nil
}

// ConfigSchemaCmd is `the-loop config schema`.
type ConfigSchemaCmd struct {
	Which string `arg:"" optional:"" enum:"harness,cli" default:"harness" help:"Which schema: harness or cli."`
}

func (c *ConfigSchemaCmd) Run(g *Globals, out *Output) error {
	schema := policy.HarnessSchema()
	if c.Which == "cli" {
		schema = policy.CLISchema()
	}
	_, err := out.raw.Write(schema)
	return err
}
