package policy

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/the-loop/the-loop/graph"
)

// cliEnv isolates a test from the machine's CLI config: a fresh home and
// working directory, no $THE_LOOP_CLI_CONFIG, no $THE_LOOP_HOOK_PATH.
func cliEnv(t *testing.T) (home, work string) {
	t.Helper()
	home, work = t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv(CLIConfigEnv, "")
	t.Setenv(HookPathEnv, "")
	t.Chdir(work)
	return home, work
}

func writeCLI(t *testing.T, dir, body string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, CLIConfigFile)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCLIConfigResolutionOrder(t *testing.T) {
	users := func(who string) string { return "routing: {authorizedUsers: [" + who + "]}\n" }
	tests := []struct {
		name     string
		flag     bool
		env      bool
		workdir  bool
		home     bool
		want     string
		wantFrom CLIConfigSource
	}{
		{"flag beats everything", true, true, true, true, "flag", SourceFlag},
		{"env beats home", false, true, true, true, "env", SourceEnv},
		{"the working directory's is never read: home wins", false, false, true, true, "home", SourceHome},
		{"the working directory's is never read: defaults", false, false, true, false, "", SourceDefaults},
		{"home is the last resort", false, false, false, true, "home", SourceHome},
		{"nothing means defaults", false, false, false, false, "", SourceDefaults},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home, work := cliEnv(t)
			elsewhere := t.TempDir()
			var flag string
			if tt.flag {
				flag = writeCLI(t, filepath.Join(elsewhere, "flag"), users("flag"))
			}
			if tt.env {
				t.Setenv(CLIConfigEnv, writeCLI(t, filepath.Join(elsewhere, "env"), users("env")))
			}
			if tt.workdir {
				writeCLI(t, filepath.Join(work, ConfigDir), users("workdir"))
			}
			if tt.home {
				writeCLI(t, filepath.Join(home, ConfigDir), users("home"))
			}
			c, err := LoadCLIConfig(flag)
			if err != nil {
				t.Fatal(err)
			}
			var got string
			if u := c.AuthorizedUsers(); len(u) > 0 {
				got = u[0]
			}
			if got != tt.want || c.Source != tt.wantFrom {
				t.Errorf("read %q from %q, want %q from %q", got, c.Source, tt.want, tt.wantFrom)
			}
			if (c.Path == "") != (tt.wantFrom == SourceDefaults) || (c.Path != "" && !filepath.IsAbs(c.Path)) {
				t.Errorf("Path = %q", c.Path)
			}
			if wantIgnored := tt.workdir; (c.Ignored != "") != wantIgnored {
				t.Errorf("Ignored = %q; want it said (%v) that the working directory's config was not read", c.Ignored, wantIgnored)
			}
		})
	}
}

func TestACommittedCLIConfigCannotLiftTheOperatorsSettings(t *testing.T) {
	home, work := cliEnv(t)
	writeCLI(t, filepath.Join(home, ConfigDir), "version: \"0.5.0\"\nrouting:\n  graph:\n    repoHooks: false\n")
	committed := writeCLI(t, filepath.Join(work, ConfigDir), "version: \"0.5.0\"\nrouting:\n  authorizedUsers: [mallory]\n  graph:\n    repoHooks: true\n    hookLimits: {steps: 100000000000, seconds: 100000}\nstate:\n  root: /tmp/elsewhere\n")
	c, err := LoadCLIConfig("")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.AuthorizedUsers()) != 0 || c.RepoHooks() || c.HookStepBudget() != DefaultHookStepBudget ||
		c.HookDeadline() != DefaultHookDeadline || c.StateRoot() != filepath.Join(home, ".the-loop") {
		t.Errorf("the committed config was read: users %v, repoHooks %v, steps %d, deadline %s, state %s",
			c.AuthorizedUsers(), c.RepoHooks(), c.HookStepBudget(), c.HookDeadline(), c.StateRoot())
	}
	if c.Ignored != committed {
		t.Errorf("Ignored = %q; want the committed file named", c.Ignored)
	}
	// The operator may still choose it, by name, and it is then validated
	// like any other: its deadline is past what a hook may be given.
	_, err = LoadCLIConfig(committed)
	wantConfigError(t, err, committed, "routing.graph.hookLimits.seconds", 6, "want at most 3,600")
	writeCLI(t, filepath.Join(work, ConfigDir), "version: \"0.5.0\"\nrouting:\n  authorizedUsers: [mallory]\n")
	if c, err := LoadCLIConfig(committed); err != nil || c.Ignored != "" || c.Path != committed {
		t.Errorf("--config naming it: %v", err)
	}
}

func TestCLIConfigNamedFileMissing(t *testing.T) {
	home, _ := cliEnv(t)
	writeCLI(t, filepath.Join(home, ConfigDir), "{}\n")
	missing := filepath.Join(t.TempDir(), "nope.yaml")

	if _, err := LoadCLIConfig(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("--config naming a missing file: got %v, want a not-exist error", err)
	}
	t.Setenv(CLIConfigEnv, missing)
	if _, err := LoadCLIConfig(""); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("$%s naming a missing file: got %v, want a not-exist error", CLIConfigEnv, err)
	}
	if _, err := LoadCLIConfig(t.TempDir()); err == nil {
		t.Error("--config naming a directory was accepted")
	}
}

func TestCLIConfigDefaults(t *testing.T) {
	home, _ := cliEnv(t)
	c, err := LoadCLIConfig("")
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"AuthorizedUsers", len(c.AuthorizedUsers()), 0},
		{"GraphEnabled", c.GraphEnabled(), true},
		{"RepoHooks", c.RepoHooks(), true},
		{"HookPath", len(c.HookPath()), 0},
		{"HookStepBudget", c.HookStepBudget(), DefaultHookStepBudget},
		{"HookDeadline", c.HookDeadline(), DefaultHookDeadline},
		{"SpecDirOverride", c.SpecDirOverride(), ""},
		{"ExecuteKeyword", c.ExecuteKeyword(), DefaultExecuteKeyword},
		{"ControlKeyword(stop)", c.ControlKeyword("stop"), "the-loop stop"},
		{"ControlEnabled", c.ControlEnabled(), true},
		{"RequireStartCommand", c.RequireStartCommand(), true},
		{"ReactionsEnabled", c.ReactionsEnabled(), true},
		{"Reaction(started)", c.Reaction(ReactionStarted), "eyes"},
		{"Reaction(completed)", c.Reaction(ReactionCompleted), "hooray"},
		{"Reaction(error)", c.Reaction(ReactionError), "confused"},
		{"Reaction(unknown)", c.Reaction("finished"), ""},
		{"StateRoot", c.StateRoot(), filepath.Join(home, ".the-loop")},
		{"EventLogEnabled", c.EventLogEnabled(), true},
		{"EventLogPath", c.EventLogPath(), filepath.Join(home, ".the-loop", "logs", "events.jsonl")},
		{"Integration", c.Integration(), IntegrationNone},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
	if DefaultExecuteKeyword != DefaultControlKeyword("execute") {
		t.Error("DefaultExecuteKeyword disagrees with DefaultControlKeyword")
	}
}

func TestCLIConfigValues(t *testing.T) {
	_, work := cliEnv(t)
	dir := t.TempDir()
	path := writeCLI(t, dir, string(fixture(t, "cli/full.yaml")))
	t.Setenv(HookPathEnv, "/env/one"+string(filepath.ListSeparator)+"rel"+string(filepath.ListSeparator)+string(filepath.ListSeparator)+"/opt/loop-hooks")
	c, err := LoadCLIConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.AuthorizedUsers(); !slices.Equal(got, []string{"octocat", "hubot"}) {
		t.Errorf("AuthorizedUsers = %v", got)
	}
	if got := c.AuthorizedOn("slack"); !slices.Equal(got, []string{"U0HUBOT", "U0SLACKONLY"}) {
		t.Errorf("AuthorizedOn(slack) = %v", got)
	}
	if c.GraphEnabled() || c.RepoHooks() {
		t.Errorf("GraphEnabled=%v RepoHooks=%v, want both false", c.GraphEnabled(), c.RepoHooks())
	}
	wantPath := []string{filepath.Join(dir, "hooks"), "/opt/loop-hooks", "/env/one", filepath.Join(work, "rel")}
	if got := c.HookPath(); !slices.Equal(got, wantPath) {
		t.Errorf("HookPath = %v, want %v", got, wantPath)
	}
	if got := c.HookStepBudget(); got != 5000 {
		t.Errorf("HookStepBudget = %d", got)
	}
	if got := c.HookDeadline(); got != 250*time.Millisecond {
		t.Errorf("HookDeadline = %v", got)
	}
	if got := c.SpecDirOverride(); got != "specs" {
		t.Errorf("SpecDirOverride = %q", got)
	}
	if got := c.ExecuteKeyword(); got != "go go go" {
		t.Errorf("ExecuteKeyword = %q", got)
	}
	if got := c.ControlKeyword("stop"); got != "" {
		t.Errorf("an explicitly disabled keyword reads %q", got)
	}
	if got := c.ControlKeyword("pause"); got != "the-loop pause" {
		t.Errorf("an undeclared keyword reads %q", got)
	}
	if c.RequireStartCommand() || c.ReactionsEnabled() {
		t.Errorf("RequireStartCommand=%v ReactionsEnabled=%v, want both false", c.RequireStartCommand(), c.ReactionsEnabled())
	}
	for moment, want := range map[string]string{ReactionStarted: "rocket", ReactionCompleted: "hooray", ReactionError: ""} {
		if got := c.Reaction(moment); got != want {
			t.Errorf("Reaction(%s) = %q, want %q", moment, got, want)
		}
	}
	if got := c.StateRoot(); got != "/var/lib/the-loop" {
		t.Errorf("StateRoot = %q", got)
	}
	if got := c.EventLogPath(); got != "/var/log/the-loop/events.jsonl" {
		t.Errorf("EventLogPath = %q", got)
	}
	if got := c.Integration(); got != IntegrationGitHub {
		t.Errorf("Integration = %q", got)
	}
}

func TestCLIConfigStateRoot(t *testing.T) {
	tests := []struct {
		root string
		want func(home, work string) string
	}{
		{"~/loop-state", func(h, _ string) string { return filepath.Join(h, "loop-state") }},
		{"~", func(h, _ string) string { return h }},
		{".the-loop", func(_, w string) string { return filepath.Join(w, ".the-loop") }},
		{"/srv/loop", func(_, _ string) string { return "/srv/loop" }},
		{"  ", func(h, _ string) string { return filepath.Join(h, ".the-loop") }},
	}
	for _, tt := range tests {
		t.Run(tt.root, func(t *testing.T) {
			home, work := cliEnv(t)
			path := writeCLI(t, t.TempDir(), "state: {root: '"+tt.root+"'}\n")
			c, err := LoadCLIConfig(path)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := c.StateRoot(), tt.want(home, work); got != want {
				t.Errorf("StateRoot = %q, want %q", got, want)
			}
			if got, want := c.EventLogPath(), filepath.Join(tt.want(home, work), "logs", "events.jsonl"); got != want {
				t.Errorf("EventLogPath = %q, want %q", got, want)
			}
		})
	}
}

func TestCLIConfigInvalid(t *testing.T) {
	tests := []struct {
		fixture string
		key     string
		line    int
		msg     string
	}{
		{"cli/legacy-routing.yaml", "webhooks.ghWebhook.routing", 5, "move it to routing"},
		{"cli/old-version.yaml", "version", 1, "got version 0.3.1, want 0.5.0 or later"},
		{"cli/bad-limits.yaml", "routing.graph.hookLimits.steps", 4, "got 0, want at least 1"},
		{"cli/bad-enum.yaml", "routing.defaultHarness", 2, `got "emacs", want one of "claude", "cursor"`},
		{"harness/malformed.yaml", "", 0, "invalid YAML"},
		{"harness/not-a-mapping.yaml", "", 1, "want a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			cliEnv(t)
			path := writeCLI(t, t.TempDir(), string(fixture(t, tt.fixture)))
			c, err := LoadCLIConfig(path)
			if c != nil {
				t.Error("got a config with the error")
			}
			wantConfigError(t, err, path, tt.key, tt.line, tt.msg)
		})
	}
}

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"0.5.0", "0.5.0", 0},
		{"0.5", "0.5.0", 0},
		{"0.4.9", "0.5.0", -1},
		{"0.10.0", "0.5.0", 1},
		{"1", "0.5.0", 1},
		{"v0.5.1", "0.5.0", 1},
		{"", "0.5.0", -1},
	}
	for _, tt := range tests {
		if got := compareVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("compareVersions(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestTheWebhookReceiverConfigHasTheOriginalsDefaults(t *testing.T) {
	cliEnv(t)
	got := DefaultCLIConfig().Webhook()
	want := Webhook{
		Host: "127.0.0.1", Port: 8787, Path: "/gh-webhook", SecretEnv: "THE_LOOP_GH_WEBHOOK_SECRET",
		Events: DefaultWebhookEvents, Workers: 4, DedupCacheSize: 100_000,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestTheWebhookReceiverConfigReadsItsKeys(t *testing.T) {
	_, work := cliEnv(t)
	p := writeCLI(t, work, `webhooks:
  ghWebhook:
    host: 0.0.0.0
    port: 9000
    path: /hooks/github
    secretEnv: MY_SECRET
    events: [issue_comment]
routing:
  maxConcurrentDispatches: 8
  dedupCacheSize: 50
`)
	c, err := LoadCLIConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	got := c.Webhook()
	want := Webhook{Host: "0.0.0.0", Port: 9000, Path: "/hooks/github", SecretEnv: "MY_SECRET", Events: []string{"issue_comment"}, Workers: 8, DedupCacheSize: 50}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestAWebhookPathThatIsNotAbsoluteIsAConfigError(t *testing.T) {
	_, work := cliEnv(t)
	p := writeCLI(t, work, "webhooks:\n  ghWebhook:\n    path: gh-webhook\n")
	_, err := LoadCLIConfig(p)
	var ce *graph.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(ce.Error(), "path") {
		t.Fatalf("got %v, want a ConfigError naming the path", err)
	}
}

func TestTheMCPTokenVariableIsNamedOnlyWhereTheConfigSaysSo(t *testing.T) {
	_, work := cliEnv(t)
	cases := []struct{ name, doc, want string }{
		{"no service block", "", ""},
		{"named", "service:\n  mcp:\n    tokenEnv: THE_LOOP_MCP_TOKEN\n", "THE_LOOP_MCP_TOKEN"},
		{"named, mcp disabled", "service:\n  mcp:\n    enabled: false\n    tokenEnv: THE_LOOP_MCP_TOKEN\n", ""},
		{"blank", "service:\n  mcp:\n    tokenEnv: \"  \"\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := LoadCLIConfig(writeCLI(t, work, c.doc+"version: \"1\"\n"))
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.MCPTokenEnv(); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}
