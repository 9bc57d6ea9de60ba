package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// sarifMultitool is the SARIF multitool's native program (the npm package
// @microsoft/sarif-multitool): $SARIF_MULTITOOL, else sarif-multitool on
// PATH or in node_modules/.bin. The package's bin.js runs the native
// program through a shell, which would split "Gh;Sarif" at the
// semicolon, so it is passed over for the program beside it.
func sarifMultitool(t *testing.T) string {
	t.Helper()
	found := os.Getenv("SARIF_MULTITOOL")
	if found == "" {
		if p, err := exec.LookPath("sarif-multitool"); err == nil {
			found = p
		} else if p, err := filepath.Abs(filepath.Join("..", "..", "node_modules", ".bin", "sarif-multitool")); err == nil {
			if _, err := os.Stat(p); err == nil {
				found = p
			}
		}
	}
	if found == "" {
		t.Skip("the SARIF multitool is not installed (npm install @microsoft/sarif-multitool, then set SARIF_MULTITOOL to its Sarif.Multitool); .ci/run installs it")
	}
	if real, err := filepath.EvalSymlinks(found); err == nil && filepath.Base(real) == "bin.js" {
		platform := map[string]string{"windows": "win32"}[runtime.GOOS]
		if platform == "" {
			platform = runtime.GOOS
		}
		native := filepath.Join(filepath.Dir(real), "..", "sarif-multitool-"+platform, "Sarif.Multitool")
		if runtime.GOOS == "windows" {
			native += ".exe"
		}
		found = native
	}
	return found
}

// validatorLog is what the multitool's validate writes: its findings on
// the logs it read, and whether it ran.
type validatorLog struct {
	Runs []struct {
		Results []struct {
			RuleID    string `json:"ruleId"`
			Level     string `json:"level"`
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct {
						URI string `json:"uri"`
					} `json:"artifactLocation"`
				} `json:"physicalLocation"`
			} `json:"locations"`
			Message struct {
				Text string `json:"text"`
			} `json:"message"`
		} `json:"results"`
		Invocations []struct {
			ExecutionSuccessful        bool `json:"executionSuccessful"`
			ToolExecutionNotifications []struct {
				Level   string `json:"level"`
				Message struct {
					Text string `json:"text"`
				} `json:"message"`
			} `json:"toolExecutionNotifications"`
			ToolConfigurationNotifications []struct {
				Level   string `json:"level"`
				Message struct {
					Text string `json:"text"`
				} `json:"message"`
			} `json:"toolConfigurationNotifications"`
		} `json:"invocations"`
	} `json:"runs"`
}

// TestCodeScanningsValidatorFindsNoErrorInOurSARIF holds the SARIF check
// writes to the rules GitHub's code scanning applies to an upload (the
// multitool's Gh rules) and SARIF's own (Sarif): a blocked item, waits,
// warnings, an item that could not be evaluated, and a run that could not
// answer at all. Its warnings and notes are in the test log.
func TestCodeScanningsValidatorFindsNoErrorInOurSARIF(t *testing.T) {
	tool := sarifMultitool(t)
	actions, _ := actionsEnv(t)
	broken := t.TempDir()
	if err := os.CopyFS(broken, os.DirFS(demo)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, "docs", "specs", "issue-27", "graph-state.json"), []byte("{nope"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var logs []string
	for i, c := range []struct {
		name string
		env  map[string]string
		args []string
		code int
	}{
		{"blocked, waiting and warnings", nil, []string{"--repo", demo}, 1},
		{"in actions", actions, []string{"--repo", demo}, 1},
		{"waits do not fail", nil, []string{"--repo", demo, "--fail-on", "block"}, 1},
		{"an item that could not be evaluated", nil, []string{"--repo", broken}, 2},
		{"a run that could not answer", nil, []string{"--repo", demo, "--base=-x"}, 2},
	} {
		args := append([]string{"check", "--all", "--format", "sarif"}, c.args...)
		stdout, stderr, code := runCLI(t, c.env, args...)
		if code != c.code {
			t.Fatalf("%s: exit %d, want %d; stderr:\n%s", c.name, code, c.code, stderr)
		}
		in := filepath.Join(dir, fmt.Sprintf("%d.sarif", i))
		if err := os.WriteFile(in, []byte(stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %s", in, c.name)
		logs = append(logs, in)
	}
	// One run of the validator over every log: it takes seconds to start.
	out := filepath.Join(t.TempDir(), "validation.sarif")
	cmd := exec.Command(tool, append([]string{"validate", "--rule-kind", "Gh;Sarif", "--output", out}, logs...)...)
	said, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the multitool failed: %v\n%s", err, said)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the multitool wrote no log: %v\n%s", err, said)
	}
	var log validatorLog
	if err := json.Unmarshal(b, &log); err != nil || len(log.Runs) != 1 || len(log.Runs[0].Invocations) == 0 {
		t.Fatalf("the multitool's log is not one run's: %v\n%s", err, b)
	}
	inv := log.Runs[0].Invocations[0]
	if !inv.ExecutionSuccessful {
		t.Errorf("the multitool did not run to the end:\n%s", said)
	}
	for _, n := range append(inv.ToolExecutionNotifications, inv.ToolConfigurationNotifications...) {
		if n.Level == "error" {
			t.Errorf("the multitool could not validate: %s", n.Message.Text)
		}
	}
	if want := fmt.Sprintf("%d files scanned", len(logs)); !strings.Contains(string(said), want) {
		t.Errorf("the multitool did not read every log (want %q):\n%s", want, said)
	}
	for _, r := range log.Runs[0].Results {
		where := ""
		if len(r.Locations) > 0 {
			where = filepath.Base(r.Locations[0].PhysicalLocation.ArtifactLocation.URI) + ": "
		}
		// A result's level is "warning" when it says none (SARIF §3.27.10).
		if r.Level == "error" {
			t.Errorf("%s%s: %s", where, r.RuleID, r.Message.Text)
		} else {
			t.Logf("%s%s %s: %s", where, r.Level, r.RuleID, r.Message.Text)
		}
	}
}
