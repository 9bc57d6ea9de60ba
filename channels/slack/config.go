package slack

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/internal/lazyregexp"
	"github.com/the-loop/the-loop/policy"
)

// Defaults of the channels.slack keys a config leaves unset.
const (
	DefaultBotTokenEnv      = "THE_LOOP_SLACK_BOT_TOKEN"
	DefaultSigningSecretEnv = "SLACK_SIGNING_SECRET"
	DefaultAPIBaseURL       = "https://slack.com/api"
)

// The ways messages on the channel reach the-loop (channels.slack.read.mode).
const (
	// ReadPoll reads the channel's history on an interval: the default.
	ReadPoll = "poll"
	// ReadSocket holds a Socket Mode connection.
	ReadSocket = "socket"
	// ReadEvents receives the Events API, posted to `the-loop serve` at
	// EventsPath.
	ReadEvents = "events"
	// ReadOff reads nothing. An unknown mode resolves to it.
	ReadOff = "off"
)

// ReadModes lists the read modes, in the order the reference gives them.
var ReadModes = []string{ReadPoll, ReadSocket, ReadEvents, ReadOff}

// The states a message is acknowledged in, as channels.slack.reactions
// names them.
const (
	// StateReceived: the message was taken in (default eyes).
	StateReceived = "received"
	// StateCompleted: it has been acted on (default white_check_mark).
	StateCompleted = "completed"
	// StateError: it was refused, or acting on it failed (default warning).
	StateError = "error"
)

// Reactions are the reaction names that acknowledge a message, without
// colons. A state whose name is "" is not acknowledged.
type Reactions struct {
	// Enabled is channels.slack.reactions.enabled, default true.
	Enabled   bool
	Received  string
	Completed string
	Error     string
}

// For is the reaction to add for state (StateReceived, ...): "" when
// reactions are off, the state is skipped, or it is no state.
func (r Reactions) For(state string) string {
	if !r.Enabled {
		return ""
	}
	switch state {
	case StateReceived:
		return r.Received
	case StateCompleted:
		return r.Completed
	case StateError:
		return r.Error
	}
	return ""
}

// Config is the operator's channels.slack block, defaults filled in. The
// zero value is a disabled channel granted nothing.
type Config struct {
	// Enabled is channels.slack.enabled, default false.
	Enabled bool
	// BotTokenEnv names the environment variable holding the bot token
	// (xoxb-); the token itself is never in the file. Read it with TokenFrom
	// when it is needed, so that a rotated token is picked up.
	BotTokenEnv string
	// SigningSecretEnv names the environment variable holding the app's
	// signing secret, which every Events API request is verified with.
	SigningSecretEnv string
	// APIBaseURL is the Web API's root, without a trailing slash: Slack's
	// own, or a test server or proxy.
	APIBaseURL string
	// Channel is channels.slack.channel: the Slack channel the-loop posts
	// to, "" when unset.
	Channel string
	// Publish are the grants: the catalog's event types a message on the
	// channel may become (channels.Grants). Never nil once read.
	Publish []string
	// ReadMode is one of ReadModes.
	ReadMode string
	// Reactions acknowledge the messages the-loop takes in.
	Reactions Reactions
}

// Granted reports whether a message on the channel may become event.
func (c Config) Granted(event string) bool { return slices.Contains(c.Publish, event) }

// reactionName is what Slack accepts as a reaction's name: an emoji's
// short name without its colons (skin tones are "name::skin-tone-2",
// which this refuses, as the-loop never sends one).
var reactionName = lazyregexp.New(`^[a-z0-9_+'-]{1,100}$`)

// removed are the keys an earlier channels.slack had, and what replaced
// them. A value for one is refused rather than ignored: the operator meant
// it to do something it no longer does.
var removed = []struct{ key, msg string }{
	{"authorizedUsers", "no longer read: who may speak on Slack is routing.authorizedUsers, through each person's slack: id"},
	{"events", "no longer read: what the channel is sent is channels.slack.subscribe"},
}

const block = "channels.slack"

// ConfigOf reads channels.slack from the operator's CLI config. A nil cli
// reads as an empty one.
//
// A value the channel can run with, but not as written, is a warning and
// never an error: a grant the catalog does not know is left out, an
// unknown read mode reads nothing, a malformed reaction name skips its
// state. Each resolves to doing less than the operator may have meant,
// never more. A removed key, a value of the wrong type, a block that is
// not a mapping or an API root that is not an http(s) URL is a
// *graph.ConfigError naming the key.
func ConfigOf(cli *policy.CLIConfig) (Config, []string, error) {
	c := Config{
		BotTokenEnv:      DefaultBotTokenEnv,
		SigningSecretEnv: DefaultSigningSecretEnv,
		APIBaseURL:       DefaultAPIBaseURL,
		ReadMode:         ReadPoll,
		Reactions:        Reactions{Enabled: true, Received: "eyes", Completed: "white_check_mark", Error: "warning"},
	}
	var raw any
	if cli != nil {
		raw, _ = cli.Lookup(block)
	}
	if raw == nil {
		c.Publish, _ = channels.Grants(nil, false)
		return c, nil, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return Config{}, nil, configError(block, "got %s, want a mapping", typeName(raw))
	}
	for _, r := range removed {
		if v, ok := m[r.key]; ok && v != nil {
			return Config{}, nil, &graph.ConfigError{Key: block + "." + r.key, Msg: r.msg}
		}
	}
	r := reader{m: m, prefix: block}
	var warnings []string

	if b, ok := r.bool("enabled"); ok {
		c.Enabled = b
	}
	if s, ok := r.string("botTokenEnv"); ok && strings.TrimSpace(s) != "" {
		c.BotTokenEnv = strings.TrimSpace(s)
	}
	if s, ok := r.string("signingSecretEnv"); ok && strings.TrimSpace(s) != "" {
		c.SigningSecretEnv = strings.TrimSpace(s)
	}
	if s, ok := r.string("apiBaseUrl"); ok && strings.TrimSpace(s) != "" {
		u, err := parseBaseURL(strings.TrimSpace(s))
		if err != nil {
			return Config{}, nil, &graph.ConfigError{Key: block + ".apiBaseUrl", Msg: err.Error()}
		}
		c.APIBaseURL = u
	}
	if s, ok := r.string("channel"); ok {
		c.Channel = strings.TrimSpace(s)
	}

	list, set := r.strings("publish")
	granted, ignored := channels.Grants(list, set)
	c.Publish = granted
	for _, name := range ignored {
		warnings = append(warnings, fmt.Sprintf("%s.publish: %q is not a grant and is ignored; want one of %s",
			block, name, strings.Join(channels.Publishable(), ", ")))
	}

	read := r.sub("read")
	if s, ok := read.string("mode"); ok {
		if slices.Contains(ReadModes, s) {
			c.ReadMode = s
		} else {
			c.ReadMode = ReadOff
			warnings = append(warnings, fmt.Sprintf("%s.read.mode: got %q, want one of %s; the channel is not read",
				block, s, strings.Join(ReadModes, ", ")))
		}
	}

	rx := r.sub("reactions")
	if b, ok := rx.bool("enabled"); ok {
		c.Reactions.Enabled = b
	}
	for _, st := range []struct {
		key  string
		name *string
	}{
		{StateReceived, &c.Reactions.Received},
		{StateCompleted, &c.Reactions.Completed},
		{StateError, &c.Reactions.Error},
	} {
		s, ok := rx.string(st.key)
		if !ok {
			continue
		}
		name, warning := reactionOf(s)
		*st.name = name
		if warning != "" {
			warnings = append(warnings, fmt.Sprintf("%s.reactions.%s: %s", block, st.key, warning))
		}
	}
	if r.err != nil {
		return Config{}, nil, r.err
	}
	return c, warnings, nil
}

// reactionOf reads a configured reaction name: its surrounding colons
// dropped (":eyes:" is eyes), "" when it skips the state, and a warning
// when the name cannot be one Slack accepts, which skips the state too.
func reactionOf(s string) (name, warning string) {
	name = strings.Trim(strings.TrimSpace(s), ":")
	if name == "" || reactionName.MatchString(name) {
		return name, ""
	}
	return "", fmt.Sprintf("got %q, want a reaction name such as eyes (lower-case letters, digits, _ + ' -); this state is not acknowledged", clip(s))
}

// parseBaseURL checks a Web API root: absolute http(s), with no
// credentials, query or fragment, and plain http only to a loopback host,
// because the bot token goes with every request. It returns it without a
// trailing slash.
func parseBaseURL(s string) (string, error) {
	s = strings.TrimRight(s, "/")
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return "", fmt.Errorf("got %q, want an absolute https URL such as %s", clip(s), DefaultAPIBaseURL)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return "", fmt.Errorf("got %q, want a URL with no credentials, query or fragment", clip(s))
	case u.Scheme == "http" && !loopback(u.Hostname()):
		return "", fmt.Errorf("got %q: plain http would send the bot token in the clear; use https", clip(s))
	}
	return s, nil
}

func loopback(host string) bool {
	switch host {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return strings.HasPrefix(host, "127.")
}

// reader reads typed values out of one mapping of the config, remembering
// the first value of the wrong type as a *graph.ConfigError. A loaded file
// has passed the schema; a hand-built document, or a schema that does not
// yet list a key, must still not be misread.
type reader struct {
	m      map[string]any
	prefix string
	err    error
	parent *reader
}

func (r *reader) fail(key, format string, args ...any) {
	root := r
	for root.parent != nil {
		root = root.parent
	}
	if root.err == nil {
		root.err = configError(r.prefix+"."+key, format, args...)
	}
}

func (r *reader) get(key string) (any, bool) {
	v, ok := r.m[key]
	return v, ok && v != nil
}

func (r *reader) bool(key string) (bool, bool) {
	v, ok := r.get(key)
	if !ok {
		return false, false
	}
	b, ok := v.(bool)
	if !ok {
		r.fail(key, "got %s, want true or false", typeName(v))
	}
	return b, ok
}

func (r *reader) string(key string) (string, bool) {
	v, ok := r.get(key)
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		r.fail(key, "got %s, want a string", typeName(v))
	}
	return s, ok
}

// strings reads a list of strings and whether the key is set at all. An
// entry that is not a string is kept as its printed form, so that Grants
// reports it as an ignored name rather than it vanishing.
func (r *reader) strings(key string) ([]string, bool) {
	v, ok := r.get(key)
	if !ok {
		return nil, false
	}
	l, ok := v.([]any)
	if !ok {
		r.fail(key, "got %s, want a list of strings", typeName(v))
		return nil, false
	}
	out := make([]string, 0, len(l))
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		} else {
			out = append(out, fmt.Sprint(e))
		}
	}
	return out, true
}

// sub is the reader of a nested mapping; an absent one reads as empty.
func (r *reader) sub(key string) *reader {
	s := &reader{m: map[string]any{}, prefix: r.prefix + "." + key, parent: r}
	v, ok := r.get(key)
	if !ok {
		return s
	}
	m, ok := v.(map[string]any)
	if !ok {
		r.fail(key, "got %s, want a mapping", typeName(v))
		return s
	}
	s.m = m
	return s
}

func configError(key, format string, args ...any) *graph.ConfigError {
	return &graph.ConfigError{Key: key, Msg: fmt.Sprintf(format, args...)}
}

// typeName names a config value's type as YAML would.
func typeName(v any) string {
	switch v.(type) {
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int64, uint64, float64:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}
