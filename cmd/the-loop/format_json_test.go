package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTheJSONFormatOnTheDemo(t *testing.T) {
	stdout, stderr, code := runCLI(t, nil, "check", "issue-21", "--repo", demo, "--format", "json")
	if code != 1 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	golden(t, "demo-issue-21.json", stdout)
}

func TestTheJSONFormatKeepsTheOriginalKeysFirst(t *testing.T) {
	var reports []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(demoReport(t, nil, "json")), &reports); err != nil {
		t.Fatal(err)
	}
	for _, r := range reports {
		var nodes []map[string]any
		if err := json.Unmarshal(r["nodes"], &nodes); err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes {
			if _, ok := n["messages"].([]any); !ok {
				t.Fatalf("messages is %T, want a list of strings as the original writes", n["messages"])
			}
			for _, k := range []string{"node", "status", "outcome", "forced", "attempts", "reached", "findings", "hooks"} {
				if _, ok := n[k]; !ok {
					t.Errorf("node %v lacks %q", n["node"], k)
				}
			}
		}
	}
}

func TestEveryVerbAnswersAnErrorAsJSONUnderFormatJSON(t *testing.T) {
	for _, args := range [][]string{
		{"check", "nope", "--format", "json"},
		{"check", "--all", "--format=json", "--base", "-x"},
		{"graph", "status", "nope", "--format", "json"},
		// An id with no folder is a new item to a verb that moves one, so
		// these name one no folder can have: the demo stays as it is.
		{"graph", "advance", "../nope", "--format", "json"},
		{"graph", "run", "../nope", "--format", "json"},
		{"graph", "complete", "../nope", "--format", "json"},
		{"graph", "skip", "../nope", "x", "--reason", "r", "--format", "json"},
		{"graph", "force", "../nope", "--to", "design", "--reason", "r", "--format", "json"},
		{"graph", "show", "--loop", "nope", "--format", "json"},
		{"config", "validate", "--format", "json", "--config", "/nonexistent/cli.yaml"},
		{"init", "--github", "not a slug", "--dry-run", "--format", "json"},
		{"check", "--format", "json", "--no-such-flag"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			stdout, stderr, code := runCLI(t, nil, append(args, "--repo", demo)...)
			if code != 2 {
				t.Fatalf("exit %d, want 2", code)
			}
			var obj struct {
				Error string `json:"error"`
			}
			if err := json.Unmarshal([]byte(stdout), &obj); err != nil || obj.Error == "" {
				t.Fatalf("stdout is not {\"error\": ...}: %q (%v)", stdout, err)
			}
			if strings.Contains(stderr, "unknown flag") && !strings.Contains(strings.Join(args, " "), "no-such-flag") {
				t.Errorf("the verb does not take --format: %s", stderr)
			}
			if !strings.Contains(stderr, obj.Error) {
				t.Errorf("stderr %q does not hold the error %q", stderr, obj.Error)
			}
		})
	}
}

func TestAnItemThatCouldNotBeEvaluatedIsAnEntryOfTheJSONList(t *testing.T) {
	root := t.TempDir()
	for rel, body := range map[string]string{
		".git/HEAD":                           "ref: refs/heads/main\n",
		"docs/specs/issue-1/requirements.md":  "# R\n",
		"docs/specs/issue-2/graph-state.json": "not json",
	} {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stdout, stderr, code := runCLI(t, nil, "check", "--all", "--repo", root, "--format", "json")
	if code != 2 {
		t.Fatalf("exit %d, want 2: %s", code, stderr)
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(stdout), &list); err != nil || len(list) != 2 {
		t.Fatalf("got %d entries (%v) from %s", len(list), err, stdout)
	}
	if list[0]["workItem"] != "issue-1" || list[0]["nodes"] == nil {
		t.Errorf("the evaluated item: %v", list[0])
	}
	if list[1]["workItem"] != "issue-2" || !strings.Contains(fmt.Sprint(list[1]["error"]), "graph-state.json") {
		t.Errorf("the item that could not be: %v", list[1])
	}
}
