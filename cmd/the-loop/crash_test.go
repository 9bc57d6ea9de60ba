package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAKilledVerbNeverLeavesAMoveWithoutItsEvent kills a moving verb at
// random moments, over and over: every transition the state records must
// have its event in the log (events are synced before the state is
// written), and no temporary file outlives the next run.
func TestAKilledVerbNeverLeavesAMoveWithoutItsEvent(t *testing.T) {
	bin := theLoop(t)
	home, repo := t.TempDir(), t.TempDir()
	item := filepath.Join(repo, "docs", "specs", "item")
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil { // --repo wants a root
		t.Fatal(err)
	}
	if err := os.MkdirAll(item, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+home, "THE_LOOP_CLI_CONFIG=")
	targets := []string{"design", "brainstorming"}
	kills := 0
	for i := range 60 {
		cmd := exec.Command(bin, "graph", "force", "item", "--to", targets[i%2], "--reason", "crash test", "--repo", repo)
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rand.IntN(25000)) * time.Microsecond)
		cmd.Process.Kill()
		cmd.Wait()
		if cmd.ProcessState.ExitCode() == -1 {
			kills++ // ended by the signal, not by itself
		}

		forced := recordedForces(t, filepath.Join(item, "graph-state.json"))
		events := loggedForces(t, filepath.Join(home, ".the-loop", "logs", "events.jsonl"))
		if forced > events {
			t.Fatalf("after run %d the state records %d forced moves and the log %d events: a move lost its event", i, forced, events)
		}
	}
	t.Logf("%d runs killed mid-way", kills)
	// The next run to take the lock removes whatever a killed one left.
	cmd := exec.Command(bin, "graph", "force", "item", "--to", "design", "--reason", "clean up", "--repo", repo)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	entries, _ := os.ReadDir(item)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("%s was left behind", e.Name())
		}
	}
}

func recordedForces(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	var st struct {
		Forced []any `json:"forced"`
	}
	if err != nil || json.Unmarshal(data, &st) != nil {
		t.Fatalf("the state is torn: %v %q", err, data)
	}
	return len(st.Forced)
}

func loggedForces(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), `"event":"graph.forced"`)
}
