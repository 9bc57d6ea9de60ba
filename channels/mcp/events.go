package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/the-loop/the-loop/eventlog"
	"github.com/the-loop/the-loop/policy"
)

// query_events reads the log through package eventlog's Filter and
// Query, as `the-loop events` does: the same filters, over the log and its
// rotated files, oldest first. EventQuery is the seam a test replaces.

// DefaultEventLimit is how many records query_events answers with when
// the call names no limit: the last ones, as the original's tool does.
const DefaultEventLimit = 50

// EventFilter is query_events' input: every filter given must match.
type EventFilter struct {
	WorkItem string   `json:"work_item,omitempty" jsonschema:"only records about this work item, by the reference the log names it with, e.g. github:acme/widgets#12"`
	Event    []string `json:"event,omitempty" jsonschema:"only records of one of these event types or namespaces (graph.parked, graph) or globs (graph.*, *_failed)"`
	Since    string   `json:"since,omitempty" jsonschema:"only records at or after this time: RFC 3339, a day (2026-07-22), or a duration before now such as 2h or 1d"`
	Until    string   `json:"until,omitempty" jsonschema:"only records before this time: RFC 3339, a day, or a duration before now such as 30m"`
	Level    string   `json:"level,omitempty" jsonschema:"only records at this level or a more severe one: debug, info, warning or error"`
	Limit    *int     `json:"limit,omitempty" jsonschema:"answer with the last this many matching records (default 50; 0 answers every one)"`
}

// Query is an EventFilter checked and resolved.
type Query struct {
	Filter eventlog.Filter
	// Limit keeps the last Limit matches; 0 keeps every one.
	Limit int
}

// Events is query_events' answer: the matching records as written,
// oldest first, and how many unreadable lines the read skipped.
type Events struct {
	Events  []json.RawMessage `json:"events"`
	Skipped int               `json:"skipped"`
}

// EventQuery answers a query from the operator's event log.
type EventQuery func(ctx context.Context, q Query) (*Events, error)

// now is the clock durations in a filter count back from.
var now = time.Now

func (f EventFilter) compile() (Query, error) {
	q := Query{Filter: eventlog.Filter{Events: f.Event, Level: f.Level}, Limit: DefaultEventLimit}
	if f.WorkItem != "" {
		q.Filter.WorkItems = []string{f.WorkItem}
	}
	t := now()
	for _, b := range []struct {
		name, value string
		to          *time.Time
	}{{"since", f.Since, &q.Filter.Since}, {"until", f.Until, &q.Filter.Until}} {
		if b.value == "" {
			continue
		}
		v, err := eventlog.ParseTime(b.value, t)
		if err != nil {
			return q, fmt.Errorf("%s: %w", b.name, err)
		}
		*b.to = v
	}
	if err := q.Filter.Validate(); err != nil {
		return q, err
	}
	if f.Limit != nil {
		if *f.Limit < 0 {
			return q, fmt.Errorf("limit: got %d, want 0 or more", *f.Limit)
		}
		q.Limit = *f.Limit
	}
	return q, nil
}

// ReadEventLog answers q from the log at path and its rotated files: a
// log that does not exist yet has no records.
func ReadEventLog(path string, q Query) (*Events, error) {
	res := &Events{Events: []json.RawMessage{}}
	var err error
	res.Skipped, err = eventlog.Query(path, q.Filter, func(rec []byte) error {
		if q.Limit > 0 && len(res.Events) == 2*q.Limit {
			// Only the last Limit are kept: drop the older half at once.
			res.Events = append(res.Events[:0], res.Events[q.Limit:]...)
		}
		res.Events = append(res.Events, json.RawMessage(bytes.TrimSpace(slices.Clone(rec))))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the event log %s: %w", path, err)
	}
	if q.Limit > 0 && len(res.Events) > q.Limit {
		res.Events = res.Events[len(res.Events)-q.Limit:]
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
