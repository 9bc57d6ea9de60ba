package eventlog

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func rec(ts, event, level, extra string) string {
	return `{"ts":"` + ts + `","source":"cli","event":"` + event + `","level":"` + level + `","pid":1` + extra + `}`
}

func TestAFilterSelectsByEveryField(t *testing.T) {
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	parked := rec("2026-07-22T10:00:00.000Z", "graph.parked", "info", `,"node":"design","work_item":"github:o/r#1"`)
	routed := rec("2026-07-22T11:00:00.500Z", "routing.routed", "info", `,"work_items":["github:o/r#2","github:o/r#3"]`)
	forced := rec("2026-07-22T12:00:00.000Z", "graph.forced", "warning", `,"work_item":"github:o/r#2"`)
	failed := rec("2026-07-22T13:00:00.000Z", "graph.link_failed", "error", `,"work_item":"github:o/r#1"`)
	odd := `{"ts":"yesterday","event":7,"level":"loud","work_item":["github:o/r#1"]}`
	all := []string{parked, routed, forced, failed, odd}
	for _, tc := range []struct {
		name string
		f    Filter
		want []string
	}{
		{"the zero filter keeps everything", Filter{}, all},
		{"a work item by work_item", Filter{WorkItems: []string{"github:o/r#1"}}, []string{parked, failed}},
		{"a work item by work_items", Filter{WorkItems: []string{"github:o/r#3"}}, []string{routed}},
		{"work items are any of", Filter{WorkItems: []string{"github:o/r#3", "github:o/r#1"}}, []string{parked, routed, failed}},
		{"a namespace with its dot", Filter{Events: []string{"graph."}}, []string{parked, forced, failed}},
		{"a namespace without its dot", Filter{Events: []string{"graph"}}, []string{parked, forced, failed}},
		{"an event type alone", Filter{Events: []string{"graph.parked"}}, []string{parked}},
		{"a name's prefix is no namespace", Filter{Events: []string{"graph.par"}}, nil},
		{"a glob", Filter{Events: []string{"*_failed"}}, []string{failed}},
		{"events are any of", Filter{Events: []string{"routing", "graph.forced"}}, []string{routed, forced}},
		{"a level keeps it and the more severe", Filter{Level: LevelWarning}, []string{forced, failed}},
		{"debug keeps every known level", Filter{Level: LevelDebug}, []string{parked, routed, forced, failed}},
		{"since is inclusive", Filter{Since: at("2026-07-22T11:00:00.5Z")}, []string{routed, forced, failed}},
		{"until is exclusive", Filter{Until: at("2026-07-22T12:00:00Z")}, []string{parked, routed}},
		{"a window", Filter{Since: at("2026-07-22T10:30:00Z"), Until: at("2026-07-22T12:30:00Z")}, []string{routed, forced}},
		{"since honours an offset", Filter{Since: at("2026-07-22T14:30:00+02:00")}, []string{failed}},
		{"every filter at once", Filter{WorkItems: []string{"github:o/r#2"}, Events: []string{"graph"}, Level: LevelWarning, Since: at("2026-07-22T09:00:00Z")}, []string{forced}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.f.Validate(); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range all {
				if tc.f.Match([]byte(r)) {
					got = append(got, r)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestAFilterThatCannotMeanAnythingIsRefused(t *testing.T) {
	now := time.Date(2026, 7, 22, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		f    Filter
		want string
	}{
		{Filter{Level: "warn"}, `level: got "warn", want one of debug, info, warning, error`},
		{Filter{Events: []string{"graph.["}}, `event: pattern "graph.["`},
		{Filter{Events: []string{""}}, "empty pattern"},
		{Filter{Since: now, Until: now}, "is not after since"},
	} {
		err := tc.f.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.f, err, tc.want)
		}
	}
}

func TestParseTimeReadsTimesDaysAndDurationsBeforeNow(t *testing.T) {
	now := time.Date(2026, 7, 22, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"2026-07-21T08:30:00Z", time.Date(2026, 7, 21, 8, 30, 0, 0, time.UTC)},
		{"2026-07-21T08:30:00.250+02:00", time.Date(2026, 7, 21, 6, 30, 0, 250e6, time.UTC)},
		{"2026-07-21", time.Date(2026, 7, 21, 0, 0, 0, 0, time.UTC)},
		{"2h", now.Add(-2 * time.Hour)},
		{"90s", now.Add(-90 * time.Second)},
		{"1h30m", now.Add(-90 * time.Minute)},
		{"1d", now.Add(-24 * time.Hour)},
		{"2d12h", now.Add(-60 * time.Hour)},
		{" 15m ", now.Add(-15 * time.Minute)},
	} {
		got, err := ParseTime(tc.in, now)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "2", "yesterday", "-2h", "1d-2h", "d", "2026-07-21 08:30", "xd2h", "99999d"} {
		if got, err := ParseTime(bad, now); err == nil {
			t.Errorf("ParseTime(%q) = %v; want an error", bad, got)
		}
	}
}

func TestTextShowsARecordOnOneLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{rec("2026-07-22T10:00:00.000Z", "graph.forced", "warning", `,"actor":"jc","from":"design","reason":"the board said so","to":"plan","work_item":"github:o/r#1"`),
			`2026-07-22T10:00:00.000Z warning cli graph.forced github:o/r#1 actor=jc from=design reason="the board said so" to=plan`},
		{rec("2026-07-22T10:00:00.000Z", "server.started", "info", `,"host":"127.0.0.1","port":8080,"queued":0`),
			`2026-07-22T10:00:00.000Z info cli server.started - host=127.0.0.1 port=8080 queued=0`},
		{rec("2026-07-22T10:00:00.000Z", "routing.routed", "info", `,"empty":"","work_items":["a", "b"],"x":{"k": true}`),
			`2026-07-22T10:00:00.000Z info cli routing.routed - empty="" work_items=["a","b"] x={"k":true}`},
		{`{"event":"graph.parked"}`, `- - - graph.parked -`},
	} {
		if got := Text([]byte(tc.in)); got != tc.want {
			t.Errorf("Text(%s)\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func writeGzip(t *testing.T, path, data string) {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(data))
	zw.Close()
	writeFile(t, path, b.String())
}

func TestRotatedListsLogrotatesNamesOldestFirst(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "events.jsonl")
	for _, name := range []string{"events.jsonl", "events.jsonl.1", "events.jsonl.2.gz", "events.jsonl.10.gz", "events.jsonl-20260720", "events.jsonl-20260719.gz", "events.jsonl.lock", "events.jsonl.tmp", "other.jsonl.1", "events.jsonlx"} {
		writeFile(t, filepath.Join(dir, name), "")
	}
	os.Mkdir(filepath.Join(dir, "events.jsonl.3"), 0o700)
	got, err := Rotated(log)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i] = filepath.Base(got[i])
	}
	want := []string{"events.jsonl-20260719.gz", "events.jsonl-20260720", "events.jsonl.10.gz", "events.jsonl.2.gz", "events.jsonl.1"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got, err := Rotated(filepath.Join(dir, "nowhere", "events.jsonl")); err != nil || got != nil {
		t.Errorf("a missing directory: got %v, %v", got, err)
	}
}

func TestQueryReadsRotatedFilesOldestFirstAndCountsWhatItSkips(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "events.jsonl")
	r := func(n string) string { return rec("2026-07-22T10:00:0"+n+".000Z", "graph.parked", "info", `,"n":`+n) }
	writeGzip(t, log+".3.gz", r("1")+"\n"+`{"torn`+"\n")
	writeFile(t, log+".2.gz", "not gzip at all\n")
	writeFile(t, log+".1", r("2")+"\n"+r("3")+"\n")
	writeFile(t, log, r("4")+"\n"+"[1]\n"+rec("2026-07-22T10:00:05.000Z", "graph.forced", "warning", "")+"\n"+r("6"))
	var got []string
	skipped, err := Query(log, Filter{Events: []string{"graph.parked"}}, func(rec []byte) error {
		got = append(got, string(rec))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{r("1"), r("2"), r("3"), r("4")}; !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The torn line in .3.gz, .2.gz whole, [1], and the last line, which has no newline.
	if skipped != 4 {
		t.Errorf("skipped %d, want 4", skipped)
	}
	if _, err := Query(filepath.Join(dir, "none.jsonl"), Filter{}, nil); err != nil {
		t.Errorf("a missing log: %v", err)
	}
}

// follower runs Follow on log in the background and hands over what it
// reads on a channel, so that a test waits for each record rather than
// for a time.
type follower struct {
	records chan string
	done    chan struct{}
	skipped int
	err     error
	cancel  context.CancelFunc
}

func follow(t *testing.T, log string, f Filter) *follower {
	ctx, cancel := context.WithCancel(context.Background())
	fl := &follower{records: make(chan string, 100), done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(fl.done)
		fl.skipped, fl.err = Follow(ctx, log, f, time.Millisecond, func(rec []byte) error {
			fl.records <- string(rec)
			return nil
		})
	}()
	t.Cleanup(func() { cancel(); <-fl.done })
	return fl
}

func (fl *follower) next(t *testing.T, want string) {
	t.Helper()
	if got := <-fl.records; got != want {
		t.Fatalf("followed %s, want %s", got, want)
	}
}

func appendTo(t *testing.T, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

func TestFollowReadsOnAcrossRotationAndTruncation(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "events.jsonl")
	r := func(n string) string { return rec("2026-07-22T10:00:00.000Z", "graph.parked", "info", `,"n":`+n) }
	writeFile(t, log+".1", r("0")+"\n")
	writeFile(t, log, r("1")+"\n")
	fl := follow(t, log, Filter{Events: []string{"graph"}})
	fl.next(t, r("0"))
	fl.next(t, r("1"))

	// A record written in two parts is handed over once it is whole.
	appendTo(t, log, r("2")[:10])
	appendTo(t, log, r("2")[10:]+"\n"+rec("2026-07-22T10:00:00.000Z", "server.started", "info", "")+"\n")
	fl.next(t, r("2"))

	// Rotated by rename: the old file's last record, then the new file's.
	appendTo(t, log, r("3")+"\n"+`{"cut`)
	if err := os.Rename(log, log+".1"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, log, r("4")+"\n")
	fl.next(t, r("3"))
	fl.next(t, r("4"))

	// Cut back in place, as copytruncate does, then written again, less
	// than it held (how a follower tells a file cut back from one grown).
	short := `{"event":"graph.parked","n":5}`
	writeFile(t, log, "")
	writeFile(t, log, short+"\n")
	fl.next(t, short)

	// Removed, then created again.
	os.Remove(log)
	appendTo(t, log, r("6")+"\n")
	fl.next(t, r("6"))

	fl.cancel()
	<-fl.done
	if fl.err != nil {
		t.Fatal(fl.err)
	}
	if fl.skipped != 1 {
		t.Errorf("skipped %d, want 1: the line the rename left without its newline", fl.skipped)
	}
}

func TestFollowStopsWithWhatItsCallbackReturns(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "events.jsonl")
	writeFile(t, log, "{}\n{}\n")
	stop := context.Canceled
	n := 0
	_, err := Follow(context.Background(), log, Filter{}, time.Millisecond, func([]byte) error {
		if n++; n == 2 {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Errorf("got %v, want the callback's error", err)
	}
}

// FuzzTailAgreesWithRead holds the follower's line reader to Read's: the
// same bytes, arriving in any pieces, are the same records and the same
// count of torn lines.
func FuzzTailAgreesWithRead(f *testing.F) {
	for _, seed := range []string{"{}\n", `{"a":1}` + "\n" + `{"b`, "\n\n{}\n[1]\n", `{"a":"x\ny"}` + "\n"} {
		f.Add([]byte(seed), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, piece uint8) {
		var want []string
		wantTorn, err := Read(bytes.NewReader(data), func(rec []byte) error {
			want = append(want, string(rec))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		tl := &tail{fn: func(rec []byte) error {
			got = append(got, string(rec))
			return nil
		}}
		size := int(piece)%16 + 1
		for b := data; len(b) > 0; {
			n := min(size, len(b))
			if err := tl.feed(b[:n]); err != nil {
				t.Fatal(err)
			}
			b = b[n:]
		}
		tl.cutPending() // the end of the data, as a rotation ends a file
		if !slices.Equal(got, want) || tl.skipped != wantTorn {
			t.Fatalf("tail: %q and %d torn; Read: %q and %d torn", got, tl.skipped, want, wantTorn)
		}
	})
}
