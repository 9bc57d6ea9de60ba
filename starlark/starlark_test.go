package starlark

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sl "go.starlark.net/starlark"
	"go.starlark.net/starlarktest"

	"github.com/the-loop/the-loop/graph"
)

// fixtureRepo is the repository testdata/*.star run against.
func fixtureRepo(t testing.TB) string {
	t.Helper()
	outside := writeTree(t, map[string]string{"secret": "s3cret\n", "dir/secret": "s3cret\n"})
	root := writeTree(t, map[string]string{
		"src/a.go":                     "// SPDX-License-Identifier: MIT\npackage a\n",
		"src/b.go":                     "package b\n",
		"src/sub/c.go":                 "package c\n",
		"src/sub/d.txt":                "d\n",
		"big.txt":                      strings.Repeat("x", 2000),
		".git/HEAD.txt":                "ref: refs/heads/main\n",
		"specs/item-1/requirements.md": "# Requirements\n",
		"specs/item-1/design.md":       "# Design\n",
	})
	for link, target := range map[string]string{
		"out":          filepath.Join(outside, "dir"),
		"outfile":      filepath.Join(outside, "secret"),
		"out-dangling": filepath.Join(outside, "nothing"),
		"inlink":       "src/a.go",
		"src/link.go":  "b.go",
		"dangling-in":  "nowhere",
		// An absolute target is a place on one machine; even one naming a
		// file inside is refused.
		"abs-in": filepath.Join(root, "src/a.go"),
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// fixtureContext is the graph.Context testdata/*.star hooks are called
// with.
func fixtureContext(t testing.TB, root string) *graph.Context {
	t.Helper()
	g := compileLoop(t)
	co := openCheckout(root)
	node, err := g.Node("implementation")
	if err != nil {
		t.Fatal(err)
	}
	return &graph.Context{
		WorkItem: graph.WorkItem{
			Ref: "github:o/r#1", ID: "item-1", Tags: []string{"a", "b"}, RiskTier: 2, Dir: "specs/item-1",
			CurrentNode: "design",
		},
		Node:     node,
		Boundary: graph.Exit,
		Checkout: co,
		Params: map[string]any{
			"board":  "platform",
			"list":   []any{1, "two", 2.5, true, nil},
			"nested": map[string]any{"c": 3, "b": 2, "a": 1},
		},
		Results: []graph.Result{
			graph.Pass("ok", map[string]any{"k": "v", "outcome": graph.OutcomeApproved}),
			graph.Skip("skipper", "not today"),
		},
		Decisions: map[string]any{"z": 1, "a": "x"},
		Config: map[string]any{
			"version": 1, "b": 1, "a": 2,
			"graph": map[string]any{"hooks": map[string]any{"attach": []any{map[string]any{"hook": "x-test-ctx", "node": "implementation"}}}},
		},
		Graph: g,
		Files: graph.NewFiles(co),
	}
}

// TestStarlarkTestdata runs every testdata/*.star file as a declared module
// with the assert module predeclared, then calls each hook it registers
// with the fixture context: a failed assertion is reported at its
// position, and each hook must return ok().
func TestStarlarkTestdata(t *testing.T) {
	assert, err := starlarktest.LoadAssertModule()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("testdata/*.star")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			root := fixtureRepo(t)
			rel := ".the-loop/hooks/" + filepath.Base(file)
			if err := os.MkdirAll(filepath.Join(root, ".the-loop/hooks"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, rel), src, 0o644); err != nil {
				t.Fatal(err)
			}
			h, err := newHost(Options{Repo: root, Limits: testLimits})
			if err != nil {
				t.Fatal(err)
			}
			env := maps.Clone(h.env)
			env["assert"] = assert["assert"]
			h.env = env
			h.threadInit = func(th *sl.Thread) { starlarktest.SetReporter(th, t) }
			table, err := h.load([]Module{{Path: rel}})
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range slices.Sorted(maps.Keys(table)) {
				r, err := table[name].Run(fixtureContext(t, root))
				switch {
				case err != nil:
					t.Errorf("%s: %v", name, err)
				case r.Status != graph.StatusPass:
					t.Errorf("%s: %s: %s", name, r.Status, r.Render())
				}
			}
		})
	}
}
