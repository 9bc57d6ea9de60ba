package main

import "testing"

func TestGraphShowDrawsTheLoopInMermaid(t *testing.T) {
	stdout, stderr, code := runCLI(t, nil, "graph", "show", "--format", "mermaid")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	golden(t, "pdlc-work-item-loop.mermaid", stdout)
}

func TestGraphStatusDrawsTheItemOnItsLoopInMermaid(t *testing.T) {
	stdout, stderr, code := runCLI(t, nil, "graph", "status", "issue-21", "--repo", demo, "--format", "mermaid")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (unmet): %s", code, stderr)
	}
	golden(t, "demo-status-issue-21.mermaid", stdout)
}

func TestCheckDoesNotDrawMermaid(t *testing.T) {
	_, stderr, code := runCLI(t, nil, "check", "--all", "--repo", demo, "--format", "mermaid")
	if code != 2 || !contains(stderr, `--format must be one of "github","json","junit","sarif","table","text" but got "mermaid"`) {
		t.Errorf("exit %d: %s", code, stderr)
	}
}
