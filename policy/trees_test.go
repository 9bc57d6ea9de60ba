package policy

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/the-loop/the-loop/builtins"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/graphs"
)

var update = flag.Bool("update", false, "rewrite the shipped loops' pre-parsed trees and compiled Go from their YAML")

// TestTheShippedTreesMatchTheirYAML keeps graphs/trees/*.tree, which
// tests and benchmarks compile from, in step with the YAML they are made from. Run
// `go test ./policy -run TestTheShippedTreesMatchTheirYAML -update` after
// editing a loop.
func TestTheShippedTreesMatchTheirYAML(t *testing.T) {
	for _, name := range graphs.Names {
		src, err := graphs.Loop(name)
		if err != nil {
			t.Fatal(err)
		}
		want, err := graph.EncodeYAMLTree(src)
		if err != nil {
			t.Fatal(err)
		}
		if *update {
			path := filepath.Join("..", "graphs", graphs.TreeFile(name))
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := graphs.Tree(name)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("graphs/%s is stale (%v); run go test ./policy -run TestTheShippedTreesMatchTheirYAML -update", graphs.TreeFile(name), err)
		}
		if _, err := graph.Compile(graphs.FileName(name), src, builtins.Registry()); err != nil {
			t.Errorf("the YAML itself does not compile: %v", err)
		}
	}
}
