package graph

import (
	"os"
	"reflect"
	"testing"
)

// TestAssembleRebuildsWhatCompileBuildsBeside: a compiled graph's exported
// fields, assembled, are the compiled graph, indexes included; the first
// of two edges on one outcome wins, as in Compile.
func TestAssembleRebuildsWhatCompileBuildsBeside(t *testing.T) {
	src, err := os.ReadFile("testdata/mini.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src = append(src, "  - {from: draft, to: done, on: pass}\n"...)
	want, err := Compile("mini.yaml", src, testRegistry())
	if err != nil {
		t.Fatal(err)
	}
	bare := &Graph{Name: want.Name, Version: want.Version, Start: want.Start, File: want.File,
		Nodes: want.Nodes, Edges: want.Edges, SkipSets: want.SkipSets}
	got := Assemble(bare, testRegistry())
	if got.registry == nil {
		t.Error("assembled without its registry")
	}
	// The test registry holds funcs, which DeepEqual never finds equal.
	got.registry, want.registry = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("assembled %+v\nwant %+v", got, want)
	}
}
