// Package eventlog is the operator's event log: one JSON object per line in
// <state root>/logs/events.jsonl, recording what the-loop did on this
// machine (a work item entering its graph, a gate parking, an outbound hook
// degrading, a reply arriving) for people, grep, jq and agents alike.
//
// # Records
//
// Every record starts with the same envelope, in this order:
//
//   - ts: when, in UTC, RFC 3339 with milliseconds
//   - source: the emitting process ("cli", "serve", ...)
//   - event: a dot-namespaced type from the Catalog
//   - level: debug, info, warning or error
//   - pid: the emitting process id
//
// For example:
//
//	{"ts":"2026-07-22T06:31:20.123Z","source":"cli","event":"graph.parked","level":"info","pid":4242,"node":"design-review","work_item":"github:acme/widgets#15"}
//
// The event's own fields follow, sorted by name; a nil field is left out.
// The output for the same inputs is byte-for-byte stable, so records diff
// and grep cleanly.
//
// # Writing
//
// To log, open the state root's log once and emit:
//
//	log := eventlog.Open(cli.StateRoot(), "cli")
//	err := log.Emit("graph.parked", "", map[string]any{"work_item": ref, "node": id})
//
// Open creates nothing until the first record; then it creates the logs
// directory. Each record is appended with a single write on an O_APPEND
// descriptor, so goroutines and separate processes sharing the file never
// interleave partial lines. Use OpenFile for an explicit path, and Discard
// where nothing should be written (pure verbs, tests).
//
// A record the disk takes only part of (a full disk, a file size limit)
// is cut off again, back to the last whole record, and Emit returns an
// error wrapping ErrTorn; a file that already ends mid-line (a crash in
// an earlier write) gets a newline before the next record. A record over
// MaxRecord has its long texts cut, so that readers take it.
//
// # Reading
//
// Read hands over each whole record and counts the torn lines it skipped:
// what a crash left of a record, which the next record, on a line of its
// own, follows.
//
// To query the log, as `the-loop events` and the MCP server's query_events
// do, build a Filter (work items, event types or namespaces, a time
// window, a least level, sources, delivery ids) and call Query, which
// reads the files logrotate rotated the log to (Rotated) and then the
// log, oldest first, and hands over each selected record as written:
//
//	skipped, err := eventlog.Query(path, eventlog.Filter{Events: []string{"graph"}}, func(rec []byte) error {
//		fmt.Println(eventlog.Text(rec))
//		return nil
//	})
//
// Follow does the same and goes on as the log grows, across its rotation,
// until its context is done. ParseTime reads a bound as a user writes it
// (RFC 3339, a day, or a duration before now such as 2h). Text renders a
// record as one readable line. the-loop never rotates the log itself.
//
// # The catalog
//
// Catalog lists every event type the-loop emits, with its default level, a
// one-line description, and its fields as data (Fields); Describe and
// Lookup read it. A test parses every emit call in the module and fails
// when one writes an event, or a field, its row does not list.
// Emit refuses a type that is not in the catalog, an unknown level, and a
// field that would overwrite an envelope key, even on Discard, so a test
// exercising new instrumentation fails until the catalog has its row.
package eventlog
