package graph

import (
	"errors"
	"os"
	"reflect"
	"testing"
)

func TestATreeCompilesToTheSameGraphAsItsYAML(t *testing.T) {
	src, _ := os.ReadFile("testdata/mini.yaml")
	tree, err := EncodeYAMLTree(src)
	if err != nil {
		t.Fatal(err)
	}
	fromYAML, err := Compile("mini.yaml", src, testRegistry())
	if err != nil {
		t.Fatal(err)
	}
	fromTree, err := CompileTree("mini.yaml", tree, testRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromYAML.Nodes, fromTree.Nodes) || !reflect.DeepEqual(fromYAML.Edges, fromTree.Edges) ||
		!reflect.DeepEqual(fromYAML.SkipSets, fromTree.SkipSets) || fromYAML.Start != fromTree.Start {
		t.Error("the tree compiled differently")
	}
}

func TestATreeKeepsErrorLines(t *testing.T) {
	src := []byte("name: t\nnodes:\n  - id: a\n    exit: [nope]\n")
	tree, _ := EncodeYAMLTree(src)
	_, err := CompileTree("t.yaml", tree, testRegistry())
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Line != 4 || ce.File != "t.yaml" {
		t.Errorf("got %v", err)
	}
}

func TestACorruptTreeIsAConfigError(t *testing.T) {
	src, _ := os.ReadFile("testdata/mini.yaml")
	tree, _ := EncodeYAMLTree(src)
	for _, bad := range [][]byte{nil, []byte("junk"), tree[:len(tree)-3], append(append([]byte{}, tree...), 0)} {
		_, err := CompileTree("mini.yaml", bad, testRegistry())
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("got %v, want a ConfigError", err)
		}
	}
}

func FuzzCompileTree(f *testing.F) {
	src, _ := os.ReadFile("testdata/mini.yaml")
	tree, _ := EncodeYAMLTree(src)
	f.Add(tree)
	f.Fuzz(func(t *testing.T, data []byte) {
		CompileTree("fuzz", data, testRegistry()) // must not panic
	})
}
