package main

import (
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

// TestARunEndsWithTheOriginalsLastLine pins the last line of graph run's
// text for each way a run ends, as the original's graph_cmd.py prints it.
func TestARunEndsWithTheOriginalsLastLine(t *testing.T) {
	steps := []graph.Step{{Node: "design", Status: "pass", To: "test-planning"}, {Node: "test-planning", Status: "pass", To: "design"}}
	cases := []struct {
		name string
		rep  graph.RunReport
		want string
	}{
		{"the terminal node", graph.RunReport{Stopped: graph.StoppedTerminal, At: "complete"}, "issue-1: complete"},
		{"a wait", graph.RunReport{Stopped: "wait", At: "design-approval"}, "issue-1: stopped at design-approval (wait)"},
		{"a block", graph.RunReport{Stopped: "block", At: "design"}, "issue-1: stopped at design (block)"},
		{"an escalation", graph.RunReport{Stopped: graph.StatusEscalated, At: "design"}, "issue-1: stopped at design (escalated)"},
		{"a loop names the node evaluated once too often", graph.RunReport{Stopped: graph.StoppedLooping, At: "design", Steps: steps}, "issue-1: looping on test-planning; stopping"},
		{"the bound", graph.RunReport{Stopped: graph.StoppedMaxNodes, At: "design", Steps: steps}, "issue-1: hit --max-nodes (2); stopping"},
		{"a dry run says so", graph.RunReport{Stopped: graph.StoppedTerminal, At: "complete", DryRun: true}, "issue-1: complete (dry run: nothing written)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := writeRun(&b, "issue-1", 2, &tc.rep); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			if last := lines[len(lines)-1]; last != tc.want {
				t.Errorf("last line = %q, want %q", last, tc.want)
			}
		})
	}
}
