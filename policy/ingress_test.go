package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/the-loop/the-loop/graph"
)

// gitOrigin gives root a git config whose origin is url.
func gitOrigin(t *testing.T, root, url string) {
	t.Helper()
	os.MkdirAll(filepath.Join(root, ".git"), 0o755)
	if err := os.WriteFile(filepath.Join(root, ".git/config"), []byte("[remote \"origin\"]\n\turl = "+url+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCheckoutOriginIsTheProofOfWhoseCheckoutItIs(t *testing.T) {
	for url, want := range map[string]string{
		"https://github.com/acme/shop.git": "acme/shop",
		"git@github.com:Acme/Shop.git":     "Acme/Shop",
		"https://gitlab.com/acme/shop.git": "",
		"https://github.com/acme":          "",
	} {
		root := t.TempDir()
		gitOrigin(t, root, url)
		got, ok := CheckoutOrigin(root, DefaultGitHubHost)
		if got != want || ok != (want != "") {
			t.Errorf("%s: got %q %v, want %q", url, got, ok, want)
		}
	}
	// a worktree's .git file leads to its common directory's config
	main := t.TempDir()
	gitOrigin(t, main, "https://github.com/acme/shop")
	wt := t.TempDir()
	gitdir := filepath.Join(main, ".git", "worktrees", "wt")
	os.MkdirAll(gitdir, 0o755)
	os.WriteFile(filepath.Join(gitdir, "commondir"), []byte("../..\n"), 0o644)
	os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644)
	if got, ok := CheckoutOrigin(wt, DefaultGitHubHost); !ok || got != "acme/shop" {
		t.Errorf("worktree: got %q %v", got, ok)
	}
	for _, root := range []string{t.TempDir(), filepath.Join(t.TempDir(), "missing")} {
		if got, ok := CheckoutOrigin(root, DefaultGitHubHost); ok {
			t.Errorf("%s: got %q", root, got)
		}
	}
}

func TestAdoptAsNamesTheWorkItemsRepository(t *testing.T) {
	root := newItemRepo(t, "")
	rec := &recorder{}
	e, err := Open(Options{Repo: root, Events: rec, NoAdopt: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.AdoptAs("item", "github:acme/shop#1", "acme", "shop"); got != ScaffoldWritten {
		t.Fatalf("AdoptAs = %q", got)
	}
	cfg, _ := os.ReadFile(configAt(root))
	if !strings.Contains(string(cfg), `owner: "acme"`) || !strings.Contains(string(cfg), `repo: "shop"`) {
		t.Errorf("config:\n%s", cfg)
	}
	if !e.Harness.Initialized() || e.Harness.OriginRepo() != "acme/shop" {
		t.Error("the adopting engine does not read the config it wrote")
	}
	if !strings.Contains(strings.Join(rec.names(), " "), "harness.config_scaffolded") {
		t.Errorf("events: %v", rec.events)
	}
	before, _ := os.ReadFile(configAt(root))
	if got := e.AdoptAs("item", "github:acme/shop#1", "evil", "other"); got != ScaffoldPresent {
		t.Errorf("again: %q", got)
	}
	if after, _ := os.ReadFile(configAt(root)); string(after) != string(before) {
		t.Error("an adopted repository was rewritten")
	}
}

func TestAdoptAsNeverAdoptsForAContribution(t *testing.T) {
	root := newItemRepo(t, graph.ContributionLoop)
	e, err := Open(Options{Repo: root, Events: &recorder{}, NoAdopt: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.AdoptAs("item", "github:acme/shop#1", "acme", "shop"); got == ScaffoldWritten {
		t.Error("a contribution adopted its host repository")
	}
	if _, err := os.Stat(filepath.Join(root, ConfigDir)); err == nil {
		t.Error("a contribution adopted its host repository")
	}
}

func TestNoAdoptKeepsTheMovingVerbsFromAdopting(t *testing.T) {
	root := newItemRepo(t, "")
	e, err := Open(Options{Repo: root, Events: &recorder{}, NoAdopt: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Advance("item", Selector{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ConfigDir)); err == nil {
		t.Error("an engine opened with NoAdopt adopted the repository")
	}
}

func TestStartEntersTheLoopOnceOnTheLoopAsked(t *testing.T) {
	for _, tc := range []struct {
		loop, start string
	}{
		{"", "phase-selection"},
		{graph.ContributionLoop, "goal-definition"},
		{graph.AdhocLoop, "work"},
	} {
		root := newItemRepo(t, "")
		e, err := Open(Options{Repo: root, Events: &recorder{}, NoAdopt: true})
		if err != nil {
			t.Fatal(err)
		}
		step, err := e.Start("item", Selector{}, tc.loop)
		if err != nil || step == nil || step.To != tc.start {
			t.Fatalf("%q: Start = %+v, %v", tc.loop, step, err)
		}
		pos, err := e.Position("item", Selector{})
		if err != nil || !pos.Entered || pos.Node != tc.start || pos.Loop != graph.WorkItemLoop && tc.loop == "" {
			t.Errorf("%q: Position = %+v, %v", tc.loop, pos, err)
		}
		// entered: a second start, on any loop, changes nothing
		again, err := e.Start("item", Selector{}, graph.AdhocLoop)
		if err != nil || again != nil {
			t.Errorf("%q: a second Start = %+v, %v", tc.loop, again, err)
		}
		if pos, _ := e.Position("item", Selector{}); pos.Node != tc.start {
			t.Errorf("%q: a second start re-shaped the walk to %s", tc.loop, pos.Node)
		}
	}
	e, _ := Open(Options{Repo: newItemRepo(t, ""), Events: &recorder{}, NoAdopt: true})
	if _, err := e.Start("item", Selector{}, graph.PRLoop); err == nil {
		t.Error("Start accepted an inner loop as an outer one")
	}
	if _, err := e.Start("missing", Selector{}, ""); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing spec folder: %v", err)
	}
}

func TestPositionSaysWhetherAPersonAnswersTheNode(t *testing.T) {
	root := newItemRepo(t, "")
	e, err := Open(Options{Repo: root, Events: &recorder{}, NoAdopt: true})
	if err != nil {
		t.Fatal(err)
	}
	pos, err := e.Position("item", Selector{})
	if err != nil || pos.Entered || pos.Node != "phase-selection" || !pos.Human || pos.Loop != graph.WorkItemLoop {
		t.Errorf("unentered: %+v, %v", pos, err)
	}
	pos, err = e.Position("item", Selector{PR: 4})
	if err != nil || pos.Node != "implementation" || pos.Human || pos.Loop != graph.PRLoop {
		t.Errorf("an inner loop: %+v, %v", pos, err)
	}
	os.WriteFile(filepath.Join(root, "docs/specs/item", graph.StateFile), []byte(`{"version": 1, "currentNode": "nowhere"}`), 0o644)
	var se *graph.StateError
	if _, err := e.Position("item", Selector{}); !errors.As(err, &se) {
		t.Errorf("an unknown node: %v", err)
	}
}

func TestOpenTakesALoadedCLIConfigAndALockTimeout(t *testing.T) {
	cli := DefaultCLIConfig()
	cli.Doc = map[string]any{"routing": map[string]any{"authorizedUsers": []any{"alice"}}}
	e, err := Open(Options{Repo: newItemRepo(t, ""), CLIConfig: filepath.Join(t.TempDir(), "missing.yaml"), CLI: cli, Events: &recorder{}, LockTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if e.CLI != cli {
		t.Error("Open read a config of its own")
	}
	rt, err := e.Runtime("item", Selector{})
	if err != nil || rt.LockTimeout != 3*time.Second || rt.Settings.AuthorizedUsers[0] != "alice" {
		t.Errorf("runtime: %+v, %v", rt, err)
	}
}
