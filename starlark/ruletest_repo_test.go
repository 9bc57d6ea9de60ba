package starlark

import (
	"os"
	"path/filepath"
	"testing"
)

// runTestSource runs one rule test file whose source is src with the
// default limits, and returns the failures of its one test and what the
// runner was asked.
func runTestSource(t *testing.T, src string) ([]TestFailure, *fakeRunner) {
	t.Helper()
	return runTestSourceWith(t, src, DefaultLimits)
}

func runTestSourceWith(t *testing.T, src string, limits Limits) ([]TestFailure, *fakeRunner) {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "repo_test.star"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	runner := &fakeRunner{}
	rep, err := RunTests([]string{"repo_test.star"}, runner, TestOptions{Options: Options{Repo: root, Limits: limits}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Files) != 1 || rep.Files[0].Err != "" || len(rep.Files[0].Tests) != 1 {
		t.Fatalf("report %+v, want one file of one test", rep.Files)
	}
	return rep.Files[0].Tests[0].Failures, runner
}

func TestATestsRepositoryIsHeldToACheckoutsLimitsBeforeAnythingIsCopied(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"many references to one string past a file's limit",
			`big = "x" * (16 << 20)
    t.repo(files = {"f%d.md" % i: big for i in range(12)})`,
			[]string{`t.repo: test test_it: "f0.md": 16777216 bytes exceed the limit of 4 MiB a file`}},
		{"bytes past a file's limit",
			`t.repo(files = {"a.bin": b"x" * (5 << 20)})`,
			[]string{`t.repo: test test_it: "a.bin": 5242880 bytes exceed the limit of 4 MiB a file`}},
		{"references to one string under a file's limit past the total",
			`s = "x" * (3 << 20)
    t.repo(files = {"f%d.md" % (10 + i): s for i in range(12)})`,
			[]string{"t.repo: test test_it:", "the test's repository comes to more than its limit of 32 MiB in all"}},
		{"many empty files with long paths past the total",
			`d = "d" * 250
    t.repo(files = {"%s/%d" % (d, i): "" for i in range(120000)})`,
			[]string{"t.repo: test test_it:", "comes to more than its limit of 32 MiB in all"}},
		{"a path past what the kernel takes",
			`t.repo(files = {"a/" * 3000 + "f.md": "ok"})`,
			[]string{"t.repo: test test_it: a/a/a/", "a path of 6004 bytes exceeds the limit of 4095"}},
		{"an item's artifacts past a file's limit",
			`t.repo().item("issue-1", artifacts = {"spec.md": "x" * (8 << 20)})`,
			[]string{`repo.item: test test_it: "issue-1/spec.md": 8388608 bytes exceed the limit of 4 MiB a file`}},
		{"an item's artifacts past what the repository holds",
			`s = "x" * (3 << 20)
    r = t.repo(files = {"f%d" % i: s for i in range(8)})
    r.item("issue-1", artifacts = {"a%d.md" % i: s for i in range(4)})`,
			[]string{"repo.item: test test_it:", "comes to more than its limit of 32 MiB in all"}},
		{"an item's state past a state file's limit",
			`t.repo().item("issue-1", state = {"decisions": ["x" * (1 << 20)] * 5})`,
			[]string{"repo.item: test test_it: state: would write more than 4 MiB, the limit of a state file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fails, runner := runTestSource(t, "def test_it(t):\n    "+tc.body+"\n")
			if len(fails) != 1 {
				t.Fatalf("failures %+v, want the one error", fails)
			}
			contains(t, "the error", fails[0].Msg, append([]string{"error: "}, tc.want...)...)
			if len(runner.asked) != 0 {
				t.Errorf("the runner was asked %d times", len(runner.asked))
			}
		})
	}
}

func TestATestsRepositoryWithinTheLimitsHoldsEveryFile(t *testing.T) {
	fails, runner := runTestSource(t, `def test_it(t):
    s = "ok" * (1 << 19)
    r = t.repo(files = {"f%d.md" % (10 + i): s for i in range(12)})
    r.item("issue-1", artifacts = {"spec.md": b"ok"}, state = {"decisions": ["ok"] * 1000})
    t.run("x-any", r.item("issue-2"))
`)
	if len(runner.asked) != 1 {
		t.Fatalf("the runner was asked %d times, want once; failures %+v", len(runner.asked), fails)
	}
	req := runner.asked[0]
	if len(req.Files) != 12 || len(req.Files["f21.md"]) != 1<<20 {
		t.Errorf("the run saw %d files, f21.md of %d bytes; want 12 of 1 MiB", len(req.Files), len(req.Files["f21.md"]))
	}
	if len(req.Items) != 2 || req.Items[0].Artifacts["spec.md"] != "ok" {
		t.Errorf("items %+v", req.Items)
	}
}

func TestEachRunOfALargeRepositoryIsPaidFor(t *testing.T) {
	limits := DefaultLimits
	limits.Steps = 1_000_000
	fails, runner := runTestSourceWith(t, `def test_it(t):
    s = "x" * (3 << 20)
    item = t.repo(files = {"f%d" % i: s for i in range(8)}).item("issue-1", artifacts = {"a.md": s})
    for i in range(100000):
        t.run("x-any", item)
`, limits)
	if len(fails) != 1 {
		t.Fatalf("failures %+v, want the step budget's", fails)
	}
	contains(t, "the failure", fails[0].Msg, "test test_it exceeded its step budget of 1000000 steps")
	// 27 MiB a run, a step a KiB: about 37 runs fit the budget.
	if n := len(runner.asked); n < 10 || n > 100 {
		t.Errorf("%d runs before the budget was spent", n)
	}
}
