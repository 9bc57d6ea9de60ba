package builtins

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/the-loop/the-loop/graph"
)

func fixedDay() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.Local) }

func TestLogEntryAppendsACheckpoint(t *testing.T) {
	dir := t.TempDir()
	path := obWriteFile(t, dir, executionLog, "# Execution log\n")
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	ctx := obCtx(graph.NoIntegration{}, &graph.Node{ID: "design", Phase: "design"}, dir)
	h := logEntry{now: fixedDay}
	for _, b := range []graph.Boundary{graph.Entry, graph.Exit} {
		ctx.Boundary = b
		r, err := h.Run(ctx)
		if err != nil || r.Status != graph.StatusPass || r.Data["appended"] != true {
			t.Fatalf("%s: got %s %v %v, want appended", b, r.Status, r.Data, err)
		}
	}
	got, _ := os.ReadFile(path)
	want := "# Execution log\n" +
		"\n### 2026-05-01 — entry design\n\n- **Node:** design\n- **Boundary:** entry\n" +
		"\n### 2026-05-01 — exit design\n\n- **Node:** design\n- **Boundary:** exit\n"
	if string(got) != want {
		t.Errorf("log =\n%s\nwant\n%s", got, want)
	}
	info, _ := os.Stat(path)
	if runtime.GOOS != "windows" && info.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want the original 0640 kept", info.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("spec folder holds %d entries, want only the log (no temporary files left)", len(entries))
	}
}

func TestLogEntryNeverCreatesALog(t *testing.T) {
	dir := t.TempDir()
	r, err := logEntry{now: fixedDay}.Run(obCtx(nil, nil, dir))
	if err != nil || r.Status != graph.StatusSkip {
		t.Fatalf("got %s %v, want skip", r.Status, err)
	}
	if _, err := os.Stat(filepath.Join(dir, executionLog)); !os.IsNotExist(err) {
		t.Error("log-entry created an execution log")
	}
}

func TestLogEntryRefusesASymlinkedLog(t *testing.T) {
	dir := t.TempDir()
	outside := obWriteFile(t, t.TempDir(), "elsewhere.md", "keep me\n")
	if err := os.Symlink(outside, filepath.Join(dir, executionLog)); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	r, _ := logEntry{now: fixedDay}.Run(obCtx(nil, nil, dir))
	if r.Status != graph.StatusPass || !strings.Contains(r.Data["error"].(string), "symbolic link") {
		t.Errorf("got %s %v, want a degraded pass refusing the link", r.Status, r.Data)
	}
	if got, _ := os.ReadFile(outside); string(got) != "keep me\n" {
		t.Errorf("the link's target was written: %q", got)
	}
}

func TestLogEntryDegradesWhenTheLogCannotBeWritten(t *testing.T) {
	if runtime.GOOS == "windows" || os.Geteuid() == 0 {
		t.Skip("needs an unwritable directory")
	}
	dir := t.TempDir()
	obWriteFile(t, dir, executionLog, "# log\n")
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	r, _ := logEntry{now: fixedDay}.Run(obCtx(nil, nil, dir))
	if r.Status != graph.StatusPass || r.Data["appended"] != false || r.Data["error"] == nil {
		t.Errorf("got %s %v, want a degraded pass", r.Status, r.Data)
	}
}

func TestLogEntryNeverTakesTheLogPastWhatItsItemIsReadUpTo(t *testing.T) {
	for _, c := range []struct {
		name     string
		size     int
		appended bool
	}{
		{"well under", 1 << 10, true},
		{"at the bound", graph.MaxArtifactBytes, false},
		{"a few bytes under", graph.MaxArtifactBytes - 10, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			body := "# log\n" + strings.Repeat("x", c.size-7) + "\n"
			path := obWriteFile(t, dir, executionLog, body)
			r, _ := logEntry{now: fixedDay}.Run(obCtx(nil, &graph.Node{ID: "design"}, dir))
			got, _ := os.ReadFile(path)
			if r.Data["appended"] != c.appended {
				t.Fatalf("got %s %v; want appended %v", r.Status, r.Data, c.appended)
			}
			if !c.appended && (string(got) != body || r.Status != graph.StatusPass || !strings.Contains(fmt.Sprint(r.Data["error"]), "over the limit")) {
				t.Errorf("a log the item could no longer be read with: %d bytes written, %s %v", len(got), r.Status, r.Data)
			}
			if len(got) > graph.MaxArtifactBytes {
				t.Errorf("the log is %d bytes, over the %d its item is read up to", len(got), graph.MaxArtifactBytes)
			}
		})
	}
}
