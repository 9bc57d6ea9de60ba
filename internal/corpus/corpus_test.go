package corpus

import (
	"archive/tar"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// archive is a tar of files, as git archive writes one.
func archive(t *testing.T, files map[string]string) *tar.Reader {
	t.Helper()
	var b bytes.Buffer
	w := tar.NewWriter(&b)
	for name, body := range files {
		if err := w.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return tar.NewReader(&b)
}

func TestWriteRenamesAndCycles(t *testing.T) {
	src, err := read(archive(t, map[string]string{
		".the-loop/harness-config.yaml":                     "workflow: {}\n",
		"docs/specs/index.md":                               "# not an item\n",
		"docs/specs/issue-7/design.md":                      "---\nstatus: approved\n---\n",
		"docs/specs/issue-7/graph-state.json":               "{\n  \"version\": 1,\n  \"workItem\": \"issue-7\",\n  \"history\": [{\"workItem\": \"issue-7\"}]\n}\n",
		"docs/specs/issue-7/pr-loops/pr-1/graph-state.json": "{\"workItem\": \"issue-7\"}",
		"docs/specs/issue-9/tasks.md":                       "- [x] done\n",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(src.Items) != 2 || src.Items[0].ID != "issue-7" || src.Items[1].ID != "issue-9" {
		t.Fatalf("items: %+v", src.Items)
	}
	root := t.TempDir()
	if err := src.Write(root, 3); err != nil {
		t.Fatal(err)
	}
	read := func(rel string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := read("docs/specs/issue-1/graph-state.json"); got != "{\n  \"version\": 1,\n  \"workItem\": \"issue-1\",\n  \"history\": [{\"workItem\": \"issue-1\"}]\n}\n" {
		t.Errorf("renamed state:\n%s", got)
	}
	if got := read("docs/specs/issue-3/pr-loops/pr-1/graph-state.json"); got != `{"workItem": "issue-3"}` {
		t.Errorf("renamed inner state: %s", got)
	}
	if got := read("docs/specs/issue-2/tasks.md"); got != "- [x] done\n" {
		t.Errorf("issue-2 is not a copy of issue-9: %q", got)
	}
	if _, err := os.Stat(filepath.Join(root, "docs/specs/index.md")); err == nil {
		t.Error("the spec root's index was copied as if it were an item")
	}
	if got := read(".the-loop/harness-config.yaml"); got != "workflow: {}\n" {
		t.Errorf("harness: %q", got)
	}
}

func TestRenameStateRefusesAMiss(t *testing.T) {
	if _, err := renameState([]byte(`{"workItem": "issue-8"}`), "issue-7", "issue-1"); err == nil {
		t.Error("a state naming another item was renamed without a word")
	}
}

func TestWriteFromMirror(t *testing.T) {
	src, err := Load(Mirror())
	if errors.Is(err, ErrNoMirror) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(src.Items) < 100 || len(src.Harness) == 0 {
		t.Fatalf("%d items, %d harness files", len(src.Items), len(src.Harness))
	}
	root := t.TempDir()
	if err := src.Write(root, len(src.Items)+1); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ".the-loop", "harness-config.yaml")); err != nil {
		t.Error(err)
	}
	entries, err := os.ReadDir(filepath.Join(root, "docs", "specs"))
	if err != nil || len(entries) != len(src.Items)+1 {
		t.Fatalf("%d items written: %v", len(entries), err)
	}
}

func TestWriteOriginalKeepsNamesAndBytes(t *testing.T) {
	state := "{\"workItem\": \"issue-7\"}"
	src, err := read(archive(t, map[string]string{
		".the-loop/harness-config.yaml":       "x: 1\n",
		"docs/specs/issue-7/graph-state.json": state,
	}))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := src.WriteOriginal(root); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "docs/specs/issue-7/graph-state.json"))
	if err != nil || string(got) != state {
		t.Errorf("got %q, %v", got, err)
	}
}
