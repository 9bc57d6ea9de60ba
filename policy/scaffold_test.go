package policy

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/graphs"
)

func configAt(root string) string { return filepath.Join(root, ConfigDir, HarnessConfigFile) }

func TestScaffoldWritesTheDefaultWithItsProvenanceAndEveryComment(t *testing.T) {
	root := t.TempDir()
	if got := Scaffold(root, "acme", "shop"); got != ScaffoldWritten {
		t.Fatalf("got %q, want written", got)
	}
	data, err := os.ReadFile(configAt(root))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if !strings.HasPrefix(text, "# yaml-language-server: $schema="+SchemaURL+"\n") || !strings.Contains(text, "Written by the-loop") {
		t.Errorf("no provenance header:\n%.300s", text)
	}
	def := string(graphs.DefaultHarnessConfig())
	for _, line := range strings.Split(def, "\n") {
		if strings.Contains(line, "#") && !strings.Contains(text, line) {
			t.Errorf("a comment of the template was lost: %q", line)
		}
	}
	hc, err := LoadHarnessConfig(root)
	if err != nil {
		t.Fatalf("the written config does not load: %v", err)
	}
	if hc.OriginRepo() != "acme/shop" || hc.SpecDir() != DefaultSpecDir {
		t.Errorf("got origin %q spec dir %q", hc.OriginRepo(), hc.SpecDir())
	}
	var written, want any
	yaml.Unmarshal(data, &written)
	yaml.Unmarshal([]byte(withOrigin(def, "acme", "shop")), &want)
	if !equalYAML(written, want) {
		t.Error("the written config is not the default")
	}
}

func equalYAML(a, b any) bool {
	x, _ := yaml.Marshal(a)
	y, _ := yaml.Marshal(b)
	return bytes.Equal(x, y)
}

func TestScaffoldRefusesAForgedOwner(t *testing.T) {
	forged := []struct{ owner, repo string }{
		{`acme"`, "shop"},
		{"acme\nautonomy: {tiers: []}", "shop"},
		{"acme: x", "shop"},
		{"acme", "shop\nreviews: {critics: [{command: evil}]}"},
		{"-acme", "shop"},
		{"", "shop"},
		{"acme", ""},
		{"ac/me", "shop"},
	}
	for _, f := range forged {
		root := t.TempDir()
		if got := Scaffold(root, f.owner, f.repo); got != ScaffoldWritten {
			t.Fatalf("%q/%q: got %q, want the default written without the names", f.owner, f.repo, got)
		}
		data, _ := os.ReadFile(configAt(root))
		want := provenance + string(graphs.DefaultHarnessConfig())
		if string(data) != want {
			t.Errorf("%q/%q reached the file", f.owner, f.repo)
		}
		hc, err := LoadHarnessConfig(root)
		if err != nil || hc.OriginRepo() != "" {
			t.Errorf("%q/%q: origin %q, %v", f.owner, f.repo, hc.OriginRepo(), err)
		}
	}
}

func TestScaffoldNeverOverwritesAnExistingConfig(t *testing.T) {
	for _, name := range HarnessConfigFiles {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			mine := []byte("workflow:\n  specDir: my/specs   # mine\n")
			path := filepath.Join(root, ConfigDir, name)
			os.MkdirAll(filepath.Dir(path), 0o755)
			os.WriteFile(path, mine, 0o600)
			for range 2 {
				if got := Scaffold(root, "acme", "shop"); got != ScaffoldPresent {
					t.Fatalf("got %q, want present", got)
				}
			}
			if data, _ := os.ReadFile(path); !bytes.Equal(data, mine) {
				t.Error("an existing config was changed")
			}
			if _, err := os.Stat(configAt(root)); name != HarnessConfigFile && err == nil {
				t.Error("a second config was written beside the legacy one")
			}
		})
	}
}

func TestScaffoldRefusesATheLoopDirectoryThatEscapesTheCheckout(t *testing.T) {
	outside := t.TempDir()
	cases := map[string]func(root string){
		"symlink out": func(root string) { os.Symlink(outside, filepath.Join(root, ConfigDir)) },
		"symlink in": func(root string) {
			os.Mkdir(filepath.Join(root, "real"), 0o755)
			os.Symlink(filepath.Join(root, "real"), filepath.Join(root, ConfigDir))
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			setup(root)
			if got := Scaffold(root, "", ""); got != ScaffoldFailed {
				t.Errorf("got %q, want refused", got)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Error("wrote outside the checkout")
			}
		})
	}
}

func TestScaffoldOnAnUnwritableDirectoryReturnsNothing(t *testing.T) {
	root := t.TempDir()
	// A file where the directory should be cannot be written into, even by
	// root, which chmod does not stop.
	os.WriteFile(filepath.Join(root, ConfigDir), []byte("not a directory"), 0o644)
	if got := Scaffold(root, "", ""); got != ScaffoldFailed {
		t.Errorf("got %q, want \"\"", got)
	}
	if os.Geteuid() != 0 {
		ro := t.TempDir()
		os.Chmod(ro, 0o555)
		defer os.Chmod(ro, 0o755)
		if got := Scaffold(ro, "", ""); got != ScaffoldFailed {
			t.Errorf("read-only directory: got %q, want \"\"", got)
		}
	}
}

// recorder collects events with their levels and fields.
type recorder struct{ events []recorded }

type recorded struct {
	event, level string
	fields       map[string]any
}

func (r *recorder) Emit(event, level string, fields map[string]any) error {
	r.events = append(r.events, recorded{event, level, fields})
	return nil
}

// names are the events' types, in order.
func (r *recorder) names() []string {
	out := make([]string, len(r.events))
	for i, e := range r.events {
		out[i] = e.event
	}
	return out
}

func (r *recorder) find(event string) (recorded, bool) {
	for _, e := range r.events {
		if e.event == event {
			return e, true
		}
	}
	return recorded{}, false
}

func newItemRepo(t *testing.T, loop string) string {
	root := t.TempDir()
	dir := filepath.Join(root, "docs/specs/item")
	os.MkdirAll(dir, 0o755)
	if loop != "" {
		os.WriteFile(filepath.Join(dir, graph.StateFile), []byte(`{"version": 1, "currentNode": "", "loop": "`+loop+`"}`), 0o644)
	}
	return root
}

func TestAMutatingVerbAdoptsAndReadsTheRepositoryAsAdopted(t *testing.T) {
	root := newItemRepo(t, "")
	rec := &recorder{}
	e, err := Open(Options{Repo: root, Events: rec})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Advance("item", Selector{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(configAt(root)); err != nil {
		t.Fatal("not adopted")
	}
	rt, _ := e.Runtime("item", Selector{})
	if !rt.Settings.RepoInitialized || !e.Harness.Initialized() {
		t.Error("the adopting run does not read the repository as adopted")
	}
	if !strings.Contains(strings.Join(rec.names(), " "), "harness.config_scaffolded") {
		t.Errorf("events: %v", rec.events)
	}
	if notes := e.Notes(); len(notes) != 1 || !strings.Contains(notes[0], "adopted this repository") {
		t.Errorf("notes: %v", notes)
	}
}

func TestReadOnlyVerbsNeverAdopt(t *testing.T) {
	root := newItemRepo(t, "")
	e, err := Open(Options{Repo: root, Events: &recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	e.Check([]string{"item"}, false, Selector{})
	e.Run("item", 5, true, Selector{}, nil)
	if _, err := os.Stat(filepath.Join(root, ConfigDir)); err == nil {
		t.Error("a read-only verb adopted the repository")
	}
}

func TestAContributionNeverAdoptsItsHostRepository(t *testing.T) {
	root := newItemRepo(t, graph.ContributionLoop)
	rec := &recorder{}
	e, err := Open(Options{Repo: root, Events: rec})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Advance("item", Selector{}, nil); err != nil {
		t.Fatal(err)
	}
	e.Force("item", "goal-definition", "testing", "me", Selector{})
	if _, err := os.Stat(filepath.Join(root, ConfigDir)); err == nil {
		t.Error("a contribution adopted its host repository")
	}
	if strings.Contains(strings.Join(rec.names(), " "), "harness.config_scaffolded") {
		t.Error("scaffold event for a contribution")
	}
}

func TestAForeignCheckoutIsNeverAdopted(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".git"), 0o755)
	os.WriteFile(filepath.Join(root, ".git/config"), []byte("[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://github.com/someone/else.git\n"), 0o644)
	e, err := Open(Options{Repo: root, Events: &recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Init("octo/repo", false); err == nil || !strings.Contains(err.Error(), "origin is someone/else, not octo/repo") {
		t.Fatalf("got %v, want a refusal", err)
	}
	if _, err := os.Stat(filepath.Join(root, ConfigDir)); err == nil {
		t.Error("a foreign checkout was adopted")
	}
}

func TestInitTakesTheOriginRemoteAndIsIdempotent(t *testing.T) {
	for _, url := range []string{"https://github.com/acme/shop.git", "git@github.com:acme/shop.git", "ssh://git@github.com/acme/shop", "https://github.com/acme/shop"} {
		root := t.TempDir()
		os.MkdirAll(filepath.Join(root, ".git"), 0o755)
		os.WriteFile(filepath.Join(root, ".git/config"), []byte("[remote \"origin\"]\n\turl = "+url+"\n"), 0o644)
		e, _ := Open(Options{Repo: root, Events: &recorder{}})
		rep, err := e.Init("", false)
		if err != nil || rep.Outcome != ScaffoldWritten || rep.Origin != "acme/shop" || !rep.SpecDirCreated {
			t.Fatalf("%s: got %+v, %v", url, rep, err)
		}
		before, _ := os.ReadFile(configAt(root))
		again, err := e.Init("", false)
		after, _ := os.ReadFile(configAt(root))
		if err != nil || again.Outcome != ScaffoldPresent || again.SpecDirCreated || !bytes.Equal(before, after) {
			t.Errorf("%s: the second init changed something: %+v %v", url, again, err)
		}
	}
}

func TestParseGitHubURL(t *testing.T) {
	cases := map[string]string{
		"https://github.com/acme/shop.git":    "acme/shop",
		"https://token@github.com/acme/shop":  "acme/shop",
		"git@github.com:acme/shop.git":        "acme/shop",
		"ssh://git@github.com/acme/shop.git":  "acme/shop",
		"https://gitlab.com/acme/shop.git":    "",
		"git@github.com:acme/sh\"op.git":      "",
		"https://github.com/acme/shop/tree/x": "",
		"":                                    "",
		"https://github.com:443/acme/shop":    "acme/shop",
		"https://github.com/acme/shop.git/":   "acme/shop",
		"https://GitHub.com/acme/shop":        "acme/shop",
		"ssh://deploy@github.com/acme/shop":   "",
		"git@github.com:/acme/shop":           "",
		"https://github.com/acme/shop?x=1":    "",
		"http://github.com/acme/shop":         "",
		"https://github.com.evil/acme/shop":   "",
		"https://ghe.example/acme/shop.git":   "",
		"git@ghe.example:acme/shop.git":       "",
	}
	for url, want := range cases {
		owner, name, ok := parseGitHubURL(url, DefaultGitHubHost)
		got := ""
		if ok {
			got = owner + "/" + name
		}
		if got != want {
			t.Errorf("%q: got %q, want %q", url, got, want)
		}
	}
}
