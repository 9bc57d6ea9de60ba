package main

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// theOriginalsKeys are the keys the original tool's `graph hooks --format
// json` prints; ourAddedKeys are the ones docs/compatibility.md#graph-hooks
// says we add beside them. A key in neither is a departure nobody wrote
// down.
var (
	theOriginalsKeys = []string{"attach", "modules", "shipped"}
	ourAddedKeys     = []string{"errors", "executed", "repoHooks", "warnings"}
)

// TestGraphHooksJSONKeepsTheOriginalsShape re-expresses the original's
// test_the_operator_can_inspect_without_importing: a repository whose
// module would fail if it were ever run is listed, exit 0, with modules and
// attach in exactly the original's shapes and the shipped hooks beside
// them.
func TestGraphHooksJSONKeepsTheOriginalsShape(t *testing.T) {
	for _, c := range []struct {
		name        string
		hooks       string
		wantModules []any
		wantAttach  []any
	}{{
		name: "a repository file and an attachment without parameters, as the original's test declares them",
		hooks: `    modules:
      - path: .the-loop/hooks/house.star
    attach:
      - hook: x-licence-header
        node: complete
`,
		wantModules: []any{map[string]any{"path": ".the-loop/hooks/house.star", "module": ""}},
		wantAttach:  []any{map[string]any{"hook": "x-licence-header", "node": "complete", "boundary": "exit", "with": map[string]any{}}},
	}, {
		name: "a dotted module, a boundary and parameters",
		hooks: `    modules:
      - module: acme.compliance
    attach:
      - {hook: x-arch-signoff, node: design, boundary: exit, with: {board: platform, quorum: 2}}
`,
		wantModules: []any{map[string]any{"path": "", "module": "acme.compliance"}},
		wantAttach: []any{map[string]any{"hook": "x-arch-signoff", "node": "design", "boundary": "exit",
			"with": map[string]any{"board": "platform", "quorum": 2.0}}},
	}, {
		name:        "nothing declared lists empty lists, not nulls",
		wantModules: []any{},
		wantAttach:  []any{},
	}} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			harness := "version: \"0.2.0\"\n"
			if c.hooks != "" {
				harness += "graph:\n  hooks:\n" + c.hooks
			}
			writeFiles(t, root, map[string]string{
				".the-loop/harness-config.yaml": harness,
				".the-loop/hooks/house.star":    "fail(\"never run me\")\n",
			})
			stdout, stderr, code := runCLI(t, nil, "graph", "hooks", "--repo", root, "--format", "json")
			if code != 0 {
				t.Fatalf("exit %d, want 0; stderr:\n%s\nstdout:\n%s", code, stderr, stdout)
			}
			var report map[string]any
			if err := json.Unmarshal([]byte(stdout), &report); err != nil {
				t.Fatalf("%v:\n%s", err, stdout)
			}
			if got, want := slices.Sorted(maps.Keys(report)), slices.Sorted(slices.Values(append(slices.Clone(theOriginalsKeys), ourAddedKeys...))); !slices.Equal(got, want) {
				t.Errorf("keys %v, want %v", got, want)
			}
			if !reflect.DeepEqual(report["modules"], c.wantModules) {
				t.Errorf("modules = %#v, want %#v", report["modules"], c.wantModules)
			}
			if !reflect.DeepEqual(report["attach"], c.wantAttach) {
				t.Errorf("attach = %#v, want %#v", report["attach"], c.wantAttach)
			}
			shipped, _ := report["shipped"].([]any)
			names := make([]string, len(shipped))
			for i, s := range shipped {
				names[i], _ = s.(string)
			}
			if !slices.Contains(names, "validate-artifacts") || !slices.IsSorted(names) {
				t.Errorf("shipped = %v, want the shipped hooks sorted, validate-artifacts among them", names)
			}
		})
	}
}

// TestGraphHooksOnTheDemoMatchesTheGolden holds the listing of the demo's
// declaration, as text and as JSON, to its golden files.
func TestGraphHooksOnTheDemoMatchesTheGolden(t *testing.T) {
	for format, name := range map[string]string{"text": "demo-hooks.text", "json": "demo-hooks.json"} {
		t.Run(format, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, nil, "graph", "hooks", "--repo", filepath.Clean(demo), "--format", format)
			if code != 0 {
				t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr)
			}
			golden(t, name, stdout)
		})
	}
}
