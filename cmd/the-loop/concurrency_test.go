package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gofrs/flock"
)

// theLoop returns a path that runs this test binary as the-loop (see
// TestMain), so tests can start real processes.
func theLoop(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "the-loop")
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	return link
}

func runProc(t *testing.T, bin string, args ...string) (stdout string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "THE_LOOP_CLI_CONFIG=")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), ee.ExitCode()
	} else if err != nil {
		// Error, not Fatal: this runs on the racing goroutines too.
		t.Errorf("start %s: %v", bin, err)
		return "", -1
	}
	return out.String(), 0
}

func demoItem(t *testing.T, bin string) (repo string) {
	t.Helper()
	repo = t.TempDir()
	// .git marks it a repository's root, as --repo wants.
	for _, d := range []string{"docs/specs/item", ".git"} {
		if err := os.MkdirAll(filepath.Join(repo, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, code := runProc(t, bin, "graph", "force", "item", "--to", "brainstorming", "--reason", "test setup", "--repo", repo); code != 0 {
		t.Fatalf("force: %d %s", code, out)
	}
	return repo
}

type completion struct {
	Status      string `json:"status"`
	Moved       bool   `json:"moved"`
	CurrentNode string `json:"currentNode"`
	Reason      string `json:"reason"`
}

func TestAHeldLockMakesAnotherProcessAnswerBusy(t *testing.T) {
	bin := theLoop(t)
	repo := demoItem(t, bin)
	lock := flock.New(filepath.Join(repo, "docs/specs/item/graph-state.lock"))
	if ok, err := lock.TryLock(); !ok || err != nil {
		t.Fatal(ok, err)
	}
	before, _ := os.ReadFile(filepath.Join(repo, "docs/specs/item/graph-state.json"))
	out, code := runProc(t, bin, "graph", "complete", "item", "--repo", repo)
	lock.Unlock()
	var c completion
	if err := json.Unmarshal([]byte(out), &c); err != nil || code != 0 || c.Status != "busy" || c.Moved {
		t.Fatalf("got exit %d %q, want a busy answer", code, out)
	}
	after, _ := os.ReadFile(filepath.Join(repo, "docs/specs/item/graph-state.json"))
	if !bytes.Equal(before, after) {
		t.Error("a busy claim changed the state")
	}
}

func TestTwoConcurrentCompletesMoveTheItemOnce(t *testing.T) {
	t.Parallel() // slow under -race, and shares nothing with the other slow ones
	bin := theLoop(t)
	busy := 0
	for round := range 8 {
		repo := demoItem(t, bin)
		var wg sync.WaitGroup
		results := make([]completion, 2)
		outs := make([]string, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, code := runProc(t, bin, "graph", "complete", "item", "--node", "brainstorming", "--repo", repo)
				outs[i] = out
				if code != 0 || json.Unmarshal([]byte(out), &results[i]) != nil {
					t.Errorf("round %d: exit %d %q", round, code, out)
				}
			}()
		}
		wg.Wait()
		moved := 0
		for _, r := range results {
			switch {
			case r.Moved:
				moved++
			case r.Status == "busy":
				busy++
			case r.Reason == "already-past":
			default:
				t.Errorf("round %d: the other claim neither said busy nor already-past: %+v", round, r)
			}
		}
		if moved != 1 {
			t.Errorf("round %d: %d processes moved the item, want exactly 1: %q", round, moved, outs)
		}
		data, _ := os.ReadFile(filepath.Join(repo, "docs/specs/item/graph-state.json"))
		var st struct {
			CurrentNode string `json:"currentNode"`
		}
		if err := json.Unmarshal(data, &st); err != nil || st.CurrentNode != "requirements-definition" {
			t.Errorf("round %d: state torn or wrong: %v %s", round, err, data)
		}
	}
	t.Logf("%d of 8 rounds answered busy (the rest arrived after the first finished)", busy)
}
