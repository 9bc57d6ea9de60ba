package policy

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

// repoWith makes a temporary repository whose harness config (under name)
// holds data.
func repoWith(t testing.TB, name string, data []byte) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ConfigDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ConfigDir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// fixtureDir is absolute so fixtures still load after a test's t.Chdir.
var fixtureDir, _ = filepath.Abs(filepath.Join("testdata", "config"))

func fixture(t testing.TB, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtureDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// wantConfigError asserts err is a *graph.ConfigError with the given key,
// line (0: any) and message fragment.
func wantConfigError(t *testing.T, err error, file, key string, line int, msg string) *graph.ConfigError {
	t.Helper()
	var ce *graph.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v (%T), want *graph.ConfigError", err, err)
	}
	if file != "" && ce.File != file {
		t.Errorf("File = %q, want %q", ce.File, file)
	}
	if ce.Key != key {
		t.Errorf("Key = %q, want %q (error: %v)", ce.Key, key, err)
	}
	if line != 0 && ce.Line != line {
		t.Errorf("Line = %d, want %d (error: %v)", ce.Line, line, err)
	}
	if !strings.Contains(err.Error(), msg) {
		t.Errorf("error %q does not mention %q", err, msg)
	}
	return ce
}

func TestLoadHarnessConfigMissing(t *testing.T) {
	root := t.TempDir()
	c, err := LoadHarnessConfig(root)
	if err != nil {
		t.Fatal(err)
	}
	if c.Initialized() || c.Path != "" || c.File() != "" {
		t.Errorf("no file, but Initialized=%v Path=%q", c.Initialized(), c.Path)
	}
	if c.Doc == nil {
		t.Error("Doc is nil")
	}
	if got := c.SpecDir(); got != DefaultSpecDir {
		t.Errorf("SpecDir = %q, want %q", got, DefaultSpecDir)
	}
	if got := c.PhaseLabelPrefix(); got != DefaultPhaseLabelPrefix {
		t.Errorf("PhaseLabelPrefix = %q, want %q", got, DefaultPhaseLabelPrefix)
	}
	if got := c.OriginRepo(); got != "" {
		t.Errorf("OriginRepo = %q, want empty", got)
	}
	if got := c.Notifications(); got == nil || len(got) != 0 {
		t.Errorf("Notifications = %v, want empty map", got)
	}
	if v, ok := c.HooksBlock(); ok || v != nil {
		t.Errorf("HooksBlock = %v, %v; want absent", v, ok)
	}
	if c, err := LoadHarnessConfig(root); err != nil || c.Initialized() {
		t.Error("Initialized reports a config that is not there")
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 0 {
		t.Errorf("loading wrote into the repository: %v", entries)
	}
}

func TestLoadHarnessConfigValid(t *testing.T) {
	tests := []struct {
		fixture string
		check   func(t *testing.T, c *HarnessConfig)
	}{
		{"harness/minimal.yaml", func(t *testing.T, c *HarnessConfig) {
			if got := c.SpecDir(); got != "specs/items" {
				t.Errorf("SpecDir = %q", got)
			}
			if got := c.PhaseLabelPrefix(); got != "phase/" {
				t.Errorf("PhaseLabelPrefix = %q", got)
			}
			if got := c.OriginRepo(); got != "acme/widgets" {
				t.Errorf("OriginRepo = %q", got)
			}
		}},
		{"harness/empty-prefix.yaml", func(t *testing.T, c *HarnessConfig) {
			if got := c.SpecDir(); got != DefaultSpecDir {
				t.Errorf("empty specDir: SpecDir = %q, want the default", got)
			}
			if got := c.PhaseLabelPrefix(); got != "" {
				t.Errorf("explicit empty prefix: PhaseLabelPrefix = %q, want it honoured", got)
			}
		}},
		{"harness/comments-only.yaml", func(t *testing.T, c *HarnessConfig) {
			if !c.Initialized() || len(c.Doc) != 0 {
				t.Errorf("Initialized=%v Doc=%v; want an adopted repository with nothing set", c.Initialized(), c.Doc)
			}
		}},
		{"harness/hooks.yaml", func(t *testing.T, c *HarnessConfig) {
			v, ok := c.HooksBlock()
			hooks, _ := v.(map[string]any)
			if !ok || len(hooks["modules"].([]any)) != 2 || len(hooks["attach"].([]any)) != 2 {
				t.Errorf("HooksBlock = %#v, %v", v, ok)
			}
			if got := c.Notifications()["enabled"]; got != true {
				t.Errorf("Notifications()[enabled] = %v", got)
			}
			if got := c.Critics(); len(got) != 1 {
				t.Errorf("Critics = %v", got)
			}
			if got := c.IntegrationTestGlobs(); !slices.Equal(got, []string{"tests/**/*_integration_test.go"}) {
				t.Errorf("IntegrationTestGlobs = %v", got)
			}
			// An unquoted numeric key reads as the string the schema names.
			if v, ok := c.Lookup("autonomy.tiers.1"); !ok || v != "autonomous-complete" {
				t.Errorf("autonomy.tiers.1 = %v, %v", v, ok)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			root := repoWith(t, HarnessConfigFile, fixture(t, tt.fixture))
			c, err := LoadHarnessConfig(root)
			if err != nil {
				t.Fatal(err)
			}
			if !c.Initialized() || c.File() != ".the-loop/harness-config.yaml" {
				t.Errorf("Initialized=%v File=%q", c.Initialized(), c.File())
			}
			tt.check(t, c)
		})
	}
}

func TestLoadHarnessConfigInvalid(t *testing.T) {
	const file = ".the-loop/harness-config.yaml"
	tests := []struct {
		fixture string
		key     string
		line    int
		msg     string
	}{
		{"harness/malformed.yaml", "", 0, "invalid YAML"},
		// yaml.v3 names the line of the mapping it was parsing.
		{"harness/bad-indent.yaml", "", 2, "invalid YAML"},
		{"harness/not-a-mapping.yaml", "", 1, "top level is a list; want a mapping"},
		{"harness/two-documents.yaml", "", 3, "more than one YAML document"},
		{"harness/duplicate-key.yaml", "", 3, "already defined"},
		{"harness/bad-boundary.yaml", "graph.hooks.attach[1].boundary", 8, `got "middle", want one of "entry", "exit"`},
		{"harness/bad-hook-name.yaml", "graph.hooks.attach[0].hook", 4, `got "validate-artifacts", want a value matching ^x-.+`},
		{"harness/unknown-key.yaml", "workflow.specDirectory", 3, "unknown key"},
		{"harness/wrong-type.yaml", "workflow.specDir", 2, "got number, want string"},
		{"harness/missing-required.yaml", "ticketing", 1, `missing required key "system"`},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			root := repoWith(t, HarnessConfigFile, fixture(t, tt.fixture))
			c, err := LoadHarnessConfig(root)
			if c != nil {
				t.Errorf("got a config with the error")
			}
			ce := wantConfigError(t, err, file, tt.key, tt.line, tt.msg)
			if tt.msg == "invalid YAML" && ce.Line == 0 {
				t.Errorf("malformed YAML without a line: %v", err)
			}
			if !strings.HasPrefix(err.Error(), file+":") {
				t.Errorf("error %q does not start with the file", err)
			}
		})
	}
}

func TestMalformedYAMLLine(t *testing.T) {
	// The unterminated quote opens on line 3; yaml.v3 reports where the
	// scanner gave up, which must be a real line of the file.
	root := repoWith(t, HarnessConfigFile, fixture(t, "harness/malformed.yaml"))
	_, err := LoadHarnessConfig(root)
	var ce *graph.ConfigError
	if !errors.As(err, &ce) || ce.Line < 3 || ce.Line > 6 {
		t.Fatalf("got %v, want a ConfigError on lines 3-6", err)
	}
	if strings.Contains(ce.Error(), "yaml: line") {
		t.Errorf("line repeated in the message: %v", ce)
	}
}

func TestHarnessConfigNames(t *testing.T) {
	t.Run("legacy name is read", func(t *testing.T) {
		root := repoWith(t, LegacyHarnessConfigFile, []byte("workflow: {specDir: legacy}\n"))
		c, err := LoadHarnessConfig(root)
		if err != nil {
			t.Fatal(err)
		}
		if c.SpecDir() != "legacy" || c.File() != ".the-loop/config.yaml" || !c.Initialized() {
			t.Errorf("SpecDir=%q File=%q", c.SpecDir(), c.File())
		}
	})
	t.Run("current name wins", func(t *testing.T) {
		root := repoWith(t, LegacyHarnessConfigFile, []byte("workflow: {specDir: legacy}\n"))
		if err := os.WriteFile(filepath.Join(root, ConfigDir, HarnessConfigFile), []byte("workflow: {specDir: current}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := LoadHarnessConfig(root)
		if err != nil {
			t.Fatal(err)
		}
		if c.SpecDir() != "current" {
			t.Errorf("SpecDir = %q, want the current file's", c.SpecDir())
		}
	})
	t.Run("a directory is not a config, and not the defaults either", func(t *testing.T) {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, ConfigDir, HarnessConfigFile), 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := LoadHarnessConfig(root)
		wantConfigError(t, err, ".the-loop/harness-config.yaml", "", 0, "is a directory")
	})
	t.Run("symlink out of the repository is refused", func(t *testing.T) {
		outside := filepath.Join(t.TempDir(), "elsewhere.yaml")
		if err := os.WriteFile(outside, []byte("workflow: {specDir: x}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, ConfigDir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(root, ConfigDir, HarnessConfigFile)); err != nil {
			t.Skip(err)
		}
		_, err := LoadHarnessConfig(root)
		wantConfigError(t, err, ".the-loop/harness-config.yaml", "", 0, "outside the repository")
	})
}

func TestResolveSpecDir(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	mkdir := func(p string) {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Skip(err)
		}
	}
	mkdir("docs/specs")
	mkdir("real")
	link(outside, "out")                                   // a directory outside
	link("real", "in")                                     // a directory inside
	link(filepath.Join(root, "gone"), "dangling")          // absolute: a place on one machine
	link("gone", "dangling-in")                            // relative, inside, not there yet
	link(filepath.Join(outside, "missing"), "out-missing") // outside and absent

	tests := []struct {
		specDir string
		want    string // relative to root; "" means refused
		msg     string
	}{
		{"", "docs/specs", ""},
		{"docs/specs", "docs/specs", ""},
		{"not/there/yet", "not/there/yet", ""},
		{".", ".", ""},
		{"docs/../specs", "specs", ""},
		{"in/specs", "in/specs", ""},
		{"/etc/specs", "", "absolute path; want a path relative to the repository root"},
		{"..", "", "leaves the repository"},
		{"../sibling/specs", "", "leaves the repository"},
		{"docs/../../escape", "", "leaves the repository"},
		{"out", "", "outside the repository"},
		{"out/specs/deeper", "", "outside the repository"},
		{"out-missing/specs", "", "resolves through a symlink outside the repository"},
		{"dangling/specs", "", "resolves through a symlink outside the repository"},
		{"dangling-in/specs", "dangling-in/specs", ""},
	}
	for _, tt := range tests {
		t.Run(tt.specDir, func(t *testing.T) {
			got, err := ResolveSpecDir(root, tt.specDir)
			if tt.want == "" {
				wantConfigError(t, err, "", "workflow.specDir", 0, tt.msg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(root, tt.want); got != want {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}
}

func TestHarnessConfigResolveSpecDir(t *testing.T) {
	root := repoWith(t, HarnessConfigFile, []byte("version: \"0.2.0\"\nworkflow:\n  specDir: ../outside\n"))
	c, err := LoadHarnessConfig(root)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ResolveSpecDir("")
	wantConfigError(t, err, ".the-loop/harness-config.yaml", "workflow.specDir", 3, "leaves the repository")

	_, err = c.ResolveSpecDir("/abs")
	ce := wantConfigError(t, err, "", "routing.graph.specDir", 0, "absolute path")
	if ce.File != "" {
		t.Errorf("an override's refusal names the harness file %q", ce.File)
	}

	got, err := c.ResolveSpecDir("specs")
	if err != nil || got != filepath.Join(root, "specs") {
		t.Errorf("override: got %q, %v", got, err)
	}
}

func TestHarnessReadsHaveAccessors(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range HarnessReads {
		if seen[r.Key] {
			t.Errorf("%s listed twice", r.Key)
		}
		seen[r.Key] = true
		if r.By == "" || r.Why == "" {
			t.Errorf("%s: every read says who reads it and why", r.Key)
		}
		// Every key the CLI reads must be one the schema declares.
		if !schemaDeclares(t, HarnessSchema(), r.Key) {
			t.Errorf("%s is read but not in the harness schema", r.Key)
		}
	}
}

func TestAliasesThatFanOneValueOutAreRefusedBeforeTheyExpand(t *testing.T) {
	var root string
	var b strings.Builder
	b.WriteString("graph:\n  hooks:\n    attach:\n      - {hook: x-rule, node: implementation, with: {big: &a \"")
	b.WriteString(strings.Repeat("a", 1<<19))
	b.WriteString("\"}}\n")
	for range 300 {
		b.WriteString("      - {hook: x-rule, node: implementation, with: {big: *a}}\n")
	}
	root = repoWith(t, HarnessConfigFile, []byte(b.String()))
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := LoadHarnessConfig(root)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	var ce *graph.ConfigError
	if !errors.As(err, &ce) || ce.Line < 5 || !strings.Contains(ce.Msg, "once its aliases are expanded") {
		t.Fatalf("got %v; want a ConfigError at the alias that expands too far", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("refusing allocated %d MiB", grew>>20)
	}
}

func TestAHarnessConfigThatIsNoFileIsAnErrorNeverAbsent(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(t *testing.T, p string)
		want string
	}{
		{"a dangling link", func(t *testing.T, p string) { os.Symlink("nowhere.yaml", p) }, "is a symbolic link to nothing"},
		{"a link out", func(t *testing.T, p string) {
			out := filepath.Join(t.TempDir(), "harness-config.yaml")
			os.WriteFile(out, []byte("{}\n"), 0o644)
			os.Symlink(out, p)
		}, "is a symbolic link leading outside the repository"},
		{"a directory", func(t *testing.T, p string) { os.Mkdir(p, 0o755) }, "is a directory"},
		{"a FIFO", func(t *testing.T, p string) { syscall.Mkfifo(p, 0o644) }, "is not a regular file"},
	} {
		for _, name := range HarnessConfigFiles {
			t.Run(c.name+"/"+name, func(t *testing.T) {
				root := t.TempDir()
				os.MkdirAll(filepath.Join(root, ConfigDir), 0o755)
				c.make(t, filepath.Join(root, ConfigDir, name))
				_, err := LoadHarnessConfig(root)
				var ce *graph.ConfigError
				if !errors.As(err, &ce) || ce.File != ConfigDir+"/"+name || !strings.Contains(ce.Msg, c.want) {
					t.Fatalf("got %v; want a ConfigError on %s/%s saying %q", err, ConfigDir, name, c.want)
				}
			})
		}
	}
}
