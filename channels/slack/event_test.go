package slack_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/slack"
	"github.com/the-loop/the-loop/channels/slack/slacktest"
)

func TestParseEvent(t *testing.T) {
	tests := []struct {
		name string
		body string
		want slack.Envelope // Event compared as its type only
		err  string
	}{
		{name: "the url_verification handshake carries its challenge",
			body: string(slacktest.URLVerification("3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P")),
			want: slack.Envelope{Type: slack.TypeURLVerification, Challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}},
		{name: "an event_callback carries its ids and its event",
			body: string(slacktest.MessageEvent("Ev0PV52K21", slacktest.Message{Channel: "C1", User: "U1", TS: "1.2", Text: "hi"})),
			want: slack.Envelope{Type: slack.TypeEventCallback, EventID: "Ev0PV52K21", TeamID: "T0000TEST", EventType: "message"}},
		{name: "an event of another type is still an event",
			body: `{"type":"event_callback","event_id":"Ev2","event":{"type":"reaction_added","user":"U1"}}`,
			want: slack.Envelope{Type: slack.TypeEventCallback, EventID: "Ev2", EventType: "reaction_added"}},
		{name: "app_rate_limited is read",
			body: `{"type":"app_rate_limited","team_id":"T1","minute_rate_limited":1518467820,"api_app_id":"A1"}`,
			want: slack.Envelope{Type: slack.TypeAppRateLimited, TeamID: "T1"}},
		{name: "leading white space is allowed", body: "\n {\"type\":\"url_verification\",\"challenge\":\"c\"}",
			want: slack.Envelope{Type: slack.TypeURLVerification, Challenge: "c"}},
		{name: "an empty body", body: "", err: "not a JSON object"},
		{name: "a form-encoded body", body: "payload=%7B%7D", err: "not a JSON object"},
		{name: "a JSON array", body: `[{"type":"event_callback"}]`, err: "not a JSON object"},
		{name: "truncated JSON", body: `{"type":"event_callback"`, err: "not a Slack Events API request"},
		{name: "no type", body: `{"event_id":"Ev1"}`, err: "no type"},
		{name: "an unknown type", body: `{"type":"block_actions"}`, err: `type "block_actions"`},
		{name: "a handshake without a challenge", body: `{"type":"url_verification"}`, err: "without a challenge"},
		{name: "a handshake with a huge challenge", body: `{"type":"url_verification","challenge":"` + strings.Repeat("c", 513) + `"}`, err: "without a challenge"},
		{name: "an event without an event_id", body: `{"type":"event_callback","event":{"type":"message"}}`, err: "without an event_id"},
		{name: "an event_id with a space", body: `{"type":"event_callback","event_id":"Ev 1","event":{"type":"message"}}`, err: "without an event_id"},
		{name: "an event_id with a control character", body: `{"type":"event_callback","event_id":"Ev\n1","event":{"type":"message"}}`, err: "without an event_id"},
		{name: "an event_id over 128 bytes", body: `{"type":"event_callback","event_id":"` + strings.Repeat("E", 129) + `","event":{"type":"message"}}`, err: "without an event_id"},
		{name: "an event_id that is not a string", body: `{"type":"event_callback","event_id":7,"event":{"type":"message"}}`, err: "not a Slack Events API request"},
		{name: "an event that is missing", body: `{"type":"event_callback","event_id":"Ev1"}`, err: "event is not a JSON object"},
		{name: "an event that is a string", body: `{"type":"event_callback","event_id":"Ev1","event":"message"}`, err: "event is not a JSON object"},
		{name: "an event with no type", body: `{"type":"event_callback","event_id":"Ev1","event":{"user":"U1"}}`, err: "no type"},
		{name: "an event type that is not a word", body: `{"type":"event_callback","event_id":"Ev1","event":{"type":"Message!"}}`, err: "no type"},
		{name: "a malformed team_id", body: `{"type":"event_callback","event_id":"Ev1","team_id":"T 1","event":{"type":"message"}}`, err: "team_id"},
		{name: "a body over MaxBody", body: `{"type":"url_verification","challenge":"c","pad":"` + strings.Repeat("x", slack.MaxBody) + `"}`, err: "over"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, err := slack.ParseEvent([]byte(tt.body))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, slack.ErrNotEnvelope) {
					t.Fatalf("ParseEvent = %+v, %v; want an ErrNotEnvelope saying %q", env, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want.Type == slack.TypeEventCallback && !json.Valid(env.Event) {
				t.Errorf("Event = %q, want the inner event's JSON", env.Event)
			}
			env.Event = nil
			if !reflect.DeepEqual(env, tt.want) {
				t.Errorf("ParseEvent =\n %+v\nwant %+v", env, tt.want)
			}
		})
	}
}

func TestReplyOf(t *testing.T) {
	parse := func(t *testing.T, body []byte) slack.Envelope {
		t.Helper()
		env, err := slack.ParseEvent(body)
		if err != nil {
			t.Fatal(err)
		}
		return env
	}
	msg := func(m slacktest.Message) []byte { return slacktest.MessageEvent("Ev1", m) }
	tests := []struct {
		name   string
		body   []byte
		want   channels.Reply
		reason string
	}{
		{name: "a reply in a thread is in that thread",
			body: msg(slacktest.Message{Channel: "C0123", User: "U0456", Text: "looks good", TS: "1700000100.000200", ThreadTS: "1700000000.000100"}),
			want: channels.Reply{Channel: "slack", ChannelID: "C0123", Thread: "1700000000.000100", TS: "1700000100.000200", Author: "U0456", Text: "looks good"}},
		{name: "Slack's escaped quote marks a quote again, and nothing else is unescaped",
			body: msg(slacktest.Message{Channel: "C0123", User: "U0456", Text: "&gt; approved\n  &gt; lgtm\nnot yet &gt; &lt;!-- x --&gt; &amp;", TS: "1700000100.000200", ThreadTS: "1700000000.000100"}),
			want: channels.Reply{Channel: "slack", ChannelID: "C0123", Thread: "1700000000.000100", TS: "1700000100.000200", Author: "U0456", Text: "> approved\n  > lgtm\nnot yet &gt; &lt;!-- x --&gt; &amp;"}},
		{name: "a top-level message is its own thread",
			body: msg(slacktest.Message{Channel: "C0123", User: "U0456", Text: "new idea", TS: "1700000000.000100"}),
			want: channels.Reply{Channel: "slack", ChannelID: "C0123", Thread: "1700000000.000100", TS: "1700000000.000100", Author: "U0456", Text: "new idea", TopLevel: true}},
		{name: "a thread's parent, whose thread_ts is its own ts, is top-level",
			body: msg(slacktest.Message{Channel: "C0123", User: "U0456", TS: "1700000000.000100", ThreadTS: "1700000000.000100"}),
			want: channels.Reply{Channel: "slack", ChannelID: "C0123", Thread: "1700000000.000100", TS: "1700000000.000100", Author: "U0456", TopLevel: true}},
		{name: "a thread reply also sent to the channel is a reply in its thread",
			body: msg(slacktest.Message{Channel: "C0123", User: "U0456", Subtype: "thread_broadcast", TS: "2.0", ThreadTS: "1.0"}),
			want: channels.Reply{Channel: "slack", ChannelID: "C0123", Thread: "1.0", TS: "2.0", Author: "U0456"}},
		{name: "a bot's message is marked a bot's",
			body: msg(slacktest.Message{Channel: "C0123", BotID: "B0789", Text: "question?", TS: "3.0", ThreadTS: "1.0"}),
			want: channels.Reply{Channel: "slack", ChannelID: "C0123", Thread: "1.0", TS: "3.0", Text: "question?", Bot: true}},
		{name: "a bot_message subtype is a bot's even with a user",
			body: msg(slacktest.Message{Channel: "C0123", User: "U0456", Subtype: "bot_message", TS: "3.0"}),
			want: channels.Reply{Channel: "slack", ChannelID: "C0123", Thread: "3.0", TS: "3.0", Author: "U0456", TopLevel: true, Bot: true}},
		{name: "an edit is not a new message",
			body: slacktest.EventCallback("Ev1", map[string]any{"type": "message", "subtype": "message_changed", "channel": "C0123", "ts": "4.0",
				"message": map[string]any{"user": "U0456", "text": "edited", "ts": "2.0"}}),
			reason: slack.NotANewMessage},
		{name: "a deletion is not a new message",
			body:   msg(slacktest.Message{Channel: "C0123", Subtype: "message_deleted", TS: "4.0"}),
			reason: slack.NotANewMessage},
		{name: "a message with a file is a message",
			body: msg(slacktest.Message{Channel: "C0123", User: "U0456", Subtype: "file_share", Text: "approved, screenshot attached", TS: "2.0", ThreadTS: "1.0"}),
			want: channels.Reply{Channel: "slack", ChannelID: "C0123", Thread: "1.0", TS: "2.0", Author: "U0456", Text: "approved, screenshot attached"}},
		{name: "a bot's message with a file is a bot's",
			body: msg(slacktest.Message{Channel: "C0123", BotID: "B0789", Subtype: "file_share", TS: "2.0", ThreadTS: "1.0"}),
			want: channels.Reply{Channel: "slack", ChannelID: "C0123", Thread: "1.0", TS: "2.0", Bot: true}},
		{name: "a file comment is not a new message",
			body:   msg(slacktest.Message{Channel: "C0123", User: "U0456", Subtype: "file_comment", TS: "4.0", ThreadTS: "1.0"}),
			reason: slack.NotANewMessage},
		{name: "a /me message stays what it was, not a new message",
			body:   msg(slacktest.Message{Channel: "C0123", User: "U0456", Subtype: "me_message", TS: "4.0", ThreadTS: "1.0"}),
			reason: slack.NotANewMessage},
		{name: "a join is not a new message",
			body:   msg(slacktest.Message{Channel: "C0123", User: "U0456", Subtype: "channel_join", TS: "4.0"}),
			reason: slack.NotANewMessage},
		{name: "a reaction is not a message",
			body:   slacktest.EventCallback("Ev1", map[string]any{"type": "reaction_added", "user": "U0456"}),
			reason: slack.NotAMessage},
		{name: "a handshake is not an event", body: slacktest.URLVerification("c"), reason: slack.NotAnEvent},
		{name: "a message with no user and no bot has no author",
			body: msg(slacktest.Message{Channel: "C0123", TS: "1.0"}), reason: slack.NoAuthor},
		{name: "a message with no ts cannot be answered",
			body: msg(slacktest.Message{Channel: "C0123", User: "U0456"}), reason: slack.NoTimestamp},
		{name: "a message with no channel",
			body: msg(slacktest.Message{User: "U0456", TS: "1.0"}), reason: slack.NoChannel},
		{name: "a message whose ts is not a string",
			body:   slacktest.EventCallback("Ev1", map[string]any{"type": "message", "channel": "C1", "user": "U1", "ts": 1.5}),
			reason: slack.MalformedEvent},
		{name: "a message whose user id has a space",
			body: msg(slacktest.Message{Channel: "C0123", User: "U0 456", TS: "1.0"}), reason: slack.MalformedEvent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason := slack.ReplyOf(parse(t, tt.body))
			if reason != tt.reason || got != tt.want {
				t.Errorf("ReplyOf =\n %+v, %q\nwant %+v, %q", got, reason, tt.want, tt.reason)
			}
		})
	}
}

func FuzzParseEvent(f *testing.F) {
	for _, seed := range [][]byte{
		slacktest.URLVerification("challenge"),
		slacktest.MessageEvent("Ev1", slacktest.Message{Channel: "C1", User: "U1", TS: "1.0", ThreadTS: "0.5", Text: "hi"}),
		slacktest.MessageEvent("Ev2", slacktest.Message{Channel: "C1", BotID: "B1", Subtype: "bot_message", TS: "1.0"}),
		slacktest.MessageEvent("Ev4", slacktest.Message{Channel: "C1", User: "U1", Subtype: "file_share", TS: "1.0", ThreadTS: "0.5", Text: "see file"}),
		slacktest.EventCallback("Ev3", map[string]any{"type": "message", "subtype": "message_changed", "message": map[string]any{"text": "x"}}),
		[]byte(`{"type":"app_rate_limited","team_id":"T1"}`),
		[]byte(`{"type":"event_callback","event_id":"E","event":{"type":"message","ts":null,"channel":{}}}`),
		[]byte(`{}`), []byte(`[]`), []byte(``), []byte(`{"type":"event_callback","event":`),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		env, err := slack.ParseEvent(body)
		if err != nil {
			if !errors.Is(err, slack.ErrNotEnvelope) {
				t.Fatalf("error %v does not wrap ErrNotEnvelope", err)
			}
			if env.Type != "" {
				t.Fatalf("an error returned an envelope %+v", env)
			}
			return
		}
		switch env.Type {
		case slack.TypeURLVerification:
			if env.Challenge == "" || len(env.Challenge) > 512 {
				t.Fatalf("challenge %q", env.Challenge)
			}
		case slack.TypeEventCallback:
			if env.EventID == "" || len(env.EventID) > 128 || strings.ContainsAny(env.EventID, " \t\r\n\x00\x7f") {
				t.Fatalf("event_id %q", env.EventID)
			}
			if env.EventType == "" || !json.Valid(env.Event) {
				t.Fatalf("event %q of type %q", env.Event, env.EventType)
			}
		case slack.TypeAppRateLimited:
		default:
			t.Fatalf("type %q accepted", env.Type)
		}
		r, reason := slack.ReplyOf(env)
		if reason == "" {
			if r.Channel != channels.ChannelSlack || r.ChannelID == "" || r.TS == "" || r.Thread == "" {
				t.Fatalf("reply %+v lacks an id", r)
			}
			if r.TopLevel != (r.Thread == r.TS) {
				t.Fatalf("reply %+v: TopLevel disagrees with its thread", r)
			}
			if r.Author == "" && !r.Bot {
				t.Fatalf("reply %+v has no author and is no bot's", r)
			}
		} else if r != (channels.Reply{}) {
			t.Fatalf("reason %q with a reply %+v", reason, r)
		}
	})
}

// TestSlackSDKMessagesWithFilesAndBroadcastsAreReplies holds ReplyOf to the
// message events Slack's own SDKs test with (testdata/README.md names
// them): a threaded reply with a file attached (file_share) and a thread
// reply also sent to the channel (thread_broadcast) are replies in their
// thread, by their author, with the text they wrote.
func TestSlackSDKMessagesWithFilesAndBroadcastsAreReplies(t *testing.T) {
	for _, tt := range []struct {
		file string
		want channels.Reply
	}{
		{"message_file_share_in_thread.json", channels.Reply{Channel: "slack", ChannelID: "C111", Thread: "1595552279.000600",
			TS: "1595552503.001300", Author: "W111", Text: "This is the text in the message"}},
		{"message_thread_broadcast.json", channels.Reply{Channel: "slack", ChannelID: "C123ABC456", Thread: "1673464730.703009",
			TS: "1673464745.620769", Author: "U123ABC456", Text: "broadcasting this reply"}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			var event map[string]any
			if err := json.Unmarshal(data, &event); err != nil {
				t.Fatal(err)
			}
			env, err := slack.ParseEvent(slacktest.EventCallback("Ev0SDK", event))
			if err != nil {
				t.Fatal(err)
			}
			got, reason := slack.ReplyOf(env)
			if reason != "" || got != tt.want {
				t.Errorf("ReplyOf =\n %+v, %q\nwant %+v, a reply", got, reason, tt.want)
			}
		})
	}
}
