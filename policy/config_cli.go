package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/repo"
)

// Where the CLI config is found, and the environment it reads.
const (
	// CLIConfigFile is the CLI config's file name wherever it is looked up.
	CLIConfigFile = "cli-config.yaml"
	// CLIConfigEnv names a CLI config file; it ranks below --config and
	// above the home lookup.
	CLIConfigEnv = "THE_LOOP_CLI_CONFIG"
	// HookPathEnv holds extra hook path directories, separated like $PATH.
	// They are searched after routing.graph.hookPath.
	HookPathEnv = "THE_LOOP_HOOK_PATH"
	// CurrentCLIConfigVersion is the CLI config format this build reads. A
	// file declaring an older version is refused until it is migrated.
	CurrentCLIConfigVersion = "0.5.0"
)

// Defaults for the CLI config keys the-loop reads.
const (
	// DefaultStateRoot is where generated state lives when state.root is
	// unset. "~" is the operator's home directory.
	DefaultStateRoot = "~/.the-loop"
	// DefaultExecuteKeyword answers the phase-selection gate.
	DefaultExecuteKeyword = "the-loop execute"
	// DefaultHookStepBudget is the Starlark step budget of one repository
	// hook call (routing.graph.hookLimits.steps).
	DefaultHookStepBudget uint64 = 10_000_000
	// DefaultHookDeadline is the wall-clock limit of one repository hook
	// call (routing.graph.hookLimits.seconds).
	DefaultHookDeadline = 5 * time.Second
	// MaxHookSeconds is the most routing.graph.hookLimits.seconds may say.
	MaxHookSeconds = 3600
	// DefaultHookBudget is the rule time all repository hooks of one
	// evaluation may spend together (routing.graph.hookBudget.seconds).
	DefaultHookBudget = 60 * time.Second
	// MaxHookBudgetSeconds is the most routing.graph.hookBudget.seconds
	// may say.
	MaxHookBudgetSeconds = 86400
)

// Defaults of the webhook receiver, webhooks.ghWebhook, and of the routing
// keys it reads.
const (
	DefaultWebhookHost      = "127.0.0.1"
	DefaultWebhookPort      = 8787
	DefaultWebhookPath      = "/gh-webhook"
	DefaultWebhookSecretEnv = "THE_LOOP_GH_WEBHOOK_SECRET"
	// DefaultDedupCacheSize is how many processed delivery ids the
	// receiver remembers (routing.dedupCacheSize). The original kept 1024
	// in memory; ours are on disk and GitHub's redelivery reaches back
	// days, so the default is larger.
	//
	// Departure from the original (docs/compatibility.md#ingress-delivery-ids-are-remembered-on-disk): delivery ids are kept on disk, 100,000 by default, not 1024 in memory.
	DefaultDedupCacheSize = 100_000
	// DefaultMaxConcurrentDispatches bounds the deliveries processed at
	// once (routing.maxConcurrentDispatches).
	DefaultMaxConcurrentDispatches = 4
)

// DefaultWebhookEvents are the GitHub events the receiver accepts when
// webhooks.ghWebhook.events is unset or empty: every event the-loop can map
// to a work item, issues and pull_request among them so that an item's end
// always arrives.
var DefaultWebhookEvents = []string{
	"issues", "issue_comment", "pull_request", "pull_request_review", "pull_request_review_comment",
	"workflow_run", "check_run", "check_suite", "status",
}

// WebhookLifecycleEvents are the events without which a closed issue or a
// merged pull request never reaches the receiver.
var WebhookLifecycleEvents = []string{"issues", "pull_request"}

// Webhook is the GitHub webhook receiver's configuration: the
// webhooks.ghWebhook keys and the routing keys the receiver itself applies.
type Webhook struct {
	Host string // webhooks.ghWebhook.host
	Port int    // webhooks.ghWebhook.port
	Path string // webhooks.ghWebhook.path
	// SecretEnv names the environment variable holding the HMAC secret
	// (webhooks.ghWebhook.secretEnv); the secret is never in the file.
	SecretEnv string
	// Events are the event types accepted (webhooks.ghWebhook.events),
	// DefaultWebhookEvents when unset or empty. A copy.
	Events []string
	// Workers bounds the deliveries processed at once
	// (routing.maxConcurrentDispatches).
	Workers int
	// DedupCacheSize is how many processed delivery ids are remembered
	// (routing.dedupCacheSize).
	DedupCacheSize int
}

// Webhook returns the webhook receiver's configuration, defaults filled in.
func (c *CLIConfig) Webhook() Webhook {
	w := Webhook{
		Host: DefaultWebhookHost, Port: DefaultWebhookPort, Path: DefaultWebhookPath,
		SecretEnv: DefaultWebhookSecretEnv, Events: stringsAt(c.Doc, "webhooks.ghWebhook.events"),
		Workers: DefaultMaxConcurrentDispatches, DedupCacheSize: DefaultDedupCacheSize,
	}
	if s, ok := stringAt(c.Doc, "webhooks.ghWebhook.host"); ok && strings.TrimSpace(s) != "" {
		w.Host = strings.TrimSpace(s)
	}
	if n, ok := uintAt(c.Doc, "webhooks.ghWebhook.port"); ok && n > 0 && n <= 65535 {
		w.Port = int(n)
	}
	if s, ok := stringAt(c.Doc, "webhooks.ghWebhook.path"); ok && s != "" {
		w.Path = s
	}
	if s, ok := stringAt(c.Doc, "webhooks.ghWebhook.secretEnv"); ok && strings.TrimSpace(s) != "" {
		w.SecretEnv = strings.TrimSpace(s)
	}
	if len(w.Events) == 0 {
		w.Events = slices.Clone(DefaultWebhookEvents)
	}
	if n, ok := uintAt(c.Doc, "routing.maxConcurrentDispatches"); ok && n > 0 {
		w.Workers = int(min(n, 1024))
	}
	if n, ok := uintAt(c.Doc, "routing.dedupCacheSize"); ok && n > 0 {
		w.DedupCacheSize = int(min(n, 100_000_000))
	}
	return w
}

// Integrations outbound hooks can act through.
const (
	// IntegrationNone performs no outbound call: outbound hooks pass with a
	// warning. It is what local runs and CI get.
	IntegrationNone = "none"
	// IntegrationGitHub acts on GitHub.
	IntegrationGitHub = "github"
)

// ControlCommands lists the control commands whose keyword the CLI config
// may redeclare under routing.control.keywords.
var ControlCommands = []string{"start", "stop", "pause", "resume", "execute", "contribute", "do", "cleanup"}

// DefaultControlKeyword is the keyword of a control command when the config
// does not declare one: "the-loop " followed by the command.
func DefaultControlKeyword(command string) string { return "the-loop " + command }

// CLIConfigSource says where a CLI config was found.
type CLIConfigSource string

// The places a CLI config is looked for, in order.
const (
	SourceFlag     CLIConfigSource = "flag" // the --config argument
	SourceEnv      CLIConfigSource = "env"  // $THE_LOOP_CLI_CONFIG
	SourceHome     CLIConfigSource = "home" // ~/.the-loop/cli-config.yaml
	SourceDefaults CLIConfigSource = ""     // no file: built-in defaults
)

// CLIConfig is the operator's configuration of this machine: who may drive
// it, where its state lives, whether repository hooks run. It is tied to no
// repository. Use LoadCLIConfig; DefaultCLIConfig is the configuration of a
// machine with no file.
//
// A CLIConfig is immutable once loaded (callers must not modify Doc) and
// safe for concurrent use. The environment ($HOME, the working directory,
// $THE_LOOP_HOOK_PATH) is read once, at load.
type CLIConfig struct {
	// Path is the absolute path of the file that was read, or "".
	Path string
	// Source says which lookup found Path.
	Source CLIConfigSource
	// Ignored is a CLI config found in the working directory
	// (./.the-loop/cli-config.yaml, where the original tool reads one) and
	// not read: it belongs to the checkout, which the operator's settings
	// must not come from. "" when there is none, or --config named it.
	Ignored string
	// Doc is the parsed document with JSON-compatible values; never nil.
	Doc map[string]any

	home    string // $HOME, "" when unknown
	workDir string // the working directory at load
	hookEnv string // $THE_LOOP_HOOK_PATH at load
}

// DefaultCLIConfig is the configuration of a machine with no CLI config
// file: every accessor answers its default.
func DefaultCLIConfig() *CLIConfig {
	c := &CLIConfig{Doc: map[string]any{}}
	c.snapshotEnv()
	return c
}

func (c *CLIConfig) snapshotEnv() {
	c.home, _ = os.UserHomeDir()
	c.workDir, _ = os.Getwd()
	c.hookEnv = os.Getenv(HookPathEnv)
}

// FindCLIConfig returns the CLI config file that LoadCLIConfig would read and
// where it was found: explicit when not "", then $THE_LOOP_CLI_CONFIG, then
// ~/.the-loop/cli-config.yaml. The first two name a file that must exist;
// a missing one is an error rather than a silent fall-through to another
// file. It returns "" and SourceDefaults when no file exists.
//
// A config in the working directory is never read: in CI the working
// directory is the checkout under review, and a committed
// .the-loop/cli-config.yaml could otherwise authorize its author, turn
// repository hooks back on or lift their limits. --config can still name it.
func FindCLIConfig(explicit string) (string, CLIConfigSource, error) {
	named := func(p string, src CLIConfigSource, how string) (string, CLIConfigSource, error) {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", src, fmt.Errorf("CLI config %s (%s): %w", p, how, err)
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return "", src, &graph.ConfigError{File: p, Msg: "CLI config named by " + how + " cannot be used", Err: err}
		}
		if !fi.Mode().IsRegular() {
			return "", src, &graph.ConfigError{File: p, Msg: "CLI config named by " + how + " is not a regular file"}
		}
		return abs, src, nil
	}
	if explicit != "" {
		return named(explicit, SourceFlag, "--config")
	}
	if env := os.Getenv(CLIConfigEnv); env != "" {
		return named(env, SourceEnv, "$"+CLIConfigEnv)
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		p := filepath.Join(home, ConfigDir, CLIConfigFile)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, SourceHome, nil
		}
	}
	return "", SourceDefaults, nil
}

// workDirCLIConfig is the working directory's .the-loop/cli-config.yaml
// when it exists (in any form) and is not the file read, else "".
//
// Departure from the original (docs/compatibility.md#a-cli-config-found-in-the-checkout-is-not-read): the checkout's cli-config.yaml is noted and ignored, never read.
func workDirCLIConfig(read string) string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	p := filepath.Join(wd, ConfigDir, CLIConfigFile)
	if _, err := os.Lstat(p); err != nil {
		return ""
	}
	if read != "" {
		if a, err := os.Stat(p); err == nil {
			if b, err := os.Stat(read); err == nil && os.SameFile(a, b) {
				return ""
			}
		}
	}
	return p
}

// LoadCLIConfig finds (see FindCLIConfig) and reads the CLI config. explicit
// is the --config argument, or "".
//
// No file anywhere is not an error: the result answers every key with its
// default. A file named by --config or $THE_LOOP_CLI_CONFIG that does not
// exist is. A file that is not a regular file, is over the size limit, is
// not valid YAML, is not a single mapping, still carries a key an older
// format used (or declares an older version), breaks the CLI config schema,
// or sets a hook limit out of range is a *graph.ConfigError naming the file,
// the line and the key.
func LoadCLIConfig(explicit string) (*CLIConfig, error) {
	path, src, err := FindCLIConfig(explicit)
	if err != nil {
		return nil, err
	}
	c := DefaultCLIConfig()
	c.Ignored = workDirCLIConfig(path)
	if path == "" {
		return c, nil
	}
	data, err := readConfig(path, func(limit int64) ([]byte, error) { return repo.ReadRegular(path, limit) })
	if err != nil {
		return nil, err
	}
	doc, top, err := parseMapping(data, path)
	if err != nil {
		return nil, err
	}
	if err := checkCurrent(doc, path, top); err != nil {
		return nil, err
	}
	if err := validateDoc(cliSchema, doc, path, top); err != nil {
		return nil, err
	}
	c.Path, c.Source, c.Doc = path, src, doc
	return c, nil
}

// retired is a key an older CLI config format used and this one does not.
// Such a key is refused rather than ignored: ignoring a value the operator
// set would change what their machine does without telling them.
type retired struct {
	path        []string
	replacement string
	why         string
}

var retiredKeys = []retired{
	{[]string{"webhooks", "ghWebhook", "routing"}, "routing", "the routing block governs every ingress, so it moved to the top level"},
	{[]string{"polling", "stateFile"}, "state.root", "poll state is kept per work item under the state root"},
	{[]string{"integrations", "slack"}, "channels.slack", "Slack is configured as a conversation channel"},
	{[]string{"routing", "control", "ghBinary"}, "integrations.github.cli.binary", "the gh binary is declared once"},
	{[]string{"routing", "reactions", "ghBinary"}, "integrations.github.cli.binary", "the gh binary is declared once"},
	{[]string{"routing", "announce", "ghBinary"}, "integrations.github.cli.binary", "the gh binary is declared once"},
}

// checkCurrent refuses a CLI config written for an older format, naming the
// key, its replacement and the fix.
func checkCurrent(doc map[string]any, file string, top *yaml.Node) error {
	for _, r := range retiredKeys {
		if v, ok := lookup(doc, strings.Join(r.path, ".")); ok && v != nil {
			return &graph.ConfigError{
				File: file,
				Line: lineOf(top, r.path, ""),
				Key:  strings.Join(r.path, "."),
				Msg: fmt.Sprintf("no longer read (%s); move it to %s",
					r.why, r.replacement),
			}
		}
	}
	if v, ok := doc["version"]; ok && v != nil {
		declared := fmt.Sprint(v)
		if compareVersions(declared, CurrentCLIConfigVersion) < 0 {
			return &graph.ConfigError{
				File: file,
				Line: lineOf(top, []string{"version"}, ""),
				Key:  "version",
				Msg: fmt.Sprintf("got version %s, want %s or later: this file was written for an older the-loop; update it to the current keys (`the-loop config schema cli`)",
					declared, CurrentCLIConfigVersion),
			}
		}
	}
	return nil
}

// compareVersions compares dotted versions numerically, reading the digits
// of each part ("0.5.0rc1" is 0.5.01), missing parts as zero.
func compareVersions(a, b string) int {
	pa, pb := versionParts(a), versionParts(b)
	for i := range max(len(pa), len(pb)) {
		var x, y int
		if i < len(pa) {
			x = pa[i]
		}
		if i < len(pb) {
			y = pb[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

func versionParts(v string) []int {
	var out []int
	for part := range strings.SplitSeq(v, ".") {
		var digits strings.Builder
		for _, r := range part {
			if r >= '0' && r <= '9' {
				digits.WriteRune(r)
			}
		}
		n, err := strconv.Atoi(digits.String())
		if err != nil {
			n = 0
		}
		out = append(out, n)
	}
	return out
}

// Lookup returns the value at a dotted key path ("routing.graph.enabled")
// and whether it is present.
func (c *CLIConfig) Lookup(key string) (any, bool) { return lookup(c.Doc, key) }

// AuthorizedUsers is the GitHub logins of routing.authorizedUsers (bare
// strings and github ids of person entries, in config order, each once):
// whose actions on GitHub the-loop acts on. It is AuthorizedOn(ChannelGitHub),
// kept because the router and the gates read GitHub logins only, so a
// person with only a chat id authorizes nothing there. Empty (the default)
// means no human-authored event is acted on. The slice is a copy.
func (c *CLIConfig) AuthorizedUsers() []string { return c.AuthorizedOn(ChannelGitHub) }

// GraphEnabled is routing.graph.enabled: whether ingress drives the process
// graph. Default true.
func (c *CLIConfig) GraphEnabled() bool {
	b, ok := boolAt(c.Doc, "routing.graph.enabled")
	return !ok || b
}

// RepoHooks is routing.graph.repoHooks: whether this machine runs the hooks
// repositories declare under graph.hooks. Default true; only an explicit
// false turns them off.
func (c *CLIConfig) RepoHooks() bool {
	b, ok := boolAt(c.Doc, "routing.graph.repoHooks")
	return !ok || b
}

// HookPath is the list of directories searched for repository hook modules
// named by module: routing.graph.hookPath (relative entries taken from the
// config file's directory) followed by $THE_LOOP_HOOK_PATH (relative entries
// taken from the working directory). "~" means the home directory. Empty
// entries and repeats are dropped; the result may be empty.
func (c *CLIConfig) HookPath() []string {
	var out []string
	add := func(p, base string) {
		if p = strings.TrimSpace(p); p == "" {
			return
		}
		p = c.expand(p, base)
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	base := c.workDir
	if c.Path != "" {
		base = filepath.Dir(c.Path)
	}
	for _, p := range stringsAt(c.Doc, "routing.graph.hookPath") {
		add(p, base)
	}
	for _, p := range filepath.SplitList(c.hookEnv) {
		add(p, c.workDir)
	}
	return out
}

// HookStepBudget is routing.graph.hookLimits.steps, the Starlark step budget
// of one repository hook call. Default DefaultHookStepBudget.
func (c *CLIConfig) HookStepBudget() uint64 {
	if n, ok := uintAt(c.Doc, "routing.graph.hookLimits.steps"); ok && n > 0 {
		return n
	}
	return DefaultHookStepBudget
}

// HookDeadline is routing.graph.hookLimits.seconds, the wall-clock limit of
// one repository hook call. Default DefaultHookDeadline.
func (c *CLIConfig) HookDeadline() time.Duration {
	s, ok := numberAt(c.Doc, "routing.graph.hookLimits.seconds")
	if !ok || s <= 0 {
		return DefaultHookDeadline
	}
	// The schema bounds it at an hour; a document that got past it any
	// other way is still never turned into a deadline that overflows.
	return time.Duration(min(s, MaxHookSeconds) * float64(time.Second))
}

// HookBudget is routing.graph.hookBudget.seconds, the rule time all
// repository hooks of one evaluation may spend together (see
// graph.Budget). Default DefaultHookBudget.
func (c *CLIConfig) HookBudget() time.Duration {
	s, ok := numberAt(c.Doc, "routing.graph.hookBudget.seconds")
	if !ok || s <= 0 {
		return DefaultHookBudget
	}
	return time.Duration(min(s, MaxHookBudgetSeconds) * float64(time.Second))
}

// SpecDirOverride is routing.graph.specDir: a spec directory that replaces
// every repository's workflow.specDir. "" (the default) means no override.
func (c *CLIConfig) SpecDirOverride() string {
	s, _ := stringAt(c.Doc, "routing.graph.specDir")
	return strings.TrimSpace(s)
}

// ControlEnabled is routing.control.enabled: whether control keywords in
// comments are recognised. Default true.
func (c *CLIConfig) ControlEnabled() bool {
	b, ok := boolAt(c.Doc, "routing.control.enabled")
	return !ok || b
}

// ControlKeyword is the keyword of a control command (one of
// ControlCommands): routing.control.keywords.<command> when declared, an
// explicit "" disabling the command, else DefaultControlKeyword(command).
func (c *CLIConfig) ControlKeyword(command string) string {
	if s, ok := stringAt(c.Doc, "routing.control.keywords."+command); ok {
		return s
	}
	return DefaultControlKeyword(command)
}

// RequireStartCommand is routing.control.requireStartCommand: whether a
// bound work item waits for an authorized person's start command before
// the ingress drives its graph. Default true. It means nothing when control
// keywords are off (ControlEnabled false): there is then no way to say
// start, and nothing waits for it.
func (c *CLIConfig) RequireStartCommand() bool {
	b, ok := boolAt(c.Doc, "routing.control.requireStartCommand")
	return !ok || b
}

// The moments the ingress acknowledges a comment with a reaction, as
// routing.reactions names them.
const (
	// ReactionStarted: the comment was accepted (default eyes).
	ReactionStarted = "started"
	// ReactionCompleted: it moved the graph (default hooray).
	ReactionCompleted = "completed"
	// ReactionError: it was refused, or processing it failed (default
	// confused).
	ReactionError = "error"
)

var defaultReactions = map[string]string{ReactionStarted: "eyes", ReactionCompleted: "hooray", ReactionError: "confused"}

// ReactionsEnabled is routing.reactions.enabled. Default true.
func (c *CLIConfig) ReactionsEnabled() bool {
	b, ok := boolAt(c.Doc, "routing.reactions.enabled")
	return !ok || b
}

// Reaction is routing.reactions.<moment> (ReactionStarted, ...): one of
// GitHub's reaction names, "" when the operator turned that moment off,
// else its default. An unknown moment is "".
func (c *CLIConfig) Reaction(moment string) string {
	if s, ok := stringAt(c.Doc, "routing.reactions."+moment); ok {
		return s
	}
	return defaultReactions[moment]
}

// ExecuteKeyword is the keyword that answers the phase-selection gate:
// routing.control.keywords.execute, default DefaultExecuteKeyword.
func (c *CLIConfig) ExecuteKeyword() string { return c.ControlKeyword("execute") }

// StateRoot is the absolute directory holding everything the CLI generates
// (state.root). Unset means DefaultStateRoot, in the home directory. A
// leading "~" is the home directory; a relative value is taken from the
// working directory, as the original tool did.
func (c *CLIConfig) StateRoot() string {
	if s, ok := stringAt(c.Doc, "state.root"); ok && strings.TrimSpace(s) != "" {
		return c.expand(strings.TrimSpace(s), c.workDir)
	}
	return c.expand(DefaultStateRoot, c.workDir)
}

// EventLogEnabled is eventLog.enabled. Default true.
func (c *CLIConfig) EventLogEnabled() bool {
	b, ok := boolAt(c.Doc, "eventLog.enabled")
	return !ok || b
}

// EventLogPath is eventLog.path when set (expanded like StateRoot), else
// <StateRoot>/logs/events.jsonl.
func (c *CLIConfig) EventLogPath() string {
	if s, ok := stringAt(c.Doc, "eventLog.path"); ok && strings.TrimSpace(s) != "" {
		return c.expand(strings.TrimSpace(s), c.workDir)
	}
	return filepath.Join(c.StateRoot(), "logs", "events.jsonl")
}

// Integration names the integration outbound hooks act through:
// IntegrationGitHub when the config declares an integrations.github block,
// else IntegrationNone, so that a machine (or CI job) with no CLI config
// never makes outbound calls.
func (c *CLIConfig) Integration() string {
	if _, ok := mapAt(c.Doc, "integrations.github"); ok {
		return IntegrationGitHub
	}
	return IntegrationNone
}

// Integrations is the raw integrations block, or an empty map.
func (c *CLIConfig) Integrations() map[string]any {
	if m, ok := mapAt(c.Doc, "integrations"); ok {
		return m
	}
	return map[string]any{}
}

// Channels is the raw channels block, or an empty map.
func (c *CLIConfig) Channels() map[string]any {
	if m, ok := mapAt(c.Doc, "channels"); ok {
		return m
	}
	return map[string]any{}
}

// expand makes p absolute: "~" and "~/..." are the home directory (the
// working directory when there is no home), a relative path joins base.
func (c *CLIConfig) expand(p, base string) string {
	if p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, "~"+string(filepath.Separator)) {
		home := c.home
		if home == "" {
			home = c.workDir
		}
		return filepath.Join(home, p[1:])
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// MCPTokenEnv names the environment variable holding the bearer token
// serve requires at /mcp (service.mcp.tokenEnv); "" when the config names
// none, or service.mcp.enabled is false: then serve answers no MCP.
func (c *CLIConfig) MCPTokenEnv() string {
	if on, ok := boolAt(c.Doc, "service.mcp.enabled"); ok && !on {
		return ""
	}
	s, _ := stringAt(c.Doc, "service.mcp.tokenEnv")
	return strings.TrimSpace(s)
}
