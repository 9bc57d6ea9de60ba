package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// demo is the bundled example repository: four work items, a block, two
// human waits and a repository rule's warning.
var demo = filepath.Join("..", "..", "examples", "demo")

// runCLI runs the-loop in-process with an environment of its own: no
// operator config, no GitHub Actions variables leaking in from a CI that
// runs these tests, and no shell asking for completions.
func runCLI(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	for _, k := range []string{"THE_LOOP_CLI_CONFIG", "THE_LOOP_HOOK_PATH", "GITHUB_STEP_SUMMARY",
		"GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_SHA", "GITHUB_WORKSPACE", "COMP_LINE", "COMP_POINT"} {
		t.Setenv(k, env[k])
	}
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return out.String(), errb.String(), code
}

// golden compares got with testdata/golden/name, or rewrites it under
// -update.
func golden(t *testing.T, name string, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test ./cmd/the-loop -run %s -update rewrites it):\n--- got\n%s\n--- want\n%s", name, t.Name(), got, want)
	}
}

// demoReport is check --all on the demo in format, which must answer 1:
// one item is blocked.
func demoReport(t *testing.T, env map[string]string, format string, extra ...string) string {
	t.Helper()
	args := append([]string{"check", "--all", "--repo", demo, "--format", format}, extra...)
	stdout, stderr, code := runCLI(t, env, args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr)
	}
	return stdout
}

func contains(s, sub string) bool { return bytes.Contains([]byte(s), []byte(sub)) }
