package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/graphs"
	"github.com/the-loop/the-loop/repo"
)

// Seed 002's error table, row by row: every way adoption can fail writes
// nothing and costs the run nothing but a warning.

// brokenDefaults are built-in defaults nobody could read (row 1): the
// packaged file missing or unreadable, as a broken build would embed it.
var brokenDefaults = map[string]func() []byte{
	"missing":       func() []byte { return nil },
	"blank":         func() []byte { return []byte("\n  \n") },
	"not YAML":      func() []byte { return []byte("workflow: [unclosed\n") },
	"not a mapping": func() []byte { return []byte("- a list\n") },
	"off schema":    func() []byte { return []byte("workflow:\n  specDir: 42\n") },
}

func TestScaffoldWritesNothingFromABuiltinDefaultThatDoesNotLoad(t *testing.T) {
	for name, builtin := range brokenDefaults {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			co, err := repo.Open(root)
			if err != nil {
				t.Fatal(err)
			}
			defer co.Close()
			got, err := scaffold(co, builtin, "acme", "shop", false)
			if got != ScaffoldFailed || err == nil || !strings.Contains(err.Error(), "the built-in harness config") {
				t.Errorf("got %q, %v; want \"\" and an error naming the built-in config", got, err)
			}
			if _, err := os.Lstat(filepath.Join(root, ConfigDir)); err == nil {
				t.Error("wrote from a default that does not load")
			}
		})
	}
}

func TestTheShippedBuiltinDefaultLoads(t *testing.T) {
	if _, err := checkedDefault(graphs.DefaultHarnessConfig); err != nil {
		t.Fatal(err)
	}
}

func TestScaffoldOnACheckoutThatRefusesWritesReturnsNothing(t *testing.T) {
	// Row 2 where chmod cannot stop root: a checkout every write to is
	// refused.
	co, err := repo.InMemory("ro", map[string][]byte{"docs/specs/item/requirements.md": []byte("# R\n")})
	if err != nil {
		t.Fatal(err)
	}
	got, err := scaffold(co, graphs.DefaultHarnessConfig, "", "", false)
	if got != ScaffoldFailed || !errors.Is(err, repo.ErrReadOnly) {
		t.Errorf("got %q, %v; want \"\" and the write's refusal", got, err)
	}
	if ok, _ := co.Exists(scaffoldedFile); ok {
		t.Error("wrote into a read-only checkout")
	}
}

func TestScaffoldSwallowsAPanicAtItsBoundary(t *testing.T) {
	root := t.TempDir()
	co, err := repo.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close()
	got, err := scaffold(co, func() []byte { panic("boom") }, "", "", false)
	if got != ScaffoldFailed || err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("got %q, %v; want \"\" and an error carrying the panic", got, err)
	}
	if _, err := os.Lstat(filepath.Join(root, ConfigDir)); err == nil {
		t.Error("a scaffold that panicked wrote something")
	}
}

// unadoptable are checkouts whose .the-loop cannot be written (row 2 and
// abuse case 5), each with what the note must say; outside is a directory
// outside the checkout that must stay empty.
func unadoptable(outside string) map[string]struct {
	setup func(t *testing.T, root string)
	why   string
} {
	return map[string]struct {
		setup func(t *testing.T, root string)
		why   string
	}{
		"a file": {func(t *testing.T, root string) {
			must(t, os.WriteFile(filepath.Join(root, ConfigDir), []byte("not a directory"), 0o644))
		}, ".the-loop is not a directory"},
		"a symlink out": {func(t *testing.T, root string) {
			must(t, os.Symlink(outside, filepath.Join(root, ConfigDir)))
		}, ".the-loop is a symbolic link leading outside the checkout"},
		"a symlink in": {func(t *testing.T, root string) {
			must(t, os.Mkdir(filepath.Join(root, "real"), 0o755))
			must(t, os.Symlink("real", filepath.Join(root, ConfigDir)))
		}, ".the-loop is a symlink"},
		"a dangling symlink": {func(t *testing.T, root string) {
			must(t, os.Symlink("nowhere", filepath.Join(root, ConfigDir)))
		}, ".the-loop is a symlink"},
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestAMovingVerbThatCannotAdoptRunsOnTheDefaultsAndSaysWhy(t *testing.T) {
	outside := t.TempDir()
	for name, c := range unadoptable(outside) {
		t.Run(name, func(t *testing.T) {
			root := newItemRepo(t, "")
			c.setup(t, root)
			rec := &recorder{}
			e, err := Open(Options{Repo: root, Events: rec, Moves: true})
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			step, err := e.Advance("item", Selector{}, nil)
			if err != nil {
				t.Fatalf("advance: %v", err)
			}
			if step.Node != "phase-selection" || step.Status != string(graph.StatusWait) {
				t.Errorf("step %+v, want the defaults' first gate waiting", step)
			}
			if e.Harness.Initialized() || e.SpecDirRel() != DefaultSpecDir {
				t.Errorf("not on the defaults: initialized %v, spec dir %q", e.Harness.Initialized(), e.SpecDirRel())
			}
			if _, err := os.Stat(filepath.Join(root, "docs/specs/item", graph.StateFile)); err != nil {
				t.Errorf("the move's state was not written: %v", err)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Error("wrote outside the checkout")
			}
			if _, err := os.Stat(filepath.Join(root, "real", HarnessConfigFile)); err == nil {
				t.Error("wrote through a symlink")
			}
			notes := strings.Join(e.Notes(), "\n")
			if !strings.Contains(notes, c.why) || !strings.Contains(notes, "built-in defaults") || strings.Count(notes, "\n") != 0 {
				t.Errorf("want one note saying %q and that the defaults apply, got:\n%s", c.why, notes)
			}
			ev, ok := rec.find("harness.config_scaffold_failed")
			if !ok || ev.level != "warning" || ev.fields["work_item"] != "item" || ev.fields["path"] != scaffoldedFile || ev.fields["error"] == "" {
				t.Errorf("want a warning event naming the item, path and why; got %+v (all: %+v)", ev, rec.events)
			}
			if _, ok := rec.find("harness.config_scaffolded"); ok {
				t.Error("a scaffold event for nothing written")
			}
		})
	}
}

func TestAReadingVerbRefusesATheLoopThatLeadsOutOfTheCheckout(t *testing.T) {
	root := newItemRepo(t, "")
	must(t, os.Symlink(t.TempDir(), filepath.Join(root, ConfigDir)))
	_, err := Open(Options{Repo: root, Events: &recorder{}})
	var ce *graph.ConfigError
	if !errors.As(err, &ce) || ce.File != ConfigDir {
		t.Fatalf("got %v, want a *graph.ConfigError naming %s", err, ConfigDir)
	}
}

func TestAContributionBehindALinkOutRunsOnTheDefaultsWithoutAdopting(t *testing.T) {
	root := newItemRepo(t, graph.ContributionLoop)
	must(t, os.Symlink(t.TempDir(), filepath.Join(root, ConfigDir)))
	rec := &recorder{}
	e, err := Open(Options{Repo: root, Events: rec, Moves: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Advance("item", Selector{}, nil); err != nil {
		t.Fatal(err)
	}
	if notes := e.Notes(); len(notes) != 1 || !strings.Contains(notes[0], "leading outside the checkout") {
		t.Errorf("notes: %q", notes)
	}
	if _, ok := rec.find("harness.config_scaffold_failed"); ok {
		t.Error("a contribution tried to adopt its host repository")
	}
}

func TestAMovingVerbWithABrokenBuiltinDefaultRunsOnThePerKeyDefaults(t *testing.T) {
	cases := map[string]func() []byte{"missing": brokenDefaults["missing"], "panicking": func() []byte { panic("boom") }}
	for name, builtin := range cases {
		t.Run(name, func(t *testing.T) {
			root := newItemRepo(t, "")
			rec := &recorder{}
			e, err := Open(Options{Repo: root, Events: rec, Moves: true})
			if err != nil {
				t.Fatal(err)
			}
			e.builtin = builtin
			if _, err := e.Force("item", "design", "testing", "me", Selector{}); err != nil {
				t.Fatalf("force: %v", err)
			}
			if _, err := os.Lstat(filepath.Join(root, ConfigDir)); err == nil {
				t.Error("adopted from a broken default")
			}
			if e.Harness.Initialized() {
				t.Error("reads as adopted")
			}
			if _, ok := rec.find("harness.config_scaffold_failed"); !ok {
				t.Errorf("no warning event: %+v", rec.events)
			}
			if notes := e.Notes(); len(notes) != 1 || !strings.HasPrefix(notes[0], "not adopting this repository: ") {
				t.Errorf("notes: %q", notes)
			}
		})
	}
}

func TestAPresentConfigIsNeitherAdoptedNorAFailure(t *testing.T) {
	root := newItemRepo(t, "")
	must(t, os.Mkdir(filepath.Join(root, ConfigDir), 0o755))
	mine := []byte("workflow:\n  specDir: docs/specs\n")
	must(t, os.WriteFile(filepath.Join(root, ConfigDir, LegacyHarnessConfigFile), mine, 0o644))
	rec := &recorder{}
	e, err := Open(Options{Repo: root, Events: rec, NoAdopt: true, Moves: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.AdoptAs("item", "github:acme/shop#1", "acme", "shop"); got != ScaffoldPresent {
		t.Errorf("AdoptAs = %q, want present", got)
	}
	if len(rec.events) != 0 || len(e.Notes()) != 0 {
		t.Errorf("said something about a present config: %+v %q", rec.events, e.Notes())
	}
	if _, err := os.Stat(configAt(root)); err == nil {
		t.Error("a second config was written")
	}
}

func TestAdoptAsThatCannotWriteWorksTheCheckoutAsItIs(t *testing.T) {
	outside := t.TempDir()
	for name, c := range unadoptable(outside) {
		t.Run(name, func(t *testing.T) {
			root := newItemRepo(t, "")
			c.setup(t, root)
			rec := &recorder{}
			// As the ingress opens a proved checkout.
			e, err := Open(Options{Repo: root, Events: rec, NoAdopt: true, Moves: true})
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			if got := e.AdoptAs("item", "github:acme/shop#1", "acme", "shop"); got != ScaffoldFailed {
				t.Errorf("AdoptAs = %q, want \"\"", got)
			}
			ev, ok := rec.find("harness.config_scaffold_failed")
			if !ok || ev.fields["work_item"] != "github:acme/shop#1" {
				t.Errorf("want the warning event naming the ref; got %+v", rec.events)
			}
			if _, err := e.Start("item", Selector{}, ""); err != nil {
				t.Fatalf("start: %v", err)
			}
			if _, err := e.Advance("item", Selector{}, nil); err != nil {
				t.Fatalf("advance: %v", err)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Error("wrote outside the checkout")
			}
		})
	}
}

func TestAdoptAsWithAForgedNameWritesAnEmptyTicketingBlock(t *testing.T) {
	root := newItemRepo(t, "")
	rec := &recorder{}
	e, err := Open(Options{Repo: root, Events: rec, NoAdopt: true, Moves: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.AdoptAs("item", "github:acme/shop#1", "acme\nautonomy: {}", "shop"); got != ScaffoldWritten {
		t.Fatalf("AdoptAs = %q, want written", got)
	}
	data, _ := os.ReadFile(configAt(root))
	if string(data) != provenance+string(graphs.DefaultHarnessConfig()) {
		t.Error("the forged name reached the file")
	}
	if ev, _ := rec.find("harness.config_scaffolded"); ev.fields["repo"] != "" {
		t.Errorf("the event names %q", ev.fields["repo"])
	}
}

func TestInitFailsWhenItCannotWrite(t *testing.T) {
	root := t.TempDir()
	must(t, os.WriteFile(filepath.Join(root, ConfigDir), []byte("not a directory"), 0o644))
	e, err := Open(Options{Repo: root, Events: &recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Init("", false); err == nil || !strings.Contains(err.Error(), ".the-loop is not a directory") {
		t.Errorf("got %v, want init to fail naming .the-loop", err)
	}
	root = t.TempDir()
	e, err = Open(Options{Repo: root, Events: &recorder{}, OrWorkDir: true})
	if err != nil {
		t.Fatal(err)
	}
	e.builtin = brokenDefaults["missing"]
	if _, err := e.Init("", false); err == nil || !strings.Contains(err.Error(), "the built-in harness config is empty") {
		t.Errorf("got %v, want init to fail on a broken default", err)
	}
	if _, err := os.Lstat(filepath.Join(root, ConfigDir)); err == nil {
		t.Error("init wrote from a broken default")
	}
}
