package graphs

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The Python project's git mirror. The parity tests read its files with
// `git show` and skip when it is not on this machine (it never is in CI).
// THE_LOOP_PY_MIRROR points them at another copy.
const defaultMirror = "/work/.mirror/MadaraUchiha-314+the-loop/repo"

func mirrorPath() string {
	if p := os.Getenv("THE_LOOP_PY_MIRROR"); p != "" {
		return p
	}
	return defaultMirror
}

// original returns the file at path in the mirror's HEAD, skipping the test
// when the mirror or git is unavailable.
func original(t *testing.T, path string) []byte {
	t.Helper()
	mirror := mirrorPath()
	if _, err := os.Stat(mirror); err != nil {
		t.Skipf("no mirror of the Python project at %s", mirror)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	var stderr bytes.Buffer
	cmd := exec.Command("git", "-C", mirror, "show", "HEAD:"+path)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git show HEAD:%s: %v: %s", path, err, stderr.String())
	}
	return out
}

// plain turns a parsed YAML node into plain Go values: maps with string keys,
// slices, and scalars as yaml.v3 resolves them. Mapping keys are always taken
// as their literal text, so a YAML 1.1 reader's habit of turning `on` into a
// boolean could never change a key's meaning here.
func plain(t *testing.T, n *yaml.Node) any {
	t.Helper()
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return plain(t, n.Content[0])
	case yaml.AliasNode:
		return plain(t, n.Alias)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if _, dup := m[k]; dup {
				t.Fatalf("line %d: duplicate key %q", n.Content[i].Line, k)
			}
			m[k] = plain(t, n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, c := range n.Content {
			s[i] = plain(t, c)
		}
		return s
	default:
		var v any
		if err := n.Decode(&v); err != nil {
			t.Fatalf("line %d: %v", n.Line, err)
		}
		return v
	}
}

func parse(t *testing.T, src []byte) (*yaml.Node, any) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		t.Fatalf("parse: %v", err)
	}
	return &doc, plain(t, &doc)
}

// keyOrder lists "path/key" for every mapping key in document order.
func keyOrder(n *yaml.Node, prefix string, out *[]string) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for i, c := range n.Content {
			p := prefix
			if n.Kind == yaml.SequenceNode {
				p = fmt.Sprintf("%s[%d]", prefix, i)
			}
			keyOrder(c, p, out)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := prefix + "/" + n.Content[i].Value
			*out = append(*out, p)
			keyOrder(n.Content[i+1], p, out)
		}
	}
}

// mappingKeys returns the keys of the mapping at key under the document root,
// in order.
func mappingKeys(doc *yaml.Node, key string) []string {
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != key {
			continue
		}
		var keys []string
		v := root.Content[i+1]
		for j := 0; j+1 < len(v.Content); j += 2 {
			keys = append(keys, v.Content[j].Value)
		}
		return keys
	}
	return nil
}

// normaliseChain folds a `{hook: X}` entry without parameters into the bare name
// X; the two spellings mean the same.
func normaliseChain(v any) any {
	s, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, len(s))
	for i, e := range s {
		if m, ok := e.(map[string]any); ok && len(m) == 1 {
			if h, ok := m["hook"].(string); ok {
				out[i] = h
				continue
			}
		}
		out[i] = e
	}
	return out
}

func normaliseNode(v any) map[string]any {
	m, _ := v.(map[string]any)
	out := make(map[string]any, len(m))
	for k, x := range m {
		if k == "entry" || k == "exit" {
			x = normaliseChain(x)
		}
		out[k] = x
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func nodeID(v any) string {
	m, _ := v.(map[string]any)
	id, _ := m["id"].(string)
	return id
}

func TestLoopParity(t *testing.T) {
	for _, name := range Names {
		t.Run(name, func(t *testing.T) {
			theirs := original(t, "cli/the_loop/graph/"+FileName(name))
			ours, err := Loop(name)
			if err != nil {
				t.Fatal(err)
			}
			oursDoc, oursV := parse(t, ours)
			theirsDoc, theirsV := parse(t, theirs)
			o, _ := oursV.(map[string]any)
			p, _ := theirsV.(map[string]any)

			if got, want := sortedKeys(o), sortedKeys(p); !slices.Equal(got, want) {
				t.Errorf("top-level keys: got %v, want %v", got, want)
			}
			for _, k := range []string{"version", "name", "start"} {
				if !reflect.DeepEqual(o[k], p[k]) {
					t.Errorf("%s: got %#v, want %#v", k, o[k], p[k])
				}
			}

			// Skip sets: same names in the same order, same members.
			if got, want := mappingKeys(oursDoc, "skipSets"), mappingKeys(theirsDoc, "skipSets"); !slices.Equal(got, want) {
				t.Errorf("skip set order: got %v, want %v", got, want)
			}
			if !reflect.DeepEqual(o["skipSets"], p["skipSets"]) {
				t.Errorf("skipSets: got %v, want %v", o["skipSets"], p["skipSets"])
			}

			// Nodes: same ids in the same order, then field by field.
			on, _ := o["nodes"].([]any)
			pn, _ := p["nodes"].([]any)
			var oIDs, pIDs []string
			for _, n := range on {
				oIDs = append(oIDs, nodeID(n))
			}
			for _, n := range pn {
				pIDs = append(pIDs, nodeID(n))
			}
			if !slices.Equal(oIDs, pIDs) {
				t.Fatalf("node ids: got %v, want %v", oIDs, pIDs)
			}
			for i := range on {
				a, b := normaliseNode(on[i]), normaliseNode(pn[i])
				if got, want := sortedKeys(a), sortedKeys(b); !slices.Equal(got, want) {
					t.Errorf("node %s fields: got %v, want %v", oIDs[i], got, want)
				}
				for _, k := range sortedKeys(b) {
					if !reflect.DeepEqual(a[k], b[k]) {
						t.Errorf("node %s %s:\n got  %#v\n want %#v", oIDs[i], k, a[k], b[k])
					}
				}
			}

			// Edges: the same list in the same order (the first edge for a
			// given source and outcome wins, so order is meaning).
			oe, _ := o["edges"].([]any)
			pe, _ := p["edges"].([]any)
			if len(oe) != len(pe) {
				t.Errorf("edges: got %d, want %d", len(oe), len(pe))
			}
			for i := range min(len(oe), len(pe)) {
				if !reflect.DeepEqual(oe[i], pe[i]) {
					t.Errorf("edge %d: got %v, want %v", i, oe[i], pe[i])
				}
			}

			// Belt and braces: the whole documents, normalised, agree.
			if !t.Failed() {
				norm := func(m map[string]any) map[string]any {
					c := make(map[string]any, len(m))
					for k, v := range m {
						c[k] = v
					}
					if ns, ok := c["nodes"].([]any); ok {
						out := make([]any, len(ns))
						for i, n := range ns {
							out[i] = normaliseNode(n)
						}
						c["nodes"] = out
					}
					return c
				}
				if !reflect.DeepEqual(norm(o), norm(p)) {
					t.Error("documents differ after normalisation")
				}
			}
		})
	}
}

func TestHarnessConfigParity(t *testing.T) {
	theirs := original(t, "cli/the_loop/harness-config.default.yaml")
	oursDoc, ours := parse(t, DefaultHarnessConfig())
	theirsDoc, want := parse(t, theirs)

	var got, wantOrder []string
	keyOrder(oursDoc, "", &got)
	keyOrder(theirsDoc, "", &wantOrder)
	if !slices.Equal(got, wantOrder) {
		t.Errorf("key structure differs:\n got  %s\n want %s", strings.Join(got, " "), strings.Join(wantOrder, " "))
	}
	if !reflect.DeepEqual(ours, want) {
		diffValues(t, "", ours, want)
	}
}

// TestHarnessConfigTemplateParity checks that the plugin's init template
// still equals the packaged default upstream; if it ever diverges, this
// package has to decide which one it follows.
func TestHarnessConfigTemplateParity(t *testing.T) {
	def := original(t, "cli/the_loop/harness-config.default.yaml")
	tmpl := original(t, "skills/the-loop/templates/harness-config.yaml")
	_, a := parse(t, def)
	_, b := parse(t, tmpl)
	if !reflect.DeepEqual(a, b) {
		diffValues(t, "", a, b)
	}
}

// diffValues reports every leaf where got and want differ.
func diffValues(t *testing.T, path string, got, want any) {
	t.Helper()
	gm, gok := got.(map[string]any)
	wm, wok := want.(map[string]any)
	if gok && wok {
		union := make(map[string]any, len(gm)+len(wm))
		for k := range gm {
			union[k] = nil
		}
		for k := range wm {
			union[k] = nil
		}
		for _, k := range sortedKeys(union) {
			diffValues(t, path+"/"+k, gm[k], wm[k])
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: got %#v, want %#v", path, got, want)
	}
}
