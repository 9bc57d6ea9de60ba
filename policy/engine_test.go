package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/graphs"
)

func TestEveryShippedLoopCompiles(t *testing.T) {
	for _, name := range graphs.Names {
		g, err := Loop(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if g.Name != name {
			t.Errorf("%s compiled as %q", name, g.Name)
		}
	}
	if _, err := Loop("pdlc-nope"); err == nil || !strings.Contains(err.Error(), "pdlc-work-item-loop, pdlc-pr-loop") {
		t.Errorf("unknown loop: %v", err)
	}
}

func TestOpenRefusesARepoThatIsNotADirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	for _, repo := range []string{file, filepath.Join(t.TempDir(), "missing")} {
		_, err := Open(Options{Repo: repo, Events: discard{}})
		var re *RepoError
		if !errors.As(err, &re) {
			t.Errorf("%s: got %v, want a RepoError", repo, err)
		}
	}
}

func TestTheRecordedLoopSelectsTheGraphOnlyForOuterLoops(t *testing.T) {
	root := t.TempDir()
	cases := map[string]string{
		"adhoc":   graph.AdhocLoop,
		"contrib": graph.ContributionLoop,
		"pr":      graph.WorkItemLoop, // the inner loop is never selected by name
		"forged":  graph.WorkItemLoop,
		"none":    graph.WorkItemLoop,
	}
	recorded := map[string]string{"adhoc": graph.AdhocLoop, "contrib": graph.ContributionLoop, "pr": graph.PRLoop, "forged": "evil-loop"}
	for id := range cases {
		dir := filepath.Join(root, "docs/specs", id)
		os.MkdirAll(dir, 0o755)
		if l, ok := recorded[id]; ok {
			os.WriteFile(filepath.Join(dir, graph.StateFile), []byte(`{"version": 1, "loop": "`+l+`"}`), 0o644)
		}
	}
	e, err := Open(Options{Repo: root, Events: discard{}})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range cases {
		rt, err := e.Runtime(id, Selector{})
		if err != nil || rt.Graph.Name != want {
			t.Errorf("%s: got %v, %v; want %s", id, rt, err, want)
		}
	}
	rt, _ := e.Runtime("none", Selector{PR: 7, PRRepo: "octo/lib"})
	if rt.Graph.Name != graph.PRLoop || rt.StateSubpath != "pr-loops/octo__lib/pr-7" || rt.PRRef != "github:octo/lib#7" {
		t.Errorf("inner loop: %s %s %s", rt.Graph.Name, rt.StateSubpath, rt.PRRef)
	}
}

// TestAnInnerLoopsRepositoryTheEngineCannotUseIsAnError: the engine does
// not trust its caller to have read --pr-repo: a repository name that
// graph.ParseRepoName refuses is an error, never the origin's pr-loops/pr-N
// nor a path built from it.
func TestAnInnerLoopsRepositoryTheEngineCannotUseIsAnError(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "docs/specs/issue-1"), 0o755)
	e, err := Open(Options{Repo: root, Events: discard{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, repo := range []string{"../../etc", "evil/..", "a/b/c", "acme//app", "-x/y", "acme/app.git", " acme/app"} {
		if rt, err := e.Runtime("issue-1", Selector{PR: 7, PRRepo: repo}); err == nil {
			t.Errorf("%q: state under %q, want an error", repo, rt.StateSubpath)
		}
		if step, err := e.Advance("issue-1", Selector{PR: 7, PRRepo: repo}, nil); err == nil {
			t.Errorf("%q: advanced to %+v, want an error", repo, step)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "docs/specs/issue-1/pr-loops")); !os.IsNotExist(err) {
		t.Errorf("pr-loops/ was made: %v", err)
	}
}

func TestCheckReportsInItemOrderAndWritesNothing(t *testing.T) {
	root := t.TempDir()
	writeBenchRepo(t, root, 12)
	before := snapshot(t, root)
	e, err := Open(Options{Repo: root, Events: discard{}})
	if err != nil {
		t.Fatal(err)
	}
	items, _ := e.Items()
	reps, err := e.Check(items, false, Selector{})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range reps {
		if r.WorkItem != items[i] {
			t.Fatalf("report %d is %s, want %s", i, r.WorkItem, items[i])
		}
	}
	if after := snapshot(t, root); after != before {
		t.Error("check changed the repository")
	}
}

func snapshot(t *testing.T, root string) string {
	var b strings.Builder
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			data, _ := os.ReadFile(p)
			b.WriteString(p + "\n" + string(data))
		}
		return nil
	})
	return b.String()
}
