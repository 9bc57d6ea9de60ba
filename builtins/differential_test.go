package builtins_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/builtins"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/graphs"
	"github.com/the-loop/the-loop/internal/corpus"
	"github.com/the-loop/the-loop/policy"
)

// TestEveryNodeIsJudgedAsBefore evaluates every work item of three
// repositories on every shipped loop, once with the shipped hooks and once
// with the content hooks as they were before they were made fast
// (LegacyRegistry), and asks for the same report, node by node: the demo,
// a repository generated from the original project's work items (package
// corpus), and those work items under their own names, with the Python
// tool's own graph-state.json files, outer and inner.
func TestEveryNodeIsJudgedAsBefore(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("THE_LOOP_CLI_CONFIG", "")
	t.Setenv("THE_LOOP_HOOK_PATH", "")
	t.Run("demo", func(t *testing.T) { compareRepository(t, filepath.Join("..", "examples", "demo")) })
	t.Run("generated", func(t *testing.T) {
		root := t.TempDir()
		// Two copies of every item and some: the copies are renamed.
		if err := corpus.Shared(t).Write(root, 2*109+11); err != nil {
			t.Fatal(err)
		}
		compareRepository(t, root)
	})
	t.Run("original", func(t *testing.T) {
		root := t.TempDir()
		if err := corpus.Shared(t).WriteOriginal(root); err != nil {
			t.Fatal(err)
		}
		compareRepository(t, root)
	})
}

// compareRepository compares the two registries' reports on every item of
// the repository at root, on every loop, with its state and recomputed.
func compareRepository(t *testing.T, root string) {
	e, err := policy.Open(policy.Options{Repo: root, Events: discard{}})
	if err != nil {
		t.Fatal(err)
	}
	items, err := e.Items()
	if err != nil || len(items) == 0 {
		t.Fatalf("%d items: %v", len(items), err)
	}
	shipped, legacy := loops(t, builtins.Registry()), loops(t, builtins.LegacyRegistry())
	nodes := 0
	for _, item := range items {
		sels := []policy.Selector{{}}
		for _, pr := range innerLoops(t, filepath.Join(e.Checkout.Root(), filepath.FromSlash(e.SpecDirRel()), item)) {
			sels = append(sels, policy.Selector{PR: pr})
		}
		for _, sel := range sels {
			rt, err := e.Runtime(item, sel)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range graphs.Names {
				if (name == graph.PRLoop) != (sel.PR > 0) {
					continue
				}
				for _, recompute := range []bool{false, true} {
					got, gotErr := statusOn(rt, shipped[name], item, recompute)
					want, wantErr := statusOn(rt, legacy[name], item, recompute)
					if !reflect.DeepEqual(got, want) || !sameError(gotErr, wantErr) {
						t.Errorf("%s on %s (PR %d, recompute %v): the reports differ:\n got %s %v\nwant %s %v",
							item, name, sel.PR, recompute, asJSON(got), gotErr, asJSON(want), wantErr)
						continue
					}
					if got != nil {
						nodes += len(got.Nodes)
					}
				}
			}
		}
	}
	t.Logf("%d items, %d node verdicts compared", len(items), nodes)
}

// statusOn is rt's report on item, walked on g instead of its own loop.
func statusOn(rt *graph.Runtime, g *graph.Graph, item string, recompute bool) (*graph.StatusReport, error) {
	on := *rt
	on.Graph = g
	rep, err := on.StatusWith(item, nil, recompute)
	if rep != nil {
		// How long a node took is measured, not judged.
		rep.Elapsed = 0
		for i := range rep.Nodes {
			rep.Nodes[i].Elapsed = 0
		}
	}
	return rep, err
}

// loops compiles every shipped loop with reg.
func loops(t *testing.T, reg graph.Registry) map[string]*graph.Graph {
	t.Helper()
	out := map[string]*graph.Graph{}
	for _, name := range graphs.Names {
		src, err := graphs.Loop(name)
		if err != nil {
			t.Fatal(err)
		}
		if out[name], err = graph.Compile(graphs.FileName(name), src, reg); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// innerLoops are the pull requests an item's folder holds a loop for.
func innerLoops(t *testing.T, dir string) []int {
	entries, err := os.ReadDir(filepath.Join(dir, "pr-loops"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var prs []int
	for _, e := range entries {
		if n, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "pr-")); err == nil && e.IsDir() {
			prs = append(prs, n)
		}
	}
	return prs
}

func sameError(a, b error) bool {
	return (a == nil) == (b == nil) && (a == nil || a.Error() == b.Error())
}

func asJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}

type discard struct{}

func (discard) Emit(string, string, map[string]any) error { return nil }
