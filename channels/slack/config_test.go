package slack_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/slack"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/policy"
)

// cliWith is a CLI config whose channels.slack block is block (left out
// when nil).
func cliWith(block any) *policy.CLIConfig {
	doc := map[string]any{}
	if block != nil {
		doc["channels"] = map[string]any{"slack": block}
	}
	return &policy.CLIConfig{Doc: doc}
}

func defaults() slack.Config {
	return slack.Config{
		BotTokenEnv:      "THE_LOOP_SLACK_BOT_TOKEN",
		SigningSecretEnv: "SLACK_SIGNING_SECRET",
		APIBaseURL:       "https://slack.com/api",
		Publish:          []string{channels.EventReply},
		ReadMode:         slack.ReadPoll,
		Reactions:        slack.Reactions{Enabled: true, Received: "eyes", Completed: "white_check_mark", Error: "warning"},
	}
}

func TestConfigOf(t *testing.T) {
	tests := []struct {
		name  string
		block any
		edit  func(*slack.Config) // applied to defaults()
		warns []string            // substrings, one per warning
	}{
		{name: "no block is a disabled channel with every default", block: nil},
		{name: "an empty block is the defaults", block: map[string]any{}},
		{
			name: "every key set is read",
			block: map[string]any{
				"enabled": true, "botTokenEnv": "MY_BOT", "signingSecretEnv": "MY_SECRET",
				"apiBaseUrl": "https://slack.example.com/api/", "channel": " C0123 ",
				"publish":   []any{"gate.feedback", "work-item.reply", "gate.feedback"},
				"read":      map[string]any{"mode": "events"},
				"reactions": map[string]any{"enabled": false, "received": "hourglass", "completed": "tada", "error": "x"},
			},
			edit: func(c *slack.Config) {
				c.Enabled, c.BotTokenEnv, c.SigningSecretEnv = true, "MY_BOT", "MY_SECRET"
				c.APIBaseURL, c.Channel = "https://slack.example.com/api", "C0123"
				c.Publish = []string{channels.EventGateFeedback, channels.EventReply}
				c.ReadMode = slack.ReadEvents
				c.Reactions = slack.Reactions{Received: "hourglass", Completed: "tada", Error: "x"}
			},
		},
		{
			name:  "blank token and secret variables keep their defaults",
			block: map[string]any{"botTokenEnv": "  ", "signingSecretEnv": ""},
		},
		{
			name:  "an unknown grant is left out with a warning naming the key and the grants",
			block: map[string]any{"publish": []any{"gate.feedbak", "control.command", "work-item-complete"}},
			edit:  func(c *slack.Config) { c.Publish = []string{channels.EventControl} },
			warns: []string{
				`channels.slack.publish: "gate.feedbak" is not a grant and is ignored; want one of work-item.reply, gate.feedback, control.command, work-item.create`,
				`channels.slack.publish: "work-item-complete"`,
			},
		},
		{
			name:  "an empty publish list grants nothing",
			block: map[string]any{"publish": []any{}},
			edit:  func(c *slack.Config) { c.Publish = []string{} },
		},
		{
			name:  "a grant that is not a string is ignored, not dropped silently",
			block: map[string]any{"publish": []any{7}},
			edit:  func(c *slack.Config) { c.Publish = []string{} },
			warns: []string{`channels.slack.publish: "7" is not a grant`},
		},
		{
			name:  "a mistyped read mode reads nothing, with a warning",
			block: map[string]any{"read": map[string]any{"mode": "pol"}},
			edit:  func(c *slack.Config) { c.ReadMode = slack.ReadOff },
			warns: []string{`channels.slack.read.mode: got "pol", want one of poll, socket, events, off`},
		},
		{
			name:  "read modes are case-sensitive",
			block: map[string]any{"read": map[string]any{"mode": "Socket"}},
			edit:  func(c *slack.Config) { c.ReadMode = slack.ReadOff },
			warns: []string{"channels.slack.read.mode"},
		},
		{
			name:  "socket is read as socket",
			block: map[string]any{"read": map[string]any{"mode": "socket", "intervalSeconds": 30}},
			edit:  func(c *slack.Config) { c.ReadMode = slack.ReadSocket },
		},
		{
			name:  "a reaction name loses its colons",
			block: map[string]any{"reactions": map[string]any{"received": ":eyes:", "completed": ":+1:", "error": "::no_entry::"}},
			edit: func(c *slack.Config) {
				c.Reactions.Received, c.Reactions.Completed, c.Reactions.Error = "eyes", "+1", "no_entry"
			},
		},
		{
			name:  "an empty reaction name skips its state without a warning",
			block: map[string]any{"reactions": map[string]any{"completed": ""}},
			edit:  func(c *slack.Config) { c.Reactions.Completed = "" },
		},
		{
			name: "a malformed reaction name skips its state with a warning naming it",
			block: map[string]any{"reactions": map[string]any{
				"received": "Thumbs Up", "error": strings.Repeat("a", 101),
			}},
			edit: func(c *slack.Config) { c.Reactions.Received, c.Reactions.Error = "", "" },
			warns: []string{
				`channels.slack.reactions.received: got "Thumbs Up", want a reaction name`,
				"channels.slack.reactions.error: got ",
			},
		},
		{
			name:  "a loopback http API root is allowed, for tests",
			block: map[string]any{"apiBaseUrl": "http://127.0.0.1:8080/api/"},
			edit:  func(c *slack.Config) { c.APIBaseURL = "http://127.0.0.1:8080/api" },
		},
		{
			name:  "null values read as unset",
			block: map[string]any{"enabled": nil, "publish": nil, "events": nil, "authorizedUsers": nil},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warns, err := slack.ConfigOf(cliWith(tt.block))
			if err != nil {
				t.Fatal(err)
			}
			want := defaults()
			if tt.edit != nil {
				tt.edit(&want)
			}
			if !equalConfig(got, want) {
				t.Errorf("ConfigOf:\n got %+v\nwant %+v", got, want)
			}
			if len(warns) != len(tt.warns) {
				t.Fatalf("warnings %q, want %d", warns, len(tt.warns))
			}
			for i, w := range tt.warns {
				if !strings.Contains(warns[i], w) {
					t.Errorf("warning %d is %q, want it to say %q", i, warns[i], w)
				}
			}
		})
	}
}

func equalConfig(a, b slack.Config) bool {
	return reflect.DeepEqual(a, b)
}

func TestConfigOfRefuses(t *testing.T) {
	tests := []struct {
		name  string
		block any
		key   string
		msg   string
	}{
		{"a block that is not a mapping", "on", "channels.slack", "want a mapping"},
		{"the removed authorizedUsers, pointing at people with a slack id", map[string]any{"authorizedUsers": []any{"U0123"}},
			"channels.slack.authorizedUsers", "routing.authorizedUsers, through each person's slack: id"},
		{"the removed events, pointing at subscribe", map[string]any{"events": []any{"decision-pending"}},
			"channels.slack.events", "channels.slack.subscribe"},
		{"an API root that is not a URL", map[string]any{"apiBaseUrl": "slack.com/api"}, "channels.slack.apiBaseUrl", "want an absolute https URL"},
		{"an API root of another scheme", map[string]any{"apiBaseUrl": "ftp://slack.com/api"}, "channels.slack.apiBaseUrl", "want an absolute https URL"},
		{"an API root in cleartext to another host", map[string]any{"apiBaseUrl": "http://slack.example.com/api"}, "channels.slack.apiBaseUrl", "in the clear"},
		{"an API root with credentials", map[string]any{"apiBaseUrl": "https://u:p@slack.com/api"}, "channels.slack.apiBaseUrl", "no credentials"},
		{"enabled that is not a boolean", map[string]any{"enabled": "yes"}, "channels.slack.enabled", "got a string, want true or false"},
		{"publish that is not a list", map[string]any{"publish": "gate.feedback"}, "channels.slack.publish", "want a list of strings"},
		{"read that is not a mapping", map[string]any{"read": "poll"}, "channels.slack.read", "want a mapping"},
		{"a reaction that is not a string", map[string]any{"reactions": map[string]any{"error": 3}}, "channels.slack.reactions.error", "want a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := slack.ConfigOf(cliWith(tt.block))
			var ce *graph.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want a *graph.ConfigError", err)
			}
			if ce.Key != tt.key || !strings.Contains(ce.Msg, tt.msg) {
				t.Errorf("got key %q msg %q, want key %q and a msg saying %q", ce.Key, ce.Msg, tt.key, tt.msg)
			}
		})
	}
}

func TestConfigOfNilIsDefaults(t *testing.T) {
	got, warns, err := slack.ConfigOf(nil)
	if err != nil || len(warns) > 0 || !equalConfig(got, defaults()) {
		t.Errorf("ConfigOf(nil) = %+v, %q, %v; want the defaults", got, warns, err)
	}
}

func TestGranted(t *testing.T) {
	c, _, err := slack.ConfigOf(cliWith(map[string]any{"publish": []any{"gate.feedback"}}))
	if err != nil {
		t.Fatal(err)
	}
	for event, want := range map[string]bool{
		channels.EventGateFeedback: true,
		channels.EventReply:        false, // not granted once publish is set
		channels.EventControl:      false,
		"":                         false,
	} {
		if got := c.Granted(event); got != want {
			t.Errorf("Granted(%q) = %v, want %v", event, got, want)
		}
	}
	if (slack.Config{}).Granted(channels.EventReply) {
		t.Error("the zero Config grants work-item.reply; it should grant nothing")
	}
}

func TestReactionsFor(t *testing.T) {
	r := slack.Reactions{Enabled: true, Received: "eyes", Completed: "", Error: "warning"}
	tests := []struct {
		name  string
		r     slack.Reactions
		state string
		want  string
	}{
		{"a named state", r, slack.StateReceived, "eyes"},
		{"a skipped state", r, slack.StateCompleted, ""},
		{"the error state", r, slack.StateError, "warning"},
		{"no such state", r, "started", ""},
		{"reactions off", slack.Reactions{Received: "eyes"}, slack.StateReceived, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.For(tt.state); got != tt.want {
				t.Errorf("For(%q) = %q, want %q", tt.state, got, tt.want)
			}
		})
	}
}
