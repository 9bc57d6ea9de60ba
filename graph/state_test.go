package graph

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

func TestStateReadsTheOriginalsFileAndLosesNothing(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, StateFile), []byte(pythonState), 0o644)
	st, err := LoadState(dir, "issue-7")
	if err != nil {
		t.Fatal(err)
	}
	if st.CurrentNode != "design" || st.Nodes["design"].Attempts != 2 || st.Skips["brainstorming"]["by"] != "alice" {
		t.Fatalf("read wrong: %+v", st)
	}
	if err := st.Save(dir); err != nil {
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
			_, err := LoadState(dir, "i")
			var se *StateError
			if !errors.As(err, &se) || se.Path != path || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a StateError on %s mentioning %q", err, path, c.want)
			}
			if data, _ := os.ReadFile(path); string(data) != c.doc {
				t.Error("the untrusted file was changed")
			}
		})
	}
}

func TestAMissingStateIsFresh(t *testing.T) {
	st, err := LoadState(t.TempDir(), "i")
	if err != nil || st.CurrentNode != "" || st.WorkItem != "i" || st.Version != StateVersion {
		t.Fatalf("got %+v, %v", st, err)
	}
}

func TestWriteFileAtomicLeavesNoTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	for _, s := range []string{"one", "two"} {
		if err := WriteFileAtomic(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if data, _ := os.ReadFile(p); string(data) != "two" || len(entries) != 1 {
		t.Errorf("got %q and %d entries", data, len(entries))
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
	if err := st.Save(dir); err != nil {
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
			st, err := LoadState(dir, "x")
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Save(dir); err != nil {
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
	st.Save(dir)
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
