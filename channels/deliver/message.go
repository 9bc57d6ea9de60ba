package deliver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Message is one message heard for a work item on a chat channel. Every
// field but Ref is as the channel reported it, and is not to be trusted
// for anything but display.
type Message struct {
	// Ref is the work item, github:OWNER/REPO#N; Deliver fills it from the
	// binding when it is "".
	Ref string
	// Channel is the chat channel's name in the CLI config: "slack".
	Channel string
	// Thread is the thread the message is in (Slack's thread_ts).
	Thread string
	// TS is the message's own id on the channel (Slack's ts).
	TS string
	// Author is the author's id on the channel (a Slack member id).
	Author string
	// Text is the message as written.
	Text string
	// At is when it was written; Deliver stamps it with the time of
	// delivery when it is zero. It is written in UTC.
	At time.Time
}

// wire is a Message as JSON: its field names are what a delivery target
// reads, and do not change.
type wire struct {
	Ref     string `json:"ref"`
	Channel string `json:"channel"`
	Thread  string `json:"thread"`
	TS      string `json:"ts"`
	Author  string `json:"author"`
	Text    string `json:"text"`
	At      string `json:"at"`
}

// MarshalJSON writes m with At in RFC 3339, UTC, and its <, > and & as
// written: an inbox is read by people as well as programs.
func (m Message) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(wire{Ref: m.Ref, Channel: m.Channel, Thread: m.Thread, TS: m.TS,
		Author: m.Author, Text: m.Text, At: m.At.UTC().Format(time.RFC3339Nano)})
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), err
}

// UnmarshalJSON reads what MarshalJSON writes, strictly: an unknown field
// or a time that is not RFC 3339 is an error.
func (m *Message) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var w wire
	if err := dec.Decode(&w); err != nil {
		return err
	}
	at, err := time.Parse(time.RFC3339Nano, w.At)
	if err != nil {
		return fmt.Errorf("at: got %q, want an RFC 3339 time", w.At)
	}
	*m = Message{Ref: w.Ref, Channel: w.Channel, Thread: w.Thread, TS: w.TS, Author: w.Author, Text: w.Text, At: at.UTC()}
	return nil
}

// line is m as one line of JSON, newline included.
func (m Message) line() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
