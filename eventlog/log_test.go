package eventlog

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func fixedLog(t *testing.T, source string) *Log {
	t.Helper()
	l := Open(t.TempDir(), source)
	l.pid = 4242
	l.now = func() time.Time { return time.Date(2026, 7, 22, 8, 31, 20, 123456789, time.FixedZone("CEST", 2*3600)) }
	return l
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

func TestEmitEnvelopeAndOrder(t *testing.T) {
	tests := []struct {
		name   string
		event  string
		level  string
		fields map[string]any
		want   string
	}{
		{
			name:   "fields sorted after the envelope",
			event:  "graph.advanced",
			level:  "info",
			fields: map[string]any{"work_item": "github:acme/w#1", "to": "design", "node": "requirements", "outcome": "pass"},
			want:   `{"ts":"2026-07-22T06:31:20.123Z","source":"cli","event":"graph.advanced","level":"info","pid":4242,"node":"requirements","outcome":"pass","to":"design","work_item":"github:acme/w#1"}`,
		},
		{
			name:  "empty level takes the catalog level",
			event: "graph.escalated",
			want:  `{"ts":"2026-07-22T06:31:20.123Z","source":"cli","event":"graph.escalated","level":"warning","pid":4242}`,
		},
		{
			name:   "nil fields are left out, errors become their message, no HTML escaping",
			event:  "graph.hook_degraded",
			level:  "warning",
			fields: map[string]any{"hook": "notify", "error": errors.New("<no integration> & no token"), "node": nil},
			want:   `{"ts":"2026-07-22T06:31:20.123Z","source":"cli","event":"graph.hook_degraded","level":"warning","pid":4242,"error":"<no integration> & no token","hook":"notify"}`,
		},
		{
			name:   "nested values keep a stable order",
			event:  "graph.skips_declared",
			fields: map[string]any{"nodes": []string{"design", "brainstorm"}, "by": map[string]any{"z": 1, "a": true}},
			want:   `{"ts":"2026-07-22T06:31:20.123Z","source":"cli","event":"graph.skips_declared","level":"info","pid":4242,"by":{"a":true,"z":1},"nodes":["design","brainstorm"]}`,
		},
		{
			name:   "values JSON cannot encode are written as text",
			event:  "graph.link_failed",
			fields: map[string]any{"detail": map[any]any{1: "x"}},
			want:   `{"ts":"2026-07-22T06:31:20.123Z","source":"cli","event":"graph.link_failed","level":"error","pid":4242,"detail":"map[1:x]"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := fixedLog(t, "cli")
			if err := l.Emit(tt.event, tt.level, tt.fields); err != nil {
				t.Fatal(err)
			}
			lines := readLines(t, l.Path())
			if len(lines) != 1 || lines[0] != tt.want {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), tt.want)
			}
			var rec map[string]any
			if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
				t.Fatalf("line is not JSON: %v", err)
			}
			if _, err := time.Parse(time.RFC3339, rec["ts"].(string)); err != nil {
				t.Errorf("ts is not RFC 3339: %v", err)
			}
		})
	}
}

func TestEmitStableAcrossCalls(t *testing.T) {
	l := fixedLog(t, "serve")
	fields := map[string]any{}
	for i := range 20 {
		fields[fmt.Sprintf("k%02d", i)] = i
	}
	for range 5 {
		if err := l.Emit("graph.parked", "", fields); err != nil {
			t.Fatal(err)
		}
	}
	lines := readLines(t, l.Path())
	for _, line := range lines[1:] {
		if line != lines[0] {
			t.Fatalf("records differ:\n%s\n%s", lines[0], line)
		}
	}
}

func TestEmitRefuses(t *testing.T) {
	tests := []struct {
		name   string
		event  string
		level  string
		fields map[string]any
		want   string
	}{
		{"unknown event", "graph.teleported", "", nil, "not in the catalog"},
		{"unknown level", "graph.parked", "fatal", nil, "want one of"},
		{"field shadows envelope", "graph.parked", "", map[string]any{"event": "x"}, "overwrite the envelope"},
	}
	for _, tt := range tests {
		for _, l := range []*Log{fixedLog(t, "cli"), Discard, nil} {
			err := l.Emit(tt.event, tt.level, tt.fields)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s on %v: got %v, want error containing %q", tt.name, l.Path(), err, tt.want)
			}
		}
	}
}

func TestOpenIsLazy(t *testing.T) {
	root := filepath.Join(t.TempDir(), "state")
	l := Open(root, "cli")
	if want := filepath.Join(root, "logs", "events.jsonl"); l.Path() != want {
		t.Fatalf("Path = %s, want %s", l.Path(), want)
	}
	if _, err := os.Stat(root); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Open created %s before the first record", root)
	}
	if err := l.Emit("graph.started", "", nil); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != filePerm {
		t.Errorf("file mode %v, want %v", fi.Mode().Perm(), filePerm)
	}
}

func TestDiscardWritesNothing(t *testing.T) {
	var zero Log
	for _, l := range []*Log{Discard, &zero, nil} {
		if err := l.Emit("graph.started", "", map[string]any{"node": "x"}); err != nil {
			t.Errorf("Discard refused a catalogued event: %v", err)
		}
	}
}

// TestConcurrentWritersWholeLines has goroutines, each with its own Log on
// the same file (as separate processes would have), append large records at
// once; every line must come back whole.
func TestConcurrentWritersWholeLines(t *testing.T) {
	root := t.TempDir()
	const writers, each = 16, 50
	pad := strings.Repeat("x", 8<<10)
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			l := Open(root, fmt.Sprintf("w%02d", w))
			for i := range each {
				if err := l.Emit("graph.advanced", "", map[string]any{"writer": w, "seq": i, "pad": pad}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	seen := map[string]bool{}
	for sc.Scan() {
		var rec struct {
			Source string `json:"source"`
			Seq    int    `json:"seq"`
			Pad    string `json:"pad"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("torn line (%d bytes): %v", len(sc.Bytes()), err)
		}
		if rec.Pad != pad {
			t.Fatalf("record from %s lost its payload", rec.Source)
		}
		seen[fmt.Sprintf("%s/%d", rec.Source, rec.Seq)] = true
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != writers*each {
		t.Fatalf("got %d distinct records, want %d", len(seen), writers*each)
	}
}

func TestCatalog(t *testing.T) {
	if !slices.IsSortedFunc(Catalog, func(a, b EventType) int { return strings.Compare(a.Name, b.Name) }) {
		t.Fatal("Catalog is not sorted by name")
	}
	for i, e := range Catalog {
		if i > 0 && Catalog[i-1].Name == e.Name {
			t.Errorf("%s is catalogued twice", e.Name)
		}
		if !validLevel(e.Level) {
			t.Errorf("%s: default level %q is not one of %v", e.Name, e.Level, Levels)
		}
		if e.Description == "" || !strings.HasSuffix(e.Description, ".") {
			t.Errorf("%s: description should be a sentence", e.Name)
		}
		if strings.Count(e.Name, ".") != 1 {
			t.Errorf("%s: want namespace.type", e.Name)
		}
	}
	required := []string{
		"graph.started", "graph.advanced", "graph.parked", "graph.blocked", "graph.escalated",
		"graph.no_edge", "graph.completed", "graph.forced", "graph.skips_declared",
		"graph.skips_rejected", "graph.node_skipped", "graph.opt_ins_selected",
		"graph.hook_degraded", "graph.gate_session", "graph.repo_hooks_loaded",
		"harness.config_scaffolded", "harness.config_scaffold_failed", "channel.reply_received",
	}
	for _, name := range required {
		if d, ok := Describe(name); !ok || d == "" {
			t.Errorf("%s is not catalogued", name)
		}
	}
	if _, ok := Describe("graph.nope"); ok {
		t.Error("Describe found an uncatalogued event")
	}
}

func ExampleLog_Emit() {
	dir, _ := os.MkdirTemp("", "eventlog")
	defer os.RemoveAll(dir)
	log := Open(dir, "cli")
	if err := log.Emit("graph.parked", "", map[string]any{"work_item": "github:acme/widgets#15", "node": "design-review"}); err != nil {
		fmt.Println(err)
	}
	data, _ := os.ReadFile(log.Path())
	var rec map[string]any
	_ = json.Unmarshal(data, &rec)
	fmt.Println(rec["event"], rec["level"], rec["node"])
	fmt.Println(log.Emit("graph.teleported", "", nil))
	// Output:
	// graph.parked info design-review
	// event "graph.teleported" is not in the catalog
}
