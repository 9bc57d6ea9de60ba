package slack

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/the-loop/the-loop/channels/ingress"
	"strings"

	"github.com/the-loop/the-loop/channels"
)

// MaxBody bounds an Events API request's body. Slack's events are a few
// KiB (a message is at most 40,000 characters); a MiB is generous, and
// small enough that reading one before its signature is checked costs
// little.
const MaxBody = 1 << 20

// The outer types of an Events API request this package reads.
const (
	// TypeURLVerification is the handshake Slack sends when the Request
	// URL is set: it is answered with its challenge.
	TypeURLVerification = "url_verification"
	// TypeEventCallback carries one event the app subscribed to.
	TypeEventCallback = "event_callback"
	// TypeAppRateLimited says Slack is holding events back from the app
	// for the rest of a minute: they are not sent, then or later.
	TypeAppRateLimited = "app_rate_limited"
)

// ErrNotEnvelope is wrapped by ParseEvent's errors: the body is not an
// Events API request this package reads.
var ErrNotEnvelope = errors.New("not a Slack Events API request")

// Envelope is the outer JSON of an Events API request.
type Envelope struct {
	// Type is TypeURLVerification, TypeEventCallback or TypeAppRateLimited.
	Type string
	// Challenge is url_verification's token to echo back.
	Challenge string
	// EventID is event_callback's event_id: unique per event, and kept by
	// Slack's retries of it. It is printable ASCII, at most 128 bytes.
	EventID string
	// TeamID is the workspace the event happened in.
	TeamID string
	// EventType is the inner event's type: message, app_mention, ...
	EventType string
	// Event is the inner event as sent, a JSON object.
	Event json.RawMessage
}

// ParseEvent reads an Events API request's body. It refuses (with an error
// wrapping ErrNotEnvelope) a body over MaxBody or not a JSON object, an
// outer type other than the three it knows, a url_verification with no
// challenge, and an event_callback whose event_id is missing or not short
// printable ASCII or whose event is not an object with a type. It checks
// no signature: Verify the body first.
func ParseEvent(body []byte) (Envelope, error) {
	if len(body) > MaxBody {
		return Envelope{}, fmt.Errorf("%w: body over %d bytes", ErrNotEnvelope, MaxBody)
	}
	var raw struct {
		Type      string          `json:"type"`
		Challenge string          `json:"challenge"`
		EventID   string          `json:"event_id"`
		TeamID    string          `json:"team_id"`
		Event     json.RawMessage `json:"event"`
	}
	if b := bytes.TrimLeft(body, " \t\r\n"); len(b) == 0 || b[0] != '{' {
		return Envelope{}, fmt.Errorf("%w: the body is not a JSON object", ErrNotEnvelope)
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return Envelope{}, fmt.Errorf("%w: %v", ErrNotEnvelope, err)
	}
	env := Envelope{Type: raw.Type}
	switch raw.Type {
	case TypeURLVerification:
		if raw.Challenge == "" || len(raw.Challenge) > 512 {
			return Envelope{}, fmt.Errorf("%w: url_verification without a challenge of at most 512 bytes", ErrNotEnvelope)
		}
		env.Challenge = raw.Challenge
	case TypeEventCallback:
		if !ingress.ValidID(raw.EventID) {
			return Envelope{}, fmt.Errorf("%w: event_callback without an event_id of printable ASCII, at most 128 bytes", ErrNotEnvelope)
		}
		if raw.TeamID != "" && !ingress.ValidID(raw.TeamID) {
			return Envelope{}, fmt.Errorf("%w: malformed team_id", ErrNotEnvelope)
		}
		var inner struct {
			Type string `json:"type"`
		}
		if e := bytes.TrimLeft(raw.Event, " \t\r\n"); len(e) == 0 || e[0] != '{' || json.Unmarshal(e, &inner) != nil {
			return Envelope{}, fmt.Errorf("%w: event_callback whose event is not a JSON object", ErrNotEnvelope)
		}
		if !ingress.ValidEvent(inner.Type) {
			return Envelope{}, fmt.Errorf("%w: event_callback whose event has no type of lower-case words", ErrNotEnvelope)
		}
		env.EventID, env.TeamID, env.EventType, env.Event = raw.EventID, raw.TeamID, inner.Type, raw.Event
	case TypeAppRateLimited:
		if raw.TeamID != "" && !ingress.ValidID(raw.TeamID) {
			return Envelope{}, fmt.Errorf("%w: malformed team_id", ErrNotEnvelope)
		}
		env.TeamID = raw.TeamID
	case "":
		return Envelope{}, fmt.Errorf("%w: no type", ErrNotEnvelope)
	default:
		return Envelope{}, fmt.Errorf("%w: type %q, want %s or %s", ErrNotEnvelope, clip(raw.Type), TypeEventCallback, TypeURLVerification)
	}
	return env, nil
}

// Why ReplyOf found no reply in an envelope.
const (
	// NotAnEvent: the envelope is not an event_callback.
	NotAnEvent = "not-an-event"
	// NotAMessage: the event is not a message (a reaction, a join, ...).
	NotAMessage = "not-a-message"
	// NotANewMessage: a message event that is not a message written: an
	// edit (message_changed), a deletion (message_deleted), a join, a topic
	// change, ... Only a plain message, a message with files (file_share),
	// a thread reply also sent to the channel (thread_broadcast) and a
	// bot's (bot_message) are.
	NotANewMessage = "not-a-new-message"
	// NoAuthor: neither a user nor a bot wrote it.
	NoAuthor = "no-author"
	// NoTimestamp: it has no ts, so it cannot be replied to or acknowledged.
	NoTimestamp = "no-timestamp"
	// NoChannel: it names no channel.
	NoChannel = "no-channel"
	// MalformedEvent: the event cannot be read as a message, or an id in it
	// is not short printable ASCII.
	MalformedEvent = "malformed-event"
)

// newMessage are the message subtypes that are a message written. A
// message someone sends with a file attached is file_share, not a plain
// message: its text is what they wrote beside the file, and a threaded
// answer given with a screenshot is still an answer. The files themselves
// are not read.
//
// Departure from the original (docs/compatibility.md#slack-file_share-messages-are-messages): of the subtypes, a few are read, not every one.
var newMessage = map[string]bool{"": true, "file_share": true, "thread_broadcast": true, "bot_message": true}

// ReplyOf is the channels.Reply a message event carries, or an empty Reply
// and why the envelope carries none (NotAMessage, NotANewMessage, ...).
//
// Thread is the message's thread_ts, or its own ts when it has none;
// TopLevel is set when it starts a thread rather than replying in one; Bot
// is set when a bot wrote it (bot_id, or subtype bot_message), the-loop's
// own bot included.
func ReplyOf(env Envelope) (channels.Reply, string) {
	if env.Type != TypeEventCallback {
		return channels.Reply{}, NotAnEvent
	}
	if env.EventType != "message" {
		return channels.Reply{}, NotAMessage
	}
	var m struct {
		Subtype  string `json:"subtype"`
		Channel  string `json:"channel"`
		User     string `json:"user"`
		BotID    string `json:"bot_id"`
		Text     string `json:"text"`
		TS       string `json:"ts"`
		ThreadTS string `json:"thread_ts"`
	}
	if err := json.Unmarshal(env.Event, &m); err != nil {
		return channels.Reply{}, MalformedEvent
	}
	switch {
	case !newMessage[m.Subtype]:
		return channels.Reply{}, NotANewMessage
	case m.User == "" && m.BotID == "":
		return channels.Reply{}, NoAuthor
	case m.TS == "":
		return channels.Reply{}, NoTimestamp
	case m.Channel == "":
		return channels.Reply{}, NoChannel
	}
	for _, id := range []string{m.Channel, m.User, m.BotID, m.TS, m.ThreadTS} {
		if id != "" && !(ingress.ValidID(id) && len(id) <= 64) {
			return channels.Reply{}, MalformedEvent
		}
	}
	thread := m.ThreadTS
	if thread == "" {
		thread = m.TS
	}
	return channels.Reply{
		Channel:   channels.ChannelSlack,
		ChannelID: m.Channel,
		Thread:    thread,
		TS:        m.TS,
		Author:    m.User,
		Text:      quotesOf(m.Text),
		TopLevel:  thread == m.TS,
		Bot:       m.BotID != "" || m.Subtype == "bot_message",
	}, ""
}

// quotesOf gives back the quote marks of a message's text. Slack sends a
// block quote as "&gt; " (it escapes '<', '>' and '&' in every message);
// a reader that did not see it as a quote would read the quoted words as
// the person's own. Only a '>' opening a line is given back: a '<' left
// escaped can never open an HTML comment, so a message can never carry
// an envelope of its own into the ledger's record.
func quotesOf(text string) string {
	if !strings.Contains(text, "&gt;") {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		rest := strings.TrimLeft(l, " ")
		if after, ok := strings.CutPrefix(rest, "&gt;"); ok {
			lines[i] = l[:len(l)-len(rest)] + ">" + after
		}
	}
	return strings.Join(lines, "\n")
}
