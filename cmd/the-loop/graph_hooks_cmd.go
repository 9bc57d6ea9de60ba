package main

import (
	"fmt"
	"strings"
)

// GraphHooksCmd is `the-loop graph hooks`.
type GraphHooksCmd struct {
	Format string `help:"Output format (${enum})." enum:"${textFormats}" default:"text"`
}

func (c *GraphHooksCmd) Run(g *Globals, out *Output) error {
	e, err := g.open(out)
	if err != nil {
		return err
	}
	rep := e.Hooks()
	if c.Format == "json" {
		return writeJSON(out.Stdout, rep)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "shipped hooks (%d):\n", len(rep.Shipped))
	for _, h := range rep.Shipped {
		fmt.Fprintf(&b, "  %s\n", h)
	}
	_, err = fmt.Fprint(out.Stdout, b.String())
	return err
}
