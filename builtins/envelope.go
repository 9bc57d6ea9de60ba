package builtins

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/the-loop/the-loop/internal/lazyregexp"
)

// The ledger envelope. When the-loop records on a work item something that
// happened elsewhere (a reply given on a chat channel, posted to the issue
// with the operator's credentials), it appends an envelope: an invisible
// HTML comment holding what the record is (type), where it came from
// (source), who acted, by their id on each channel (actor), when (ts), and
// which event it records (id).
//
//	<!-- the-loop:event {"actor":{"github":"jc1993","slack":"U0456GHIJKL"},"id":"slack:C0123ABC:1712345999.000200","source":"slack","ts":"2026-03-04T23:30:00Z","type":"gate.feedback"} -->
//
// StampEnvelope writes it and ParseEnvelope reads it; both live here, beside
// the self-authored marker, so that what the-loop writes and what it
// recognises are the same lines of code. The gates read one thing from it:
// the actor's github id, to attribute a record to the person who answered
// rather than the account that posted it (see filterAuthorized). The ledger
// reads one more, the id, to find a record it may already have posted
// before it posts again. An envelope written before ids were has none and
// still reads. The JSON
// never contains '<', '>' or '&' unescaped, so no value can close the
// comment early or open another.
const envelopeTag = "the-loop:event"

// Envelope is what a ledger record says about itself. The zero Envelope is
// not a valid one: Type and Source are required.
type Envelope struct {
	// Type is what the record is ("gate.feedback", "work-item.reply").
	Type string
	// Source names the channel the event came from ("slack").
	Source string
	// Actor is who acted, by channel: {"github": "jc1993", "slack": "U0456GHIJKL"}.
	// Empty ids are never written nor read. Nil when nobody is named.
	Actor map[string]string
	// TS is when, as 2006-01-02T15:04:05Z; StampEnvelope fills in the
	// current time when it is "".
	TS string
	// ID names the event recorded, the same however often it is recorded
	// ("slack:C0123ABC:1712345999.000200", a Slack message by its channel
	// and ts): what a retry finds its earlier post by. "" is no id, and is
	// not written.
	ID string
}

// envelopeFields are the keys an envelope's JSON may hold, and all of them.
var envelopeFields = map[string]bool{"type": true, "source": true, "actor": true, "ts": true, "id": true}

// envelopePattern finds an envelope. The JSON is matched lazily up to the
// first "}" that the comment's end follows; StampEnvelope never writes ">"
// inside the JSON, so that is the JSON's own end. Go's regexp is linear in
// the body, so a long or hostile body costs time in proportion, no more.
var envelopePattern = lazyregexp.New(`(?s)<!--\s*` + regexp.QuoteMeta(envelopeTag) + `\s+(\{.*?\})\s*-->`)

// envelopeClock is the clock a stamp without TS is dated by; tests replace it.
var envelopeClock = time.Now

// StampEnvelope appends e to body as an envelope line after the body's
// trailing space is trimmed: "\n\n<!-- the-loop:event {json} -->\n", the JSON
// compact with sorted keys and only the actor's non-empty ids; id only when
// it is set. An empty TS is the current time in UTC.
//
// It is idempotent: a body whose envelope (the first, the one ParseEnvelope
// reads) has the same type, source and id is returned unchanged. An envelope
// without a type or a source is one ParseEnvelope would refuse, so none is
// written: body is returned unchanged.
func StampEnvelope(body string, e Envelope) string {
	if e.Type == "" || e.Source == "" {
		return body
	}
	if have, ok := ParseEnvelope(body); ok && have.Type == e.Type && have.Source == e.Source && have.ID == e.ID {
		return body
	}
	ts := e.TS
	if ts == "" {
		ts = envelopeClock().UTC().Format("2006-01-02T15:04:05Z")
	}
	actor := map[string]string{}
	for ch, id := range e.Actor {
		if ch != "" && id != "" {
			actor[ch] = id
		}
	}
	// A map marshals with sorted keys, and json.Marshal escapes '<', '>'
	// and '&' as \u003c, \u003e and \u0026: a value holding "-->" cannot
	// end the comment. Marshalling strings and a map of strings cannot
	// fail.
	fields := map[string]any{"type": e.Type, "source": e.Source, "actor": actor, "ts": ts}
	if e.ID != "" {
		fields["id"] = e.ID
	}
	js, err := json.Marshal(fields)
	if err != nil {
		return body
	}
	return strings.TrimRightFunc(body, fmSpace) + "\n\n<!-- " + envelopeTag + " " + string(js) + " -->\n"
}

// ParseEnvelope reads the first envelope in body. It accepts exactly one
// JSON object whose keys are only type, source, actor, ts and id, each at
// most once: type and source non-empty strings, actor absent, null or an
// object (ids that are not non-empty strings are ignored), ts and id absent
// or strings.
// Anything else, a later envelope included, is not an envelope: false.
// It never panics.
func ParseEnvelope(body string) (Envelope, bool) {
	m := envelopePattern.FindStringSubmatch(body)
	if m == nil {
		return Envelope{}, false
	}
	fields, ok := envelopeObject(m[1])
	if !ok {
		return Envelope{}, false
	}
	var e Envelope
	for key, raw := range fields {
		var ok bool
		switch key {
		case "type":
			e.Type, ok = envelopeString(raw)
			ok = ok && e.Type != ""
		case "source":
			e.Source, ok = envelopeString(raw)
			ok = ok && e.Source != ""
		case "ts":
			e.TS, ok = envelopeString(raw)
		case "id":
			e.ID, ok = envelopeString(raw)
		case "actor":
			e.Actor, ok = envelopeActor(raw)
		}
		if !ok {
			return Envelope{}, false
		}
	}
	if e.Type == "" || e.Source == "" {
		return Envelope{}, false
	}
	return e, true
}

// envelopeObject splits src, which must be exactly one JSON object of
// envelope fields, each at most once, into its raw values. encoding/json
// alone would keep the last of two equal keys; an envelope saying two
// things is refused instead.
func envelopeObject(src string) (map[string]json.RawMessage, bool) {
	dec := json.NewDecoder(strings.NewReader(src))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	out := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, ok := tok.(string)
		if !ok || !envelopeFields[key] {
			return nil, false
		}
		if _, dup := out[key]; dup {
			return nil, false
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		out[key] = raw
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false // something follows the object
	}
	return out, true
}

// envelopeString reads a JSON string; null and every other kind are not one.
func envelopeString(raw json.RawMessage) (string, bool) {
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`"`)) {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// envelopeActor reads actor: null, or an object whose non-empty string
// values are kept. Nil when it names nobody.
func envelopeActor(raw json.RawMessage) (map[string]string, bool) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, false // neither null nor an object
	}
	var out map[string]string
	for ch, v := range m {
		if id, ok := v.(string); ok && ch != "" && id != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[ch] = id
		}
	}
	return out, true
}

// relayedTypes are the envelope types whose record carries a person's
// words for a gate or the control seam to read: a chat channel's answer
// to a gate, and its control command.
var relayedTypes = map[string]bool{"gate.feedback": true, "control.command": true}

// RelayedWords is what a person said in a record the ledger relayed from a
// chat channel: the block-quoted lines of a body carrying a gate.feedback
// or control.command envelope, unquoted. ok is false for any other body.
//
// A gate reads these words rather than the whole record, so that the
// record's own attribution line ("recorded ... from ..."), and a person's
// name in it, can never be read as part of the answer.
func RelayedWords(body string) (words string, ok bool) {
	e, found := ParseEnvelope(body)
	if !found || !relayedTypes[e.Type] {
		return "", false
	}
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimSuffix(l, "\r")
		if rest, quoted := strings.CutPrefix(l, ">"); quoted {
			lines = append(lines, strings.TrimPrefix(rest, " "))
		}
	}
	if len(lines) == 0 {
		return "", false
	}
	return strings.Join(lines, "\n"), true
}
