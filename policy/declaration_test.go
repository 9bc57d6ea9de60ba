package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

func harnessWith(t testing.TB, body string) (*HarnessConfig, error) {
	t.Helper()
	root := t.TempDir()
	p := filepath.Join(root, ConfigDir, HarnessConfigFile)
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte(body), 0o644)
	return LoadHarnessConfig(root)
}

func TestReadDeclaration(t *testing.T) {
	hc, err := harnessWith(t, `graph:
  hooks:
    modules:
      - path: .the-loop/hooks/house_rules.star
      - module: acme.compliance
    attach:
      - {hook: x-licence-header, node: implementation}
      - {hook: x-arch-signoff, node: design, boundary: entry, with: {board: platform}}
`)
	if err != nil {
		t.Fatal(err)
	}
	d, err := ReadDeclaration(hc)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Modules) != 2 || d.Modules[0].Path != ".the-loop/hooks/house_rules.star" || d.Modules[1].Module != "acme.compliance" || d.Modules[0].Line != 4 {
		t.Errorf("modules: %+v", d.Modules)
	}
	if len(d.Attach) != 2 || d.Attach[0].Boundary != "exit" || d.Attach[1].Boundary != "entry" || d.Attach[1].With["board"] != "platform" || d.Attach[1].Line != 8 {
		t.Errorf("attach: %+v", d.Attach)
	}
	other, _ := harnessWith(t, "graph:\n  hooks:\n    modules:\n      - path: other.star\n")
	od, _ := ReadDeclaration(other)
	if d.Digest() == od.Digest() || d.Digest() != d.Digest() {
		t.Error("digests do not tell declarations apart")
	}
}

func TestAnAbsentDeclarationIsEmpty(t *testing.T) {
	for _, body := range []string{"workflow:\n  specDir: docs/specs\n", "graph:\n  hooks: {}\n", "graph: {}\n"} {
		hc, err := harnessWith(t, body)
		if err != nil {
			t.Fatal(err)
		}
		if d, err := ReadDeclaration(hc); err != nil || !d.Empty() {
			t.Errorf("%q: got %+v, %v", body, d, err)
		}
	}
}

// TestEveryMalformedDeclarationIsAConfigError is the seed's error table, for
// the rows a declaration can be refused on without executing anything. Each
// names the file, the line and the rule broken.
func TestEveryMalformedDeclarationIsAConfigError(t *testing.T) {
	cases := []struct {
		name, body string
		line       int
		want       string
	}{
		{"hooks not a mapping", "graph:\n  hooks: [a]\n", 2, "want"},
		{"modules not a list", "graph:\n  hooks:\n    modules: {path: a.star}\n", 3, ""},
		{"neither path nor module", "graph:\n  hooks:\n    modules:\n      - {}\n", 4, "name exactly one of path"},
		{"both path and module", "graph:\n  hooks:\n    modules:\n      - {path: a.star, module: a}\n", 4, "name exactly one of path"},
		{"absolute path", "graph:\n  hooks:\n    modules:\n      - path: /etc/hooks.star\n", 4, "is absolute"},
		{"escaping path", "graph:\n  hooks:\n    modules:\n      - path: ../other-repo/hooks.star\n", 4, "leaves the repository"},
		{"a python module", "graph:\n  hooks:\n    modules:\n      - path: .the-loop/hooks/rules.py\n", 4, "port it to a .star file"},
		{"not star", "graph:\n  hooks:\n    modules:\n      - path: rules.txt\n", 4, "is not a .star file"},
		{"bad dotted name", "graph:\n  hooks:\n    modules:\n      - module: acme..compliance\n", 4, "not a dotted module name"},
		// What the loader would refuse is refused here, at its line.
		{"a module name the loader refuses", "graph:\n  hooks:\n    modules:\n      - module: acme-rules.v2\n", 4, "not a dotted module name"},
		{"attach without hook", "graph:\n  hooks:\n    modules: [{path: a.star}]\n    attach:\n      - {node: design}\n", 5, ""},
		{"attach a shipped name", "graph:\n  hooks:\n    modules: [{path: a.star}]\n    attach:\n      - {hook: validate-artifacts, node: design}\n", 5, ""},
		{"bad boundary", "graph:\n  hooks:\n    modules: [{path: a.star}]\n    attach:\n      - {hook: x-a, node: design, boundary: middle}\n", 5, ""},
		{"attach without modules", "graph:\n  hooks:\n    attach:\n      - {hook: x-a, node: design}\n", 3, "declares no modules"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hc, err := harnessWith(t, c.body)
			if err == nil {
				_, err = ReadDeclaration(hc)
			}
			var ce *graph.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want a ConfigError", err)
			}
			if ce.File != ".the-loop/harness-config.yaml" || ce.Line != c.line || !strings.Contains(ce.Key, "graph.hooks") {
				t.Errorf("got file %q line %d key %q, want line %d: %v", ce.File, ce.Line, ce.Key, c.line, err)
			}
			if c.want != "" && !strings.Contains(err.Error(), c.want) {
				t.Errorf("%q does not say %q", err, c.want)
			}
		})
	}
}

func FuzzReadDeclaration(f *testing.F) {
	f.Add("graph:\n  hooks:\n    modules:\n      - path: a.star\n    attach:\n      - {hook: x-a, node: design}\n")
	f.Add("graph:\n  hooks:\n    modules: [{module: a.b}]\n")
	f.Fuzz(func(t *testing.T, body string) {
		hc, err := harnessWith(t, body)
		if err != nil {
			return
		}
		d, err := ReadDeclaration(hc)
		if err == nil {
			_ = d.Digest()
		}
	})
}
