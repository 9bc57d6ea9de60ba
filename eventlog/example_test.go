package eventlog_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/the-loop/the-loop/eventlog"
)

// ExampleQuery selects one work item's graph events, across the log and
// the file logrotate moved its older records to.
func ExampleQuery() {
	dir, _ := os.MkdirTemp("", "eventlog")
	defer os.RemoveAll(dir)
	log := filepath.Join(dir, "events.jsonl")
	os.WriteFile(log+".1", []byte(`{"ts":"2026-07-22T06:31:20.123Z","source":"cli","event":"graph.parked","level":"info","pid":4242,"node":"design-review","work_item":"github:acme/widgets#15"}`+"\n"), 0o600)
	os.WriteFile(log, []byte(`{"ts":"2026-07-22T07:00:00.000Z","source":"serve","event":"server.started","level":"info","pid":7,"host":"127.0.0.1","path":"/webhook","port":8080,"queued":0}
{"ts":"2026-07-22T07:02:11.500Z","source":"cli","event":"graph.advanced","level":"info","pid":4243,"node":"design-review","outcome":"approved","to":"tasks-breakdown","work_item":"github:acme/widgets#15"}
{"ts":"2026-07-22T07:03:0`), 0o600)

	f := eventlog.Filter{WorkItems: []string{"github:acme/widgets#15"}, Events: []string{"graph"}}
	skipped, err := eventlog.Query(log, f, func(rec []byte) error {
		fmt.Println(eventlog.Text(rec))
		return nil
	})
	fmt.Println(skipped, "skipped,", err)
	// Output:
	// 2026-07-22T06:31:20.123Z info cli graph.parked github:acme/widgets#15 node=design-review
	// 2026-07-22T07:02:11.500Z info cli graph.advanced github:acme/widgets#15 node=design-review outcome=approved to=tasks-breakdown
	// 1 skipped, <nil>
}
