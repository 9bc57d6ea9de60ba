package policy

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

// gitRepo writes files into a new git repository, commits them on main and
// branches off it; it returns the root and a git runner.
func gitRepo(t *testing.T, files map[string]string) (string, func(args ...string)) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	root := t.TempDir()
	writeFiles(t, root, files)
	git := gitIn(t, root)
	git("init", "-q", "-b", "main")
	git("add", ".")
	git("commit", "-q", "-m", "base")
	git("checkout", "-q", "-b", "change")
	return root, git
}

// gitIn runs git in root as a committer of its own, failing tb on error.
func gitIn(tb testing.TB, root string) func(args ...string) {
	return func(args ...string) {
		tb.Helper()
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, body := range files {
		writeFileIn(t, root, filepath.FromSlash(rel), []byte(body))
	}
}

func changedSelection(t *testing.T, root, base string) Selection {
	t.Helper()
	e, err := Open(Options{Repo: root, Base: base, Events: discard{}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.ChangedItems()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var fourItems = map[string]string{
	"docs/specs/issue-1/requirements.md": "# R\n",
	"docs/specs/issue-2/requirements.md": "# R\n",
	"docs/specs/issue-3/requirements.md": "# R\n",
	"docs/specs/issue-4/requirements.md": "# R\n",
	"docs/specs/README.md":               "# specs\n",
	"src/a.go":                           "package a\n",
}

func TestChangedItemsAreTheSpecFoldersAChangeTouches(t *testing.T) {
	root, git := gitRepo(t, fourItems)
	writeFiles(t, root, map[string]string{
		"docs/specs/issue-2/requirements.md": "# edited\n",
		"docs/specs/issue-3/new.md":          "untracked\n",
		"docs/specs/README.md":               "not an item\n",
		"src/a.go":                           "package a // edited\n",
	})
	git("rm", "-q", "-r", "docs/specs/issue-4")
	got := changedSelection(t, root, "main")
	want := Selection{Items: []string{"issue-2", "issue-3"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v: a deleted folder is no item, and a file beside the folders is none", got, want)
	}
}

func TestAChangeToTheGatesOwnFilesSelectsEveryItem(t *testing.T) {
	for _, p := range []string{".the-loop/harness-config.yaml", ".the-loop/hooks/lib.star", "tools/rules.star"} {
		t.Run(p, func(t *testing.T) {
			root, _ := gitRepo(t, fourItems)
			writeFiles(t, root, map[string]string{p: "# edited\n"})
			got := changedSelection(t, root, "main")
			if !got.All || got.Why != p || len(got.Items) != 4 {
				t.Errorf("got %+v, want every item, because of %s", got, p)
			}
		})
	}
}

func TestChangedItemsNeedABase(t *testing.T) {
	e, err := Open(Options{Repo: t.TempDir(), Events: discard{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.ChangedItems(); !errors.Is(err, ErrNoBase) {
		t.Errorf("got %v", err)
	}
}

const strictConfig = `version: "0.2.0"
workflow:
  specDir: specs
`

func TestRulesFromReadsTheRevisionsConfigWhateverTheCheckoutHolds(t *testing.T) {
	root, _ := gitRepo(t, map[string]string{
		".the-loop/harness-config.yaml": strictConfig,
		"specs/issue-1/requirements.md": "# R\n",
	})
	writeFiles(t, root, map[string]string{".the-loop/harness-config.yaml": "workflow: [broken\n"})
	if _, err := Open(Options{Repo: root, Events: discard{}}); err == nil {
		t.Fatal("control: the checkout's broken config opened")
	}
	e, err := Open(Options{Repo: root, RulesFrom: "main", Events: discard{}})
	if err != nil {
		t.Fatal(err)
	}
	if e.SpecDirRel() != "specs" || e.Harness.File() != "main:.the-loop/harness-config.yaml" {
		t.Errorf("spec dir %q from %q, want specs from main's config", e.SpecDirRel(), e.Harness.File())
	}
	if _, err := e.Check([]string{"issue-1"}, false, Selector{}); err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(e.Notes(), "\n")
	if !strings.Contains(notes, "this change edits the gate's own files (.the-loop/harness-config.yaml); it was judged by the rules of main") {
		t.Errorf("notes: %q", notes)
	}
}

func TestABrokenConfigInTheRevisionIsAConfigErrorNamingIt(t *testing.T) {
	root, git := gitRepo(t, map[string]string{".the-loop/harness-config.yaml": "workflow: [broken\n"})
	git("checkout", "-q", "main")
	_, err := Open(Options{Repo: root, RulesFrom: "main", Events: discard{}})
	var ce *graph.ConfigError
	if !errors.As(err, &ce) || ce.File != "main:.the-loop/harness-config.yaml" {
		t.Errorf("got %v, want a config error naming main's file", err)
	}
}

func TestNoGateEditNoNote(t *testing.T) {
	root, _ := gitRepo(t, map[string]string{".the-loop/harness-config.yaml": strictConfig, "specs/issue-1/requirements.md": "# R\n"})
	e, err := Open(Options{Repo: root, RulesFrom: "main", Events: discard{}})
	if err != nil {
		t.Fatal(err)
	}
	e.Check([]string{"issue-1"}, false, Selector{})
	if n := e.Notes(); len(n) != 0 {
		t.Errorf("notes %q, want none: the checkout's gate files are main's", n)
	}
}

func TestUnderRulesFromAHookPathInsideTheCheckoutIsRefused(t *testing.T) {
	root, _ := gitRepo(t, map[string]string{
		".the-loop/harness-config.yaml": "graph:\n  hooks:\n    modules:\n      - module: acme.rules\n    attach: []\n",
		"hooks/acme/rules.star":         "hook(\"x-a\", lambda ctx: ok())\n",
		"specs/README.md":               "x\n",
	})
	t.Setenv("THE_LOOP_HOOK_PATH", filepath.Join(root, "hooks"))
	e, err := Open(Options{Repo: root, RulesFrom: "main", Events: discard{}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Graph(graph.WorkItemLoop)
	var ce *graph.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(ce.Msg, "is inside the checkout under review") {
		t.Errorf("got %v, want the hook path refused", err)
	}
	// Outside --rules-from the checkout's modules are the rules anyway.
	e, _ = Open(Options{Repo: root, Events: discard{}})
	if _, err := e.Graph(graph.WorkItemLoop); err != nil {
		t.Errorf("without --rules-from: %v", err)
	}
}

func TestManyItemsStatesAreReadFromTheRevisionAtOnceAndStillWin(t *testing.T) {
	files := map[string]string{}
	const n = oneByOne + 4
	for i := range n {
		dir := fmt.Sprintf("docs/specs/issue-%d/", i)
		files[dir+"requirements.md"] = "---\nstatus: draft\n---\n# R\n"
		files[dir+"graph-state.json"] = `{"currentNode": "requirements-definition", "decisions": {"phase-selection": {"at": "2026-01-01T00:00:00+00:00"}}}`
	}
	root, _ := gitRepo(t, files)
	back := map[string]string{}
	for i := range n {
		back[fmt.Sprintf("docs/specs/issue-%d/graph-state.json", i)] = `{"currentNode": "phase-selection", "decisions": {"phase-selection": {"at": "2026-01-01T00:00:00+00:00"}}}`
	}
	writeFiles(t, root, back)
	e, err := Open(Options{Repo: root, RulesFrom: "main", Events: discard{}})
	if err != nil {
		t.Fatal(err)
	}
	items, _ := e.Items()
	reps, err := e.Check(items, false, Selector{})
	if err != nil {
		t.Fatal(err)
	}
	if e.rules.stateFiles == nil {
		t.Fatal("the states were read one by one")
	}
	for _, r := range reps {
		if !r.Blocked() {
			t.Errorf("%s: the pointer moved back hid the block", r.WorkItem)
		}
	}
}
