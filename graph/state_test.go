package graph

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/the-loop/the-loop/repo"
)

// A state file as the original tool writes it, with a key this build does
// not know.
const pythonState = `{
  "version": 1,
  "workItem": "issue-7",
  "currentNode": "design",
  "nodes": {
    "phase-selection": {"attempts": 1, "outcome": "selected", "enteredAt": "2026-01-02T03:04:05+00:00", "exitedAt": "2026-01-02T03:05:05+00:00", "lastBlock": "", "forced": false},
    "design": {"attempts": 2, "outcome": "", "enteredAt": "2026-01-02T03:05:05+00:00", "exitedAt": "", "lastBlock": "- missing", "forced": false}
  },
  "decisions": {"phase-selection": {"at": "2026-01-02T03:05:05+00:00"}},
  "forced": [],
  "parked": null,
  "session": null,
  "completions": {},
  "skips": {"brainstorming": {"via": "label", "by": "alice"}},
  "optIns": {},
  "surface": "",
  "loop": "pdlc-work-item-loop",
  "futureKey": {"kept": true}
}
`

// checkoutOf opens dir as a checkout.
func checkoutOf(t testing.TB, dir string) *repo.Checkout {
	t.Helper()
	co, err := repo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { co.Close() })
	return co
}

func TestAStateFileThatIsNoFileIsRefusedWithoutBlockingOrReadingIt(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(t *testing.T, p string)
		want string
	}{
		{"a FIFO", func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"a link to /dev/zero", func(t *testing.T, p string) { os.Symlink("/dev/zero", p) }, "leads outside the checkout"},
		{"a link out of the checkout", func(t *testing.T, p string) {
			out := filepath.Join(t.TempDir(), StateFile)
			os.WriteFile(out, []byte(`{"version": 1, "currentNode": "done"}`), 0o644)
			os.Symlink(out, p)
		}, "leads outside the checkout"},
		{"a 3 GB sparse file", func(t *testing.T, p string) {
			f, _ := os.Create(p)
			f.Truncate(3 << 30)
			f.Close()
		}, "over the limit of 4194304"},
		{"a directory", func(t *testing.T, p string) { os.Mkdir(p, 0o755) }, "not a regular file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.make(t, filepath.Join(dir, StateFile))
			_, err := LoadState(checkoutOf(t, dir), ".", "i")
			var se *StateError
			if !errors.As(err, &se) || se.Path != StateFile || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a StateError on %s saying %q", err, StateFile, c.want)
			}
		})
	}
}

func TestStoredMessagesAreCutAndNameNoMachinePath(t *testing.T) {
	root := "/home/ci/work/repo"
	if got := storedText("cannot read "+root+"/docs/specs/x/design.md in "+root, root); got != "cannot read docs/specs/x/design.md in ." {
		t.Errorf("storedText kept the checkout's location: %q", got)
	}
	long := strings.Repeat("é", MaxStoredMessage)
	got := storedText(long, root)
	if len(got) > MaxStoredMessage+64 || !strings.HasSuffix(got, "more bytes not kept)") || !utf8.ValidString(got) {
		t.Errorf("a long message is stored as %d bytes ending %q", len(got), got[len(got)-40:])
	}
}

func TestStateReadsTheOriginalsFileAndLosesNothing(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, StateFile), []byte(pythonState), 0o644)
	st, err := LoadState(checkoutOf(t, dir), ".", "issue-7")
	if err != nil {
		t.Fatal(err)
	}
	if st.CurrentNode != "design" || st.Nodes["design"].Attempts != 2 || st.Skips["brainstorming"]["by"] != "alice" {
		t.Fatalf("read wrong: %+v", st)
	}
	if err := st.Save(checkoutOf(t, dir), "."); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, StateFile))
	var got, want map[string]any
	json.Unmarshal(data, &got)
	json.Unmarshal([]byte(pythonState), &want)
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if string(gj) != string(wj) {
		t.Errorf("round trip changed the document:\n got %s\nwant %s", gj, wj)
	}
	if !strings.HasPrefix(string(data), "{\n  \"version\": 1,\n  \"workItem\"") {
		t.Errorf("keys not in the original's order:\n%s", data)
	}
}

func TestStateRefusesWhatItCannotTrust(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"corrupt", `{"version": 1, "currentNode": `, "not a valid graph-state document"},
		{"not an object", `[1, 2]`, "not a valid graph-state document"},
		{"newer version", `{"version": 2}`, "written by a newer the-loop"},
		{"wrong shape", `{"nodes": []}`, "key nodes has the wrong shape"},
		{"null", `null`, "want a JSON object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, StateFile)
			os.WriteFile(path, []byte(c.doc), 0o644)
			_, err := LoadState(checkoutOf(t, dir), ".", "i")
			var se *StateError
			if !errors.As(err, &se) || se.Path != StateFile || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a StateError on %s mentioning %q", err, StateFile, c.want)
			}
			if data, _ := os.ReadFile(path); string(data) != c.doc {
				t.Error("the untrusted file was changed")
			}
		})
	}
}

func TestAMissingStateIsFresh(t *testing.T) {
	st, err := LoadState(checkoutOf(t, t.TempDir()), ".", "i")
	if err != nil || st.CurrentNode != "" || st.WorkItem != "i" || st.Version != StateVersion {
		t.Fatalf("got %+v, %v", st, err)
	}
}

func FuzzParseState(f *testing.F) {
	f.Add([]byte(pythonState))
	f.Add([]byte(`{"version": 1}`))
	f.Add([]byte(`{"nodes": {"a": null}, "skips": {"b": {}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := ParseState("fuzz.json", data, "i")
		if err != nil {
			var se *StateError
			if !errors.As(err, &se) {
				t.Fatalf("non-state error: %v", err)
			}
			return
		}
		out, err := json.Marshal(st)
		if err != nil {
			t.Fatalf("a parsed state does not encode: %v", err)
		}
		if _, err := ParseState("again.json", out, "i"); err != nil {
			t.Fatalf("a written state does not read back: %v", err)
		}
	})
}

func TestStateDoesNotEscapeHTML(t *testing.T) {
	dir := t.TempDir()
	st := NewState("i")
	st.Parked = map[string]any{"reason": "a -> b <c> & d"}
	if err := st.Save(checkoutOf(t, dir), "."); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, StateFile))
	if !strings.Contains(string(data), `"a -> b <c> & d"`) {
		t.Errorf("escaped: %s", data)
	}
}

// TestARewriteOfTheOriginalsStateIsByteIdentical loads state files the
// reference tool wrote and saves them unchanged: a checked-in file must not
// churn because another tool rewrote it.
func TestARewriteOfTheOriginalsStateIsByteIdentical(t *testing.T) {
	files, _ := filepath.Glob("testdata/python-graph-state-*.json")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			want, _ := os.ReadFile(f)
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, StateFile), want, 0o644)
			st, err := LoadState(checkoutOf(t, dir), ".", "x")
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Save(checkoutOf(t, dir), "."); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(filepath.Join(dir, StateFile))
			if string(got) != string(want) {
				t.Errorf("rewrite changed the file:\n%s", lineDiff(string(want), string(got)))
			}
		})
	}
}

func TestNewKeysFollowTheOrderTheyWereAddedIn(t *testing.T) {
	dir := t.TempDir()
	st := NewState("i")
	for _, n := range []string{"zeta", "alpha", "mid"} {
		st.Record(n)
	}
	st.Save(checkoutOf(t, dir), ".")
	data, _ := os.ReadFile(filepath.Join(dir, StateFile))
	z, a, m := strings.Index(string(data), `"zeta"`), strings.Index(string(data), `"alpha"`), strings.Index(string(data), `"mid"`)
	if !(z < a && a < m) {
		t.Errorf("nodes not in walk order:\n%s", data)
	}
}

func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n- %s\n+ %s\n", i+1, wl, gl)
		}
	}
	return b.String()
}

func TestAStateNestingLongKeysIsReadInLinearMemory(t *testing.T) {
	key := strings.Repeat("k", 250<<10)
	var b strings.Builder
	b.WriteString(`{"version": 1, "currentNode": "design", "x": `)
	for range 63 {
		b.WriteString(`{"` + key + `": `)
	}
	b.WriteString("1" + strings.Repeat("}", 63) + "}")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := ParseState(StateFile, []byte(b.String()), "i"); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<20 {
		t.Errorf("reading a %d MiB state allocated %d MiB", b.Len()>>20, grew>>20)
	}
}
