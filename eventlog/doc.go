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
// # The catalog
//
// Catalog lists every event type the-loop emits, with its default level and
// a one-line description naming its fields; Describe and Lookup read it.
// Emit refuses a type that is not in the catalog, an unknown level, and a
// field that would overwrite an envelope key, even on Discard, so a test
// exercising new instrumentation fails until the catalog has its row.
package eventlog
