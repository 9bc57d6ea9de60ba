package eventlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Filter selects records of the log. The zero Filter selects every record;
// each field set narrows the selection, and a record must pass all of them.
// A Filter is a value: safe to share once built.
type Filter struct {
	// WorkItems, when not empty, keeps a record whose work_item is one of
	// them, or whose work_items list holds one (routing.routed names every
	// item a delivery mapped to). The references are compared as written,
	// such as github:acme/widgets#15.
	WorkItems []string
	// Events, when not empty, keeps a record whose event one of them
	// matches (see MatchEvent).
	Events []string
	// Since, when not zero, keeps a record written at or after it.
	Since time.Time
	// Until, when not zero, keeps a record written before it.
	Until time.Time
	// Level, when not "", keeps a record of that level or a more severe
	// one: warning keeps warning and error.
	Level string
	// Sources, when not empty, keeps a record written by one of them: the
	// envelope's source, such as cli or serve.
	Sources []string
	// DeliveryIDs, when not empty, keeps a record about one of these
	// deliveries (its delivery_id, GitHub's X-GitHub-Delivery), to follow
	// one webhook from its arrival to its outcome.
	DeliveryIDs []string
}

// Validate reports a filter that can select nothing by mistake: an
// unknown level, a malformed event pattern, or an Until not after Since.
func (f Filter) Validate() error {
	if f.Level != "" && !validLevel(f.Level) {
		return fmt.Errorf("level: got %q, want one of %s", f.Level, strings.Join(Levels, ", "))
	}
	for _, p := range f.Events {
		if p == "" {
			return fmt.Errorf("event: got an empty pattern, want an event type or its namespace such as graph")
		}
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("event: pattern %q: %w", p, err)
		}
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Until.After(f.Since) {
		return fmt.Errorf("until (%s) is not after since (%s)", f.Until.UTC().Format(time.RFC3339), f.Since.UTC().Format(time.RFC3339))
	}
	return nil
}

// MatchEvent reports whether the pattern selects the event type event. A
// pattern holding a wildcard (* ? [) is a glob over the whole name, as
// the original's fnmatch patterns are (graph.*, *_failed). Any other
// pattern is an event type or a namespace: graph.advanced selects that
// type alone, and graph, or graph. with its dot, every graph.* type, but
// not graphql.x. A namespace never matches part of a name: graph.adv is
// no type's prefix.
// Departure from the original (docs/compatibility.md#an-event-pattern-without-a-wildcard-is-a-namespace): a pattern without a wildcard is a type or a namespace, not a literal fnmatch.
func MatchEvent(pattern, event string) bool {
	if strings.ContainsAny(pattern, `*?[\`) {
		ok, _ := path.Match(pattern, event)
		return ok
	}
	ns := strings.TrimSuffix(pattern, ".")
	return event == ns || strings.HasPrefix(event, ns+".")
}

// head is what a filter reads of a record.
type head struct {
	TS         string `json:"ts"`
	Source     any    `json:"source"`
	Event      string `json:"event"`
	DeliveryID any    `json:"delivery_id"`
	Level      string `json:"level"`
	WorkItem   any    `json:"work_item"`
	WorkItems  any    `json:"work_items"`
}

// SelectsEvent reports whether f's Events keep the event type name: any of
// them matches it (MatchEvent), or there are none.
func (f Filter) SelectsEvent(name string) bool {
	return len(f.Events) == 0 || slices.ContainsFunc(f.Events, func(p string) bool { return MatchEvent(p, name) })
}

// Match reports whether the record, one JSON object as Read hands it
// over, passes f. A record whose ts does not parse fails a time bound; one
// whose level is unknown fails a level.
func (f Filter) Match(record []byte) bool {
	if f.selectsAll() {
		return true
	}
	var h head
	// A field of another type than head's is left as it was (zero), and
	// fails the filter that reads it.
	_ = json.Unmarshal(record, &h)
	if !f.SelectsEvent(h.Event) {
		return false
	}
	if f.Level != "" {
		want, got := slices.Index(Levels, f.Level), slices.Index(Levels, h.Level)
		if got < 0 || got < want {
			return false
		}
	}
	if len(f.WorkItems) > 0 && !h.names(f.WorkItems) {
		return false
	}
	if len(f.Sources) > 0 && !oneOf(h.Source, f.Sources) {
		return false
	}
	if len(f.DeliveryIDs) > 0 && !oneOf(h.DeliveryID, f.DeliveryIDs) {
		return false
	}
	if !f.Since.IsZero() || !f.Until.IsZero() {
		ts, err := time.Parse(time.RFC3339Nano, h.TS)
		if err != nil {
			return false
		}
		if !f.Since.IsZero() && ts.Before(f.Since) {
			return false
		}
		if !f.Until.IsZero() && !ts.Before(f.Until) {
			return false
		}
	}
	return true
}

// oneOf reports whether v is a text among values.
func oneOf(v any, values []string) bool {
	s, ok := v.(string)
	return ok && slices.Contains(values, s)
}

// selectsAll reports whether f is the zero Filter, which need not read a
// record to keep it.
func (f Filter) selectsAll() bool {
	return len(f.WorkItems) == 0 && len(f.Events) == 0 && f.Since.IsZero() && f.Until.IsZero() &&
		f.Level == "" && len(f.Sources) == 0 && len(f.DeliveryIDs) == 0
}

// names reports whether the record is about one of refs.
func (h head) names(refs []string) bool {
	if s, ok := h.WorkItem.(string); ok && slices.Contains(refs, s) {
		return true
	}
	list, _ := h.WorkItems.([]any)
	for _, v := range list {
		if s, ok := v.(string); ok && slices.Contains(refs, s) {
			return true
		}
	}
	return false
}

// ParseTime reads a time bound as a user writes it, relative to now: an
// RFC 3339 time (2026-07-22T10:00:00Z, with any offset and fraction), a
// day (2026-07-22, its midnight in UTC), or a duration meaning that long
// before now: Go's (90s, 15m, 2h, 1h30m) with days too (1d, 2d12h).
// Departure from the original (docs/compatibility.md#times-are-compared-as-times): bounds are parsed and compared as times, not as text.
func ParseTime(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	d, err := ParseAgo(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("got %q, want an RFC 3339 time (2026-07-22T10:00:00Z), a day (2026-07-22) or a duration before now (2h, 30m, 1d)", s)
	}
	return now.Add(-d), nil
}

// ParseAgo reads a duration as time.ParseDuration does, and also in whole
// days: 1d, 2d12h. It refuses a negative one, which would be in the future.
func ParseAgo(s string) (time.Duration, error) {
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.ParseUint(s[:i], 10, 16)
		if err != nil {
			return 0, fmt.Errorf("duration %q: days: %w", s, err)
		}
		days, s = time.Duration(n)*24*time.Hour, s[i+1:]
		if s == "" {
			return days, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %q is negative", s)
	}
	return days + d, nil
}

// envelopeOrWorkItem are the keys Text shows in their own columns.
var envelopeOrWorkItem = []string{"ts", "source", "event", "level", "pid", "work_item"}

// Text renders a record as one readable line: ts, level, source, event,
// work item ("-" without one), then the other fields as key=value in the
// record's order, a text quoted when it holds a space, a quote or an
// equals sign, and anything else as its compact JSON. pid is left out.
// What is not a JSON object is returned as it is.
func Text(record []byte) string {
	cols := map[string]string{}
	var rest []string
	ok := members(record, func(k string, v []byte) {
		val := textValue(v)
		if slices.Contains(envelopeOrWorkItem, k) {
			cols[k] = val
			return
		}
		rest = append(rest, k+"="+val)
	})
	if !ok {
		return string(record)
	}
	line := make([]string, 0, 5+len(rest))
	for _, k := range []string{"ts", "level", "source", "event", "work_item"} {
		v := cols[k]
		if v == "" {
			v = "-"
		}
		line = append(line, v)
	}
	return strings.Join(append(line, rest...), " ")
}

// members hands fn each member of the JSON object b, in order: its key
// and its value's bytes. It reports false, having handed over some, when b
// is not one JSON object. It scans rather than decodes: rendering a long
// log as text is most of what listing it costs.
func members(b []byte, fn func(key string, value []byte)) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return len(skipTrailing(b, i+1)) == 0
	}
	for {
		end, ok := scanString(b, i)
		if !ok {
			return false
		}
		var key string
		if bytes.IndexByte(b[i:end], '\\') < 0 && utf8.Valid(b[i:end]) {
			key = string(b[i+1 : end-1])
		} else if json.Unmarshal(b[i:end], &key) != nil {
			return false
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		vend, ok := scanValue(b, i)
		if !ok {
			return false
		}
		fn(key, b[i:vend])
		i = skipSpace(b, vend)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return len(skipTrailing(b, i+1)) == 0
		default:
			return false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func skipTrailing(b []byte, i int) []byte { return b[skipSpace(b, i):] }

// scanString is the end of the JSON string starting at b[i].
func scanString(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}

// scanValue is the end of the JSON value starting at b[i], which is
// checked only as far as finding its end needs: json.Valid is Read's.
func scanValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return scanString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, ok := scanString(b, j)
				if !ok {
					return 0, false
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1, json.Valid(b[i : j+1])
				}
			}
		}
		return 0, false
	}
	j := i
	for j < len(b) && !strings.ContainsRune(",}] \t\n\r", rune(b[j])) {
		j++
	}
	return j, j > i && json.Valid(b[i:j])
}

// textValue is the JSON value v as Text shows it.
func textValue(v []byte) string {
	if len(v) > 0 && v[0] == '"' {
		var s string
		if bytes.IndexByte(v, '\\') < 0 && utf8.Valid(v) {
			s = string(v[1 : len(v)-1])
		} else if json.Unmarshal(v, &s) != nil {
			return string(v)
		}
		if s == "" || strings.ContainsAny(s, " \t\n\r\"=") {
			return strconv.Quote(s)
		}
		return s
	}
	if len(v) > 0 && (v[0] == '{' || v[0] == '[') {
		var b bytes.Buffer
		if json.Compact(&b, v) == nil {
			return b.String()
		}
	}
	return string(v)
}
