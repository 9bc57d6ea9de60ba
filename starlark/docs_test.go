package starlark

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	sl "go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/the-loop/the-loop/graph"
)

// The author's guide, docs/extending.md, is held to the code: its tables
// name what exists, everything that exists is in its tables, and the files
// its tutorial shows are the tutorial repository's, byte for byte.

const guide = "../docs/extending.md"

func readGuide(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(guide)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// tableNames are the backquoted names in the first cell of the rows of
// the markdown tables in doc, as written: "ctx.repo.read(path)",
// "hook(name, impl)"; "json" and "math" from "`json`, `math`".
func tableNames(doc string) []string {
	row := regexp.MustCompile("(?m)^\\| (`[^|]+`) \\|")
	name := regexp.MustCompile("`([^`]+)`")
	var out []string
	for _, m := range row.FindAllStringSubmatch(doc, -1) {
		for _, n := range name.FindAllStringSubmatch(m[1], -1) {
			out = append(out, n[1])
		}
	}
	return out
}

// documented reports whether the guide's table rows name prefix+name,
// called or not.
func documented(names []string, prefix, name string) bool {
	return slices.ContainsFunc(names, func(n string) bool {
		return n == prefix+name || strings.HasPrefix(n, prefix+name+"(")
	})
}

// rowOf is the text of the table row that opens with `name`.
func rowOf(doc, name string) string {
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "| `"+name+"`") {
			return line
		}
	}
	return ""
}

func TestTheGuideDocumentsEveryCtxAttributeAndNothingElse(t *testing.T) {
	doc := readGuide(t)
	names := tableNames(doc)
	for _, attr := range ctxAttrs {
		if attr == "repo" {
			continue // documented by its functions
		}
		if !documented(names, "ctx.", attr) {
			t.Errorf("ctx.%s exists and the guide's ctx table does not name it", attr)
		}
	}
	repo := newRepoValue(nil, false, newCallState("docs", DefaultLimits, nil))
	for _, fn := range repo.AttrNames() {
		if !documented(names, "ctx.repo.", fn) {
			t.Errorf("ctx.repo.%s exists and the guide's ctx table does not name it", fn)
		}
	}
	for _, n := range names {
		rest, ok := strings.CutPrefix(n, "ctx.")
		if !ok {
			continue
		}
		attr, _, _ := strings.Cut(rest, "(")
		parts := strings.Split(attr, ".")
		switch {
		case len(parts) == 1 && slices.Contains(ctxAttrs, parts[0]):
		case len(parts) == 2 && parts[0] == "repo" && slices.Contains(repo.AttrNames(), parts[1]):
		default:
			t.Errorf("the guide documents %s, which ctx does not have", n)
		}
	}
}

// TestTheGuideListsTheFieldsCtxHas checks the fields the ctx table lists
// for the structs it describes against the structs a hook gets.
func TestTheGuideListsTheFieldsCtxHas(t *testing.T) {
	doc := readGuide(t)
	n := &graph.Node{ID: "n"}
	cases := map[string]sl.Value{
		"ctx.node":      nodeValue(n),
		"ctx.work_item": (&ctxValue{gctx: &graph.Context{}}).mustBuild(t, "work_item"),
		"ctx.results":   mustResult(t),
	}
	field := regexp.MustCompile("`([a-z_]+)`")
	for name, v := range cases {
		row := rowOf(doc, name)
		if row == "" {
			t.Errorf("the guide has no row for %s", name)
			continue
		}
		_, what, _ := strings.Cut(row[3:], "` |")
		var listed []string
		for _, m := range field.FindAllStringSubmatch(what, -1) {
			listed = append(listed, m[1])
		}
		have := v.(*starlarkstruct.Struct).AttrNames()
		for _, f := range have {
			if !slices.Contains(listed, f) {
				t.Errorf("%s.%s exists and the guide does not list it", name, f)
			}
		}
		for _, f := range listed {
			if !slices.Contains(have, f) {
				t.Errorf("the guide lists %s.%s, which does not exist", name, f)
			}
		}
	}
}

func (c *ctxValue) mustBuild(t *testing.T, name string) sl.Value {
	v, err := c.build(name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustResult(t *testing.T) sl.Value {
	v, err := resultValue(graph.Pass("x", nil))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestTheGuideDocumentsTheAPIAModuleCalls(t *testing.T) {
	doc := readGuide(t)
	names := tableNames(doc)
	env := predeclared()
	universal := universe()
	for name := range env {
		if strings.HasPrefix(name, "$") || universal.Has(name) && name != "struct" {
			continue // the hidden operators; Starlark's own universe
		}
		if !documented(names, "", name) {
			t.Errorf("%s is predeclared and the guide's API table does not name it", name)
		}
	}
	for _, n := range names {
		name, _, _ := strings.Cut(n, "(")
		if strings.Contains(name, ".") {
			continue // ctx.*, t.*, repo.item
		}
		if name != "load" && !env.Has(name) {
			t.Errorf("the guide documents %s, which a module cannot call", n)
		}
	}
}

func TestTheGuideDocumentsEveryMethodOfT(t *testing.T) {
	names := tableNames(readGuide(t))
	for _, m := range testerAttrs {
		if !documented(names, "t.", m) {
			t.Errorf("t.%s exists and the guide's rule test table does not name it", m)
		}
	}
	for _, n := range names {
		if rest, ok := strings.CutPrefix(n, "t."); ok {
			m, _, _ := strings.Cut(rest, "(")
			if !slices.Contains(testerAttrs, m) {
				t.Errorf("the guide documents %s, which t does not have", n)
			}
		}
	}
	if !documented(names, "repo.", "item") {
		t.Error("repo.item exists and the guide does not name it")
	}
}

// TestTheTutorialShowsTheTutorialRepositorysFiles compares each block the
// guide marks with <!-- file: PATH --> with testdata/repos/tutorial/PATH.
func TestTheTutorialShowsTheTutorialRepositorysFiles(t *testing.T) {
	doc := readGuide(t)
	block := regexp.MustCompile("(?s)<!-- file: ([^ ]+) -->\n```[a-z]*\n(.*?)```\n")
	found := block.FindAllStringSubmatch(doc, -1)
	if len(found) < 3 {
		t.Fatalf("the guide shows %d tutorial files, want the module, its test and the config", len(found))
	}
	for _, m := range found {
		want, err := os.ReadFile(filepath.Join("..", "testdata", "repos", "tutorial", m[1]))
		if err != nil {
			t.Errorf("the guide shows %s: %v", m[1], err)
			continue
		}
		if m[2] != string(want) {
			t.Errorf("the guide's %s differs from testdata/repos/tutorial/%s", m[1], m[1])
		}
	}
}
