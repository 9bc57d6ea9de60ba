package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/the-loop/the-loop/eventlog"
	"github.com/the-loop/the-loop/policy"
)

// This file is query_events' one reader of the event log. It is kept
// small and apart so that it can be pointed at package eventlog's filter
// (the one `the-loop events` reads with) once that exists: EventQuery is
// the seam, and ReadEventLog its stand-in.

// DefaultEventLimit is how many records query_events answers with when
// the call names no limit: the last ones, as the original's tool does.
const DefaultEventLimit = 50

// EventFilter is query_events' input: every filter given must match.
type EventFilter struct {
	WorkItem string   `json:"work_item,omitempty" jsonschema:"only records whose work_item field is this, e.g. github:acme/widgets#12 or issue-12"`
	Event    []string `json:"event,omitempty" jsonschema:"only records whose event type starts with one of these, e.g. graph. or graph.parked"`
	Since    string   `json:"since,omitempty" jsonschema:"only records at or after this time: RFC 3339, or a duration before now such as 2h"`
	Until    string   `json:"until,omitempty" jsonschema:"only records before this time: RFC 3339, or a duration before now such as 30m"`
	Level    string   `json:"level,omitempty" jsonschema:"only records at this level or a more severe one: debug, info, warning or error"`
	Limit    *int     `json:"limit,omitempty" jsonschema:"answer with the last this many matching records (default 50; 0 answers every one)"`
}

// Query is an EventFilter checked and resolved: zero fields match
// everything.
type Query struct {
	WorkItem     string
	Events       []string
	Since, Until time.Time
	// Level is the least severe level that matches; "" is every level.
	Level string
	// Limit keeps the last Limit matches; 0 keeps every one.
	Limit int
}

// Events is query_events' answer: the matching records as written,
// oldest first, and how many torn lines the read skipped.
type Events struct {
	Events []json.RawMessage `json:"events"`
	Torn   int               `json:"torn"`
}

// EventQuery answers a query from the operator's event log.
type EventQuery func(ctx context.Context, q Query) (*Events, error)

// now is the clock durations in a filter count back from.
var now = time.Now

func (f EventFilter) compile() (Query, error) {
	q := Query{WorkItem: f.WorkItem, Events: f.Event, Limit: DefaultEventLimit}
	var err error
	if q.Since, err = when("since", f.Since); err != nil {
		return q, err
	}
	if q.Until, err = when("until", f.Until); err != nil {
		return q, err
	}
	if f.Level != "" {
		if !slices.Contains(eventlog.Levels, f.Level) {
			return q, fmt.Errorf("level: got %q, want one of %s", f.Level, strings.Join(eventlog.Levels, ", "))
		}
		q.Level = f.Level
	}
	if f.Limit != nil {
		if *f.Limit < 0 {
			return q, fmt.Errorf("limit: got %d, want 0 or more", *f.Limit)
		}
		q.Limit = *f.Limit
	}
	return q, nil
}

// when reads a time bound: RFC 3339, or a duration before now.
func when(name, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("%s: got %q, want an RFC 3339 time or a duration such as 2h", name, s)
	}
	return now().Add(-d), nil
}

// envelope is what a query reads of a record.
type envelope struct {
	TS       string `json:"ts"`
	Event    string `json:"event"`
	Level    string `json:"level"`
	WorkItem any    `json:"work_item"`
}

// Match reports whether the record rec (one line of the log) passes q.
// A record whose envelope cannot be read matches no filter but none.
func (q Query) Match(rec []byte) bool {
	if q.WorkItem == "" && len(q.Events) == 0 && q.Since.IsZero() && q.Until.IsZero() && q.Level == "" {
		return true
	}
	var env envelope
	if json.Unmarshal(rec, &env) != nil {
		return false
	}
	if q.WorkItem != "" && env.WorkItem != q.WorkItem {
		return false
	}
	if len(q.Events) > 0 && !slices.ContainsFunc(q.Events, func(p string) bool { return strings.HasPrefix(env.Event, p) }) {
		return false
	}
	if q.Level != "" && slices.Index(eventlog.Levels, env.Level) < slices.Index(eventlog.Levels, q.Level) {
		return false
	}
	if !q.Since.IsZero() || !q.Until.IsZero() {
		ts, err := time.Parse(time.RFC3339, env.TS)
		if err != nil || (!q.Since.IsZero() && ts.Before(q.Since)) || (!q.Until.IsZero() && !ts.Before(q.Until)) {
			return false
		}
	}
	return true
}

// ReadEventLog answers q from the log file at path: a log that does not
// exist yet has no records.
func ReadEventLog(path string, q Query) (*Events, error) {
	res := &Events{Events: []json.RawMessage{}}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the event log: %w", err)
	}
	defer f.Close()
	res.Torn, err = eventlog.Read(f, func(rec []byte) error {
		if !q.Match(rec) {
			return nil
		}
		if q.Limit > 0 && len(res.Events) == 2*q.Limit {
			// Only the last Limit are kept: drop the older half at once.
			res.Events = append(res.Events[:0], res.Events[q.Limit:]...)
		}
		res.Events = append(res.Events, json.RawMessage(bytes.TrimSpace(slices.Clone(rec))))
		return nil
	})
	if q.Limit > 0 && len(res.Events) > q.Limit {
		res.Events = res.Events[len(res.Events)-q.Limit:]
	}
	if err != nil {
		return nil, fmt.Errorf("read the event log %s: %w", path, err)
	}
	return res, nil
}

// readEventLog is ReadEventLog on the log the operator's CLI config names.
func (s *server) readEventLog(_ context.Context, q Query) (*Events, error) {
	cli, err := policy.LoadCLIConfig(s.cfg.CLIConfig)
	if err != nil {
		return nil, err
	}
	return ReadEventLog(cli.EventLogPath(), q)
}
