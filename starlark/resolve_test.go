package starlark

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

func TestResolveFindsEveryModuleAndEveryFaultWithoutExecuting(t *testing.T) {
	outside := writeTree(t, map[string]string{"evil.star": "hook(\"x-evil\", lambda ctx: ok())\n"})
	hookPath := writeTree(t, map[string]string{"acme/compliance.star": "fail(\"executed\")\n"})
	repo := writeTree(t, map[string]string{
		"rules.star": "fail(\"executed\")\n",
		"dir.star/x": "",
	})
	os.Symlink(outside, filepath.Join(repo, "linked"))
	at := func(line int, m Module) Module { m.File, m.Line = "h.yaml", line; return m }
	modules := []Module{
		at(1, Module{Path: "rules.star"}),
		at(2, Module{Path: "gone.star"}),
		at(3, Module{Path: "linked/evil.star"}),
		at(4, Module{Path: "dir.star"}),
		at(5, Module{Dotted: "acme.compliance"}),
		at(6, Module{Dotted: "acme.missing"}),
		at(7, Module{Path: "./rules.star"}),
	}
	files, faults := Resolve(modules, Options{Repo: repo, HookPath: []string{hookPath}})
	want := []string{"rules.star", "", "", "", filepath.Join(hookPath, "acme/compliance.star"), "", ""}
	if !slices.Equal(files, want) {
		t.Errorf("files: got %q, want %q", files, want)
	}
	var lines []int
	for _, err := range faults {
		var ce *graph.ConfigError
		if !errors.As(err, &ce) || ce.File != "h.yaml" {
			t.Fatalf("got %v, want a ConfigError at the declaration", err)
		}
		lines = append(lines, ce.Line)
	}
	if !slices.Equal(lines, []int{2, 3, 4, 6, 7}) {
		t.Errorf("faults at lines %v, want 2, 3, 4, 6, 7: %v", lines, faults)
	}
	contains(t, "missing", faults[0].Error(), "no such file in the repository")
	contains(t, "linked", faults[1].Error(), "resolves outside the repository through a symbolic link")
	contains(t, "directory", faults[2].Error(), "not a regular file")
	contains(t, "hook path", faults[3].Error(), "acme/missing.star is not on the hook path")
	contains(t, "twice", faults[4].Error(), "declared twice (also at h.yaml:1)")
}
