package main

import "testing"

func TestTheTextFormatOnTheDemo(t *testing.T) {
	golden(t, "demo.text", demoReport(t, nil, "text"))
}

func TestTheTextFormatShowsAWarningOnAMetNode(t *testing.T) {
	out := demoReport(t, nil, "text")
	const want = "  ok     implementation\n         - warning: x-tests-beside: no test file beside it: internal/links/links_test.go (internal/links/links.go:3)\n"
	if !contains(out, want) {
		t.Errorf("got:\n%s\nwant it to hold:\n%s", out, want)
	}
}

func TestGraphStatusListsEveryReachedNodeInText(t *testing.T) {
	stdout, stderr, code := runCLI(t, nil, "graph", "status", "issue-21", "--repo", demo)
	if code != 1 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	golden(t, "demo-status-issue-21.text", stdout)
}
