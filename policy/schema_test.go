package policy

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/the-loop/the-loop/graphs"
)

// schemaDeclares reports whether a dotted key is a declared property path
// of the schema (following "$ref" into "$defs").
func schemaDeclares(t *testing.T, schema []byte, key string) bool {
	t.Helper()
	return schemaNode(t, schema, key) != nil
}

// schemaNode is the schema of the property at a dotted key path (following
// "$ref" into "$defs" on the way), or nil when the schema does not declare it.
func schemaNode(t *testing.T, schema []byte, key string) map[string]any {
	t.Helper()
	var root map[string]any
	if err := json.Unmarshal(schema, &root); err != nil {
		t.Fatal(err)
	}
	node := root
	for part := range strings.SplitSeq(key, ".") {
		if ref, ok := node["$ref"].(string); ok {
			node = root["$defs"].(map[string]any)[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
		}
		props, _ := node["properties"].(map[string]any)
		next, ok := props[part].(map[string]any)
		if !ok {
			return nil
		}
		node = next
	}
	return node
}

func TestSchemasCompile(t *testing.T) {
	for name, get := range map[string]func() []byte{"harness": HarnessSchema, "cli": CLISchema} {
		var doc map[string]any
		if err := json.Unmarshal(get(), &doc); err != nil {
			t.Fatalf("%s schema is not JSON: %v", name, err)
		}
		if doc["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s schema: $schema = %v", name, doc["$schema"])
		}
	}
	if _, err := harnessSchema(); err != nil {
		t.Fatal(err)
	}
	if _, err := cliSchema(); err != nil {
		t.Fatal(err)
	}
	b := HarnessSchema()
	b[0] = 'X'
	if HarnessSchema()[0] == 'X' {
		t.Error("HarnessSchema hands out the embedded bytes")
	}
}

func TestOurKeysInSchemas(t *testing.T) {
	for _, key := range []string{
		"graph.hooks.modules", "graph.hooks.attach",
		"workflow.specDir", "workflow.phaseLabelPrefix", "ticketing.github.owner",
	} {
		if !schemaDeclares(t, HarnessSchema(), key) {
			t.Errorf("harness schema lacks %s", key)
		}
	}
	for _, key := range []string{
		"routing.graph.repoHooks", "routing.graph.hookPath", "routing.graph.hookLimits.steps",
		"routing.graph.hookLimits.seconds", "routing.graph.specDir", "routing.authorizedUsers",
		"routing.control.keywords.execute", "state.root", "eventLog.path", "integrations.github",
		"channels.slack.subscribe", "channels.slack.publish", "channels.slack.signingSecretEnv",
		"channels.slack.apiBaseUrl", "channels.slack.reactions.received", "channels.slack.read.mode",
	} {
		if !schemaDeclares(t, CLISchema(), key) {
			t.Errorf("CLI schema lacks %s", key)
		}
	}
}

func yamlDoc(t *testing.T, src string) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal([]byte(src), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestValidateHarness(t *testing.T) {
	tests := []struct {
		name string
		src  string
		key  string // "" means valid
		msg  string
	}{
		{"empty", "{}", "", ""},
		{"attach defaults", "graph: {hooks: {attach: [{hook: x-a, node: design}]}}", "", ""},
		{"with is an object", "graph: {hooks: {attach: [{hook: x-a, node: d, with: 3}]}}", "graph.hooks.attach[0].with", "got number, want object"},
		{"boundary enum", "graph: {hooks: {attach: [{hook: x-a, node: d, boundary: around}]}}", "graph.hooks.attach[0].boundary", `want one of "entry", "exit"`},
		{"attach needs node", "graph: {hooks: {attach: [{hook: x-a}]}}", "graph.hooks.attach[0]", `missing required key "node"`},
		{"module entry keys", "graph: {hooks: {modules: [{file: a.star}]}}", "graph.hooks.modules[0].file", "unknown key"},
		{"top-level unknown", "workflows: {}", "workflows", "unknown key"},
		{"two unknown keys", "a: 1\nb: 2", "", "unknown keys"},
		{"rules under hooks", "hooks: {preCommit: [lint], modules: [{path: a.star}], attach: []}", "hooks", "repository rules (modules, attach) go under graph.hooks"},
		{"one rule key under hooks", "hooks: {attach: []}", "hooks.attach", "unknown key; the schema does not allow it here; repository rules (modules, attach) go under graph.hooks"},
		{"phase enum", "workflow: {phases: [design, coding]}", "workflow.phases[1]", `got "coding"`},
		{"integer minimum", "reviews: {selfReviewCount: -1, criticReviewCount: 1}", "reviews.selfReviewCount", "got -1, want at least 0"},
		{"timestamp accepted as string", "version: 2024-01-02", "", ""},
		{"modelRouting stages open map", "tokenEconomy: {modelRouting: {stages: {anything: economy}}}", "", ""},
		{"modelRouting stages values", "tokenEconomy: {modelRouting: {stages: {anything: huge}}}", "tokenEconomy.modelRouting.stages.anything", "want one of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateHarness(yamlDoc(t, tt.src), "h.yaml")
			if tt.key == "" && tt.msg == "" {
				if err != nil {
					t.Fatalf("valid document refused: %v", err)
				}
				return
			}
			wantConfigError(t, err, "h.yaml", tt.key, 0, tt.msg)
		})
	}
}

func TestValidateCLI(t *testing.T) {
	tests := []struct {
		name string
		src  string
		key  string
		msg  string
	}{
		{"empty", "{}", "", ""},
		{"our keys", "routing: {graph: {repoHooks: false, hookPath: [a, b], hookLimits: {steps: 10, seconds: 1.5}}}", "", ""},
		{"hookPath items", "routing: {graph: {hookPath: [1]}}", "routing.graph.hookPath[0]", "got number, want string"},
		{"hookLimits unknown", "routing: {graph: {hookLimits: {memory: 1}}}", "routing.graph.hookLimits.memory", "unknown key"},
		{"seconds positive", "routing: {graph: {hookLimits: {seconds: 0}}}", "routing.graph.hookLimits.seconds", "got 0, want more than 0"},
		{"seconds that would overflow a deadline", "routing: {graph: {hookLimits: {seconds: 7e9}}}", "routing.graph.hookLimits.seconds", "want at most 3,600"},
		{"steps past any budget", "routing: {graph: {hookLimits: {steps: 18446744073709551615}}}", "routing.graph.hookLimits.steps", "want at most 1\u202f×\u202f10¹²"},
		{"repoHooks bool", "routing: {graph: {repoHooks: maybe}}", "routing.graph.repoHooks", "got string, want boolean"},
		{"sessionPerPr legacy bool", "routing: {tmux: {sessionPerPr: false}}", "", ""},
		{"poll source is open", "polling: {sources: [{provider: github, anything: 1}]}", "", ""},
		{"collaborator roles", "collaborators: [{handle: a, roles: []}]", "collaborators[0].roles", "minItems"},
		{"ghWebhook is strict", "webhooks: {ghWebhook: {routing: {}}}", "webhooks.ghWebhook.routing", "unknown key"},
		{"authorized users mix logins and persons", "routing: {authorizedUsers: [octocat, {github: jc1993, slack: U0456GHIJKL, name: John}, {slack: U1}]}", "", ""},
		{"a person needs a key", "routing: {authorizedUsers: [{}]}", "routing.authorizedUsers[0]", "minProperties"},
		{"a person that is a number", "routing: {authorizedUsers: [octocat, 42]}", "routing.authorizedUsers[1]", "got number, want string or object"},
		{"a person that is a list", "routing: {authorizedUsers: [[octocat]]}", "routing.authorizedUsers[0]", "got array, want string or object"},
		{"a person that is null", "routing: {authorizedUsers: [~]}", "routing.authorizedUsers[0]", "got null, want string or object"},
		{"a channel id that is a number", "routing: {authorizedUsers: [{github: jc1993, slack: 12345}]}", "routing.authorizedUsers[0].slack", "got number, want string"},
		{"a channel id that is a list", "routing: {authorizedUsers: [{slack: [U1, U2]}]}", "routing.authorizedUsers[0].slack", "got array, want string"},
		{"an empty channel id", "routing: {authorizedUsers: [{slack: ''}]}", "routing.authorizedUsers[0].slack", "minLength"},
		{"a name that is not a string", "routing: {authorizedUsers: [{github: a, name: 3}]}", "routing.authorizedUsers[0].name", "got number, want string"},
		{"a whole list that is a string", "routing: {authorizedUsers: octocat}", "routing.authorizedUsers", "got string, want array"},
		{"slack issue-309 keys", "channels: {slack: {subscribe: [phase-approval-pending], publish: [work-item.reply, gate.feedback], signingSecretEnv: S, apiBaseUrl: 'http://127.0.0.1:1/api', read: {mode: events}, reactions: {enabled: true, received: eyes, completed: white_check_mark, error: warning}}}", "", ""},
		{"slack grants are not enum-restricted", "channels: {slack: {publish: [work-item.reply, work-item.rpely]}}", "", ""},
		{"slack grants are strings", "channels: {slack: {publish: work-item.reply}}", "channels.slack.publish", "got string, want array"},
		{"slack read modes", "channels: {slack: {read: {mode: webhook}}}", "channels.slack.read.mode", `want one of "poll", "socket", "events", "off"`},
		{"slack removed keys still load", "channels: {slack: {events: [session.awaiting_input], authorizedUsers: [U1]}}", "", ""},
		{"slack reactions are strict", "channels: {slack: {reactions: {started: eyes}}}", "channels.slack.reactions.started", "unknown key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateCLI(yamlDoc(t, tt.src), "c.yaml")
			if tt.key == "" {
				if err != nil {
					t.Fatalf("valid document refused: %v", err)
				}
				return
			}
			wantConfigError(t, err, "c.yaml", tt.key, 0, tt.msg)
		})
	}
}

func TestJSONValue(t *testing.T) {
	got, err := jsonValue(map[any]any{
		1:     "one",
		true:  []any{time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)},
		"s":   map[string]any{"t": time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)},
		nil:   uint64(1) << 63,
		"raw": []byte("bytes"),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"1":    "one",
		"true": []any{"2024-01-02"},
		"s":    map[string]any{"t": "2024-01-02T03:04:05Z"},
		"null": uint64(1) << 63,
		"raw":  "bytes",
	}
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if !bytes.Equal(gj, wj) {
		t.Errorf("got %s, want %s", gj, wj)
	}
	if _, err := jsonValue(struct{}{}); err == nil {
		t.Error("an arbitrary struct converted")
	}
}

// TestDefaultHarnessConfigValidates: the built-in default that adoption
// writes must load, validate, and agree with the per-key defaults.
func TestDefaultHarnessConfigValidates(t *testing.T) {
	data := graphs.DefaultHarnessConfig()
	if len(data) == 0 {
		t.Skip("graphs.DefaultHarnessConfig is empty")
	}
	root := repoWith(t, HarnessConfigFile, data)
	c, err := LoadHarnessConfig(root)
	if err != nil {
		t.Fatalf("the embedded default harness config is invalid: %v", err)
	}
	if got, _ := stringAt(c.Doc, "workflow.specDir"); got != DefaultSpecDir {
		t.Errorf("default workflow.specDir = %q, DefaultSpecDir = %q", got, DefaultSpecDir)
	}
	if got, _ := stringAt(c.Doc, "workflow.phaseLabelPrefix"); got != DefaultPhaseLabelPrefix {
		t.Errorf("default workflow.phaseLabelPrefix = %q, DefaultPhaseLabelPrefix = %q", got, DefaultPhaseLabelPrefix)
	}
	if got := c.OriginRepo(); got != "" {
		t.Errorf("the default names an origin repository %q", got)
	}
}

// TestDefaultHarnessConfigFile is the same check straight from the file, for
// when the graphs package and its file disagree or one is being rewritten.
func TestDefaultHarnessConfigFile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "graphs", "harness-config.default.yaml"))
	if err != nil {
		t.Skipf("no default harness config file yet: %v", err)
	}
	doc, top, err := parseMapping(data, "graphs/harness-config.default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := validateDoc(harnessSchema, doc, "graphs/harness-config.default.yaml", top); err != nil {
		t.Fatal(err)
	}
}

// mirror is the original project's bare git mirror.
const mirror = "/work/.mirror/MadaraUchiha-314+the-loop/repo"

func gitShow(t *testing.T, path string) []byte {
	t.Helper()
	if _, err := os.Stat(mirror); err != nil {
		t.Skip("the original project's mirror is not available")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	out, err := exec.Command("git", "-C", mirror, "show", "HEAD:"+path).Output()
	if err != nil {
		t.Skipf("git show %s: %v", path, err)
	}
	return out
}

// TestOriginalConfigsValidate: configs the original tool shipped and used
// must be accepted unchanged, or a repository it adopted would break here.
func TestOriginalConfigsValidate(t *testing.T) {
	harness := []string{
		".the-loop/harness-config.yaml",
		"cli/the_loop/harness-config.default.yaml",
		"skills/the-loop/templates/harness-config.yaml",
	}
	cli := []string{
		".the-loop/cli-config.yaml",
		"skills/the-loop/templates/cli-config.yaml",
	}
	for _, p := range harness {
		t.Run(p, func(t *testing.T) {
			root := repoWith(t, HarnessConfigFile, gitShow(t, p))
			c, err := LoadHarnessConfig(root)
			if err != nil {
				t.Fatal(err)
			}
			if c.SpecDir() != DefaultSpecDir || c.PhaseLabelPrefix() != DefaultPhaseLabelPrefix {
				t.Errorf("SpecDir=%q PhaseLabelPrefix=%q", c.SpecDir(), c.PhaseLabelPrefix())
			}
		})
	}
	for _, p := range cli {
		t.Run(p, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), CLIConfigFile)
			if err := os.WriteFile(file, gitShow(t, p), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := LoadCLIConfig(file); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// FuzzLoadHarnessConfig: whatever bytes a repository commits, loading
// returns a config or an error and never panics.
func FuzzLoadHarnessConfig(f *testing.F) {
	entries, _ := os.ReadDir(filepath.Join(fixtureDir, "harness"))
	for _, e := range entries {
		f.Add(fixture(f, filepath.Join("harness", e.Name())))
	}
	f.Add(graphs.DefaultHarnessConfig())
	for _, s := range []string{
		"", "~", "[]", "- a\n- b", "a: &x [*x]", "? [a]\n: b", "{1: 2, 1.5: x, null: y, true: z}",
		"a: &a [&b [&c [*a]]]", "<<: {workflow: {specDir: x}}", "workflow: {specDir: !!binary aGVsbG8=}",
		"x: .nan\ny: -.inf", "version: 2001-12-14t21:59:43.10-05:00", "\t", "%YAML 1.1\n---\na: 1",
		"workflow:\n  phases: [" + strings.Repeat("[", 2000) + "]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		root := repoWith(t, HarnessConfigFile, data)
		c, err := LoadHarnessConfig(root)
		if (c == nil) == (err == nil) {
			t.Fatalf("got config %v and error %v", c, err)
		}
		if err != nil {
			_ = err.Error()
			return
		}
		_ = c.SpecDir()
		_ = c.PhaseLabelPrefix()
		_ = c.OriginRepo()
		_ = c.Notifications()
		_, _ = c.HooksBlock()
		_, _ = c.ResolveSpecDir("")
	})
}

// TestTheSlackChannelSchemaDocumentsItsDefaults: the channel parser (package
// channels/slack) and `the-loop config schema cli` must tell an operator
// the same defaults.
func TestTheSlackChannelSchemaDocumentsItsDefaults(t *testing.T) {
	tests := []struct {
		key  string
		want any
	}{
		{"channels.slack.enabled", false},
		{"channels.slack.botTokenEnv", "THE_LOOP_SLACK_BOT_TOKEN"},
		{"channels.slack.signingSecretEnv", "SLACK_SIGNING_SECRET"},
		{"channels.slack.apiBaseUrl", "https://slack.com/api"},
		{"channels.slack.publish", []any{"work-item.reply"}},
		{"channels.slack.read.mode", "poll"},
		{"channels.slack.read.intervalSeconds", float64(30)},
		{"channels.slack.reactions.enabled", true},
		{"channels.slack.reactions.received", "eyes"},
		{"channels.slack.reactions.completed", "white_check_mark"},
		{"channels.slack.reactions.error", "warning"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			node := schemaNode(t, CLISchema(), tt.key)
			if node == nil {
				t.Fatalf("the CLI schema lacks %s", tt.key)
			}
			if got := node["default"]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("default = %#v, want %#v", got, tt.want)
			}
		})
	}
	for _, key := range []string{"channels.slack.events", "channels.slack.authorizedUsers"} {
		node := schemaNode(t, CLISchema(), key)
		if desc, _ := node["description"].(string); node["deprecated"] != true || !strings.Contains(desc, "Removed (issue-309)") {
			t.Errorf("%s is not described as removed: %v", key, node)
		}
	}
}
