package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/the-loop/the-loop/graph"
)

// fixtureRepo is a repository some test of the tree evaluates.
// fixtureWalkEnv is set in the process the fixture walk runs in.
const fixtureWalkEnv = "THE_LOOP_TEST_FIXTURE_WALK"

type fixtureRepo struct {
	name, root string
}

// repoMarker is a file that makes the directory before it a repository:
// its harness config, or a work item's spec folder.
var repoMarker = regexp.MustCompile(`^(?:(.*)/)?(?:\.the-loop/harness-config\.yaml|docs/specs/[^/]+/.+)$`)

// fixtureRepos are every repository in the tree's fixtures: the demo,
// those under testdata/repos, and those the testscript scripts hold in
// their archives (as the archive has them, before a script's commands
// change anything), each written to a directory of its own.
func fixtureRepos(t *testing.T) []fixtureRepo {
	t.Helper()
	repos := []fixtureRepo{{"examples/demo", demo}}
	shared, err := os.ReadDir(filepath.Join("..", "..", "testdata", "repos"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range shared {
		if d.IsDir() {
			repos = append(repos, fixtureRepo{"testdata/repos/" + d.Name(), filepath.Join("..", "..", "testdata", "repos", d.Name())})
		}
	}
	scripts, err := filepath.Glob(filepath.Join("..", "..", "testdata", "script", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scripts {
		a, err := txtar.ParseFile(s)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		roots := map[string]bool{}
		for _, f := range a.Files {
			if !filepath.IsLocal(f.Name) {
				t.Fatalf("%s: %s is not a path inside the archive", s, f.Name)
			}
			if m := repoMarker.FindStringSubmatch(f.Name); m != nil {
				roots[path.Clean("./"+m[1])] = true
			}
			p := filepath.Join(dir, filepath.FromSlash(f.Name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, r := range slices.Sorted(func(yield func(string) bool) {
			for r := range roots {
				if !yield(r) {
					return
				}
			}
		}) {
			repos = append(repos, fixtureRepo{filepath.Base(s) + ":" + r, filepath.Join(dir, filepath.FromSlash(r))})
		}
	}
	return repos
}

// verdicts are check's JSON list as far as it may not depend on
// --all-findings: every item's position and OK, every node's verdict, and
// the findings of the hooks that ran as they always do.
type verdicts []struct {
	WorkItem    string `json:"workItem"`
	CurrentNode string `json:"currentNode"`
	OK          bool   `json:"ok"`
	Error       string `json:"error"`
	Nodes       []struct {
		Node     string          `json:"node"`
		Status   string          `json:"status"`
		Outcome  string          `json:"outcome"`
		Messages []string        `json:"messages"`
		Forced   bool            `json:"forced"`
		Attempts int             `json:"attempts"`
		Reached  bool            `json:"reached"`
		Findings []graph.Finding `json:"findings"`
	} `json:"nodes"`
}

// withoutReportOnly drops the report-only findings, counting them, and
// fails on one that is an error or at a node not reached.
func (v verdicts) withoutReportOnly(t *testing.T, name string) int {
	t.Helper()
	n := 0
	for i := range v {
		for j := range v[i].Nodes {
			node := &v[i].Nodes[j]
			node.Findings = slices.DeleteFunc(node.Findings, func(f graph.Finding) bool {
				if !f.ReportOnly {
					return false
				}
				n++
				if f.Severity == graph.SeverityError || !node.Reached || !graph.IsExtension(f.Hook) {
					t.Errorf("%s: %s at %s: report-only finding %+v is an error, at a node not reached, or a shipped hook's", name, v[i].WorkItem, node.Node, f)
				}
				return true
			})
		}
	}
	return n
}

// TestAllFindingsChangesNoVerdictOnAnyFixture runs check on every fixture
// repository of the tree, with and without --all-findings, under each
// --fail-on and --recompute, and requires the same exit code, stderr and
// verdicts: every item's OK and position, every node's status, outcome
// and messages, and every finding but the report-only ones, which must be
// warnings of repository hooks at reached nodes.
func TestAllFindingsChangesNoVerdictOnAnyFixture(t *testing.T) {
	// The walk runs the abuse scripts' memory bombs in process, and a
	// process's peak is inherited by every child it starts afterwards
	// (Linux counts it into a vforked child's high-water mark): run here,
	// the attack tests' limits would measure this walk, not the binary.
	// So it runs in a process of its own.
	if os.Getenv(fixtureWalkEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
		cmd.Env = append(os.Environ(), fixtureWalkEnv+"=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the walk failed: %v\n%s", err, out)
		}
		return
	}
	repos := fixtureRepos(t)
	if len(repos) < 20 {
		t.Fatalf("found %d fixture repositories; the walk is broken", len(repos))
	}
	// A hook that spins is stopped by its step budget, the same in both
	// runs, and never by a wall clock a loaded machine may reach first.
	cfg := filepath.Join(t.TempDir(), "cli-config.yaml")
	if err := os.WriteFile(cfg, []byte("routing:\n  graph:\n    hookLimits:\n      seconds: 600\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reportOnly := map[string]int{}
	for _, r := range repos {
		for _, extra := range [][]string{nil, {"--fail-on", "block"}, {"--recompute"}} {
			args := append([]string{"check", "--all", "--repo", r.root, "--config", cfg, "--format", "json"}, extra...)
			name := r.name + " " + strings.Join(extra, " ")
			outA, errA, codeA := runCLI(t, nil, args...)
			outB, errB, codeB := runCLI(t, nil, append(args, "--all-findings")...)
			if codeA != codeB || errA != errB {
				t.Errorf("%s: exit %d, stderr %q without --all-findings; exit %d, stderr %q with it", name, codeA, errA, codeB, errB)
				continue
			}
			if codeA == 2 && !strings.HasPrefix(outA, "[") {
				// Could not run at all: the error, said the same way.
				if outA != outB {
					t.Errorf("%s: could not run, and said it differently:\n%s\n%s", name, outA, outB)
				}
				continue
			}
			var without, with verdicts
			if err := json.Unmarshal([]byte(outA), &without); err != nil {
				t.Errorf("%s: %v in\n%s", name, err, outA)
				continue
			}
			if err := json.Unmarshal([]byte(outB), &with); err != nil {
				t.Errorf("%s: %v in\n%s", name, err, outB)
				continue
			}
			if n := without.withoutReportOnly(t, name); n != 0 {
				t.Errorf("%s: %d report-only finding(s) without the flag", name, n)
			}
			reportOnly[r.name] += with.withoutReportOnly(t, name)
			if !reflect.DeepEqual(with, without) {
				t.Errorf("%s: the verdicts differ:\nwithout %+v\n   with %+v", name, without, with)
			}
		}
	}
	t.Logf("%d fixture repositories; report-only findings: %v", len(repos), reportOnly)
	// The walk must reach the fixtures whose chains stop before their
	// repository's rules, or it would prove nothing.
	for _, must := range []string{"testdata/repos/findings", "examples/demo"} {
		if reportOnly[must] == 0 {
			t.Errorf("%s: no report-only finding with --all-findings; want some", must)
		}
	}
}

// findingsRepo is testdata/repos/findings: repository rules behind a
// shipped block and behind a human wait, on a node's entry chain and past
// the pointer.
var findingsRepo = filepath.Join("..", "..", "testdata", "repos", "findings")

// TestAllFindingsInEveryFormat holds each format's rendering of
// report-only findings and of the hooks that did not run to its golden
// file (go test -run TestAllFindingsInEveryFormat -update rewrites them).
func TestAllFindingsInEveryFormat(t *testing.T) {
	for _, c := range []struct {
		format, golden string
		extra          []string
	}{
		{"text", "findings-all.text", []string{"-v"}},
		{"json", "findings-all.json", nil},
		{"github", "findings-all.github", nil},
		{"sarif", "findings-all.sarif", nil},
		{"junit", "findings-all.junit.xml", nil},
	} {
		t.Run(c.format, func(t *testing.T) {
			args := append([]string{"check", "--all", "--repo", findingsRepo, "--all-findings", "--format", c.format}, c.extra...)
			stdout, stderr, code := runCLI(t, nil, args...)
			if code != 1 {
				t.Fatalf("exit %d, want 1 (both items unmet, with or without the flag); stderr:\n%s", code, stderr)
			}
			golden(t, c.golden, junitTimeless(stdout))
		})
	}
}
