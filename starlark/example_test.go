package starlark_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/repo"
	"github.com/the-loop/the-loop/starlark"
)

// The seed's example: a repository rule that every Go file carries an SPDX
// header, loaded from the repository and run as the-loop runs any hook.
func ExampleLoad() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	for name, body := range map[string]string{
		".the-loop/hooks/house_rules.star": `
def _licence_header(ctx):
    missing = [p for p in ctx.repo.glob("src/**/*.go") if "SPDX" not in ctx.repo.read(p)]
    if missing:
        return block([message("missing SPDX header", path = p) for p in missing])
    return ok()

hook("x-licence-header", _licence_header)
`,
		"src/a.go":     "// SPDX-License-Identifier: MIT\npackage a\n",
		"src/b/b.go":   "package b\n",
		"src/c/c.go":   "package c\n",
		"src/notes.md": "not Go\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			panic(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			panic(err)
		}
	}

	hooks, err := starlark.Load(
		[]starlark.Module{{Path: ".the-loop/hooks/house_rules.star", File: ".the-loop/harness-config.yaml", Line: 4}},
		starlark.Options{Repo: dir, Limits: starlark.DefaultLimits},
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	checkout, err := repo.Open(dir)
	if err != nil {
		panic(err)
	}
	r, err := hooks["x-licence-header"].Run(&graph.Context{Checkout: checkout, Files: graph.NewFiles(checkout)})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Hook, r.Status, r.Retriable)
	fmt.Println(r.Render())
	// Output:
	// x-licence-header block true
	// - missing SPDX header (src/b/b.go)
	// - missing SPDX header (src/c/c.go)
}
