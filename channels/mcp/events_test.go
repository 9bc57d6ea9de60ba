package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/the-loop/the-loop/eventlog"
)

const eventLog = `{"ts":"2026-07-22T06:00:00.000Z","source":"cli","event":"graph.started","level":"info","pid":1,"node":"design","work_item":"issue-1"}
{"ts":"2026-07-22T07:00:00.000Z","source":"cli","event":"graph.parked","level":"info","pid":1,"node":"design-approval","work_item":"issue-1"}
{"ts":"2026-07-22T08:00:00.000Z","source":"serve","event":"graph.hook_degraded","level":"warning","pid":2,"work_item":"issue-2"}
{"ts":"2026-07-22T08:30:00.000Z","source":"serve","event":"channel.reply_received","level":"debug","pid":2,"work_item":"issue-2"}
{"ts":"2026-07-22T09:00:00.0
{"ts":"2026-07-22T10:00:00.000Z","source":"serve","event":"ingress.failed","level":"error","pid":2}
`

func TestQueryEventsFiltersTheLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.WriteFile(path, []byte(eventLog), 0o644); err != nil {
		t.Fatal(err)
	}
	now = func() time.Time { return time.Date(2026, 7, 22, 10, 30, 0, 0, time.UTC) }
	t.Cleanup(func() { now = time.Now })
	limit := func(n int) *int { return &n }
	cases := []struct {
		name   string
		filter EventFilter
		want   []string // event types, oldest first
	}{
		{"no filter", EventFilter{}, []string{"graph.started", "graph.parked", "graph.hook_degraded", "channel.reply_received", "ingress.failed"}},
		{"work item", EventFilter{WorkItem: "issue-1"}, []string{"graph.started", "graph.parked"}},
		{"event types and namespaces", EventFilter{Event: []string{"graph.hook_degraded", "ingress"}}, []string{"graph.hook_degraded", "ingress.failed"}},
		{"a namespace is no prefix", EventFilter{Event: []string{"graph.h"}}, nil},
		{"event globs", EventFilter{Event: []string{"*.parked", "channel.*"}}, []string{"graph.parked", "channel.reply_received"}},
		{"since a time", EventFilter{Since: "2026-07-22T08:00:00Z"}, []string{"graph.hook_degraded", "channel.reply_received", "ingress.failed"}},
		{"until a time, exclusive", EventFilter{Until: "2026-07-22T07:00:00Z"}, []string{"graph.started"}},
		{"since a duration ago", EventFilter{Since: "2h"}, []string{"channel.reply_received", "ingress.failed"}},
		{"level is the least severe", EventFilter{Level: "warning"}, []string{"graph.hook_degraded", "ingress.failed"}},
		{"limit keeps the last", EventFilter{Limit: limit(2)}, []string{"channel.reply_received", "ingress.failed"}},
		{"limit 0 is every one", EventFilter{Limit: limit(0), Event: []string{"graph."}}, []string{"graph.started", "graph.parked", "graph.hook_degraded"}},
		{"every filter at once", EventFilter{WorkItem: "issue-2", Event: []string{"graph."}, Level: "info"}, []string{"graph.hook_degraded"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q, err := c.filter.compile()
			if err != nil {
				t.Fatal(err)
			}
			res, err := ReadEventLog(path, q)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range res.Events {
				var env struct{ Event string }
				if err := json.Unmarshal(r, &env); err != nil {
					t.Fatal(err)
				}
				got = append(got, env.Event)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
			if res.Skipped != 1 {
				t.Errorf("skipped %d, want the one cut-off line", res.Skipped)
			}
		})
	}
}

func TestQueryEventsRefusesABadFilter(t *testing.T) {
	neg := -1
	for _, f := range []EventFilter{{Level: "loud"}, {Since: "yesterday"}, {Until: "-2h"}, {Limit: &neg}, {Since: "1h", Until: "2h"}, {Event: []string{"[graph"}}} {
		if _, err := f.compile(); err == nil {
			t.Errorf("%+v: got no error", f)
		}
	}
}

func TestALogNotWrittenYetHasNoEvents(t *testing.T) {
	res, err := ReadEventLog(filepath.Join(t.TempDir(), "none.jsonl"), Query{Limit: DefaultEventLimit})
	if err != nil || len(res.Events) != 0 {
		t.Fatalf("got %v, %v; want no events", res, err)
	}
	b, _ := json.Marshal(res)
	if !strings.Contains(string(b), `"events":[]`) {
		t.Errorf("got %s, want an empty list, not null", b)
	}
}

func TestALimitKeepsTheLastOfManyRecords(t *testing.T) {
	var b strings.Builder
	for i := range 1000 {
		b.WriteString(`{"ts":"2026-07-22T06:00:00.000Z","event":"graph.started","level":"info","n":` + string(rune('0'+i%10)) + "}\n")
	}
	b.WriteString(`{"ts":"2026-07-22T06:00:00.000Z","event":"graph.last","level":"info"}` + "\n")
	path := filepath.Join(t.TempDir(), "events.jsonl")
	os.WriteFile(path, []byte(b.String()), 0o644)
	res, err := ReadEventLog(path, Query{Limit: 3})
	if err == nil && res.Skipped != 0 {
		t.Errorf("skipped %d lines of a whole log", res.Skipped)
	}
	if err != nil || len(res.Events) != 3 || !strings.Contains(string(res.Events[2]), "graph.last") {
		t.Fatalf("got %d events (%v), want the last 3 ending in graph.last", len(res.Events), err)
	}
}

func TestTheDefaultReaderReadsTheLogTheCLIConfigNames(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "elsewhere.jsonl")
	os.WriteFile(log, []byte(eventLog), 0o644)
	cfg := filepath.Join(dir, "cli.yaml")
	os.WriteFile(cfg, []byte("eventLog:\n  path: "+log+"\n"), 0o644)
	s := &server{cfg: Config{CLIConfig: cfg}}
	res, err := s.readEventLog(context.Background(), Query{Filter: eventlog.Filter{WorkItems: []string{"issue-2"}}})
	if err != nil || len(res.Events) != 2 {
		t.Fatalf("got %v, %v; want issue-2's two records", res, err)
	}
}

func TestAToolErrorIsOneLineAndAPanicIsAnError(t *testing.T) {
	h := guard(func(context.Context, *mcp.CallToolRequest, NoArgs) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("load x.star:\n  line 2\r\x1b[31m")
	})
	if _, _, err := h(context.Background(), nil, NoArgs{}); err == nil || err.Error() != `load x.star:\n  line 2\r\u001b[31m` {
		t.Errorf("got %v", err)
	}
	p := guard(func(context.Context, *mcp.CallToolRequest, NoArgs) (*mcp.CallToolResult, any, error) { panic("boom") })
	if _, _, err := p(context.Background(), nil, NoArgs{}); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("got %v, want the panic as an error", err)
	}
}

func TestQueryEventsReadsTheRotatedFilesFirst(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "events.jsonl")
	os.WriteFile(log+".1", []byte(`{"ts":"2026-07-22T05:00:00.000Z","event":"graph.started","level":"info","work_item":"issue-9"}`+"\n"), 0o644)
	os.WriteFile(log, []byte(`{"ts":"2026-07-22T06:00:00.000Z","event":"graph.parked","level":"info","work_item":"issue-9"}`+"\n"), 0o644)
	res, err := ReadEventLog(log, Query{Limit: DefaultEventLimit})
	if err != nil || len(res.Events) != 2 || !strings.Contains(string(res.Events[0]), "graph.started") {
		t.Fatalf("got %v, %v; want the rotated record, then the log's", res, err)
	}
}
