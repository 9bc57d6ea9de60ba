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
	TS        string `json:"ts"`
	Event     string `json:"event"`
	Level     string `json:"level"`
	WorkItem  any    `json:"work_item"`
	WorkItems any    `json:"work_items"`
}

// Match reports whether the record, one JSON object as Read hands it
// over, passes f. A record whose ts does not parse fails a time bound; one
// whose level is unknown fails a level.
func (f Filter) Match(record []byte) bool {
	var h head
	// A field of another type than head's is left as it was (zero), and
	// fails the filter that reads it.
	_ = json.Unmarshal(record, &h)
	if len(f.Events) > 0 && !slices.ContainsFunc(f.Events, func(p string) bool { return MatchEvent(p, h.Event) }) {
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
// equals sign, and anything else as its JSON. pid is left out.
func Text(record []byte) string {
	dec := json.NewDecoder(bytes.NewReader(record))
	dec.UseNumber()
	cols := map[string]string{}
	var rest []string
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return string(record)
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return string(record)
		}
		k, _ := kt.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return string(record)
		}
		val := textValue(v)
		if slices.Contains(envelopeOrWorkItem, k) {
			cols[k] = val
			continue
		}
		rest = append(rest, k+"="+val)
	}
	line := []string{}
	for _, k := range []string{"ts", "level", "source", "event", "work_item"} {
		v := cols[k]
		if v == "" {
			v = "-"
		}
		line = append(line, v)
	}
	return strings.Join(append(line, rest...), " ")
}

// textValue is v as Text shows it.
func textValue(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) != nil {
		var b bytes.Buffer
		if json.Compact(&b, v) == nil {
			return b.String()
		}
		return string(v)
	}
	if s == "" || strings.ContainsAny(s, " \t\n\r\"=") {
		return strconv.Quote(s)
	}
	return s
}
