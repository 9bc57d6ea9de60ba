package builtins

import (
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

func TestRenderAssignment(t *testing.T) {
	cases := []struct {
		name    string
		loop    string
		ref     string
		node    *graph.Node
		surface string
		want    []string
		absent  []string
	}{
		{
			name: "an agent node of the outer loop",
			loop: graph.WorkItemLoop, ref: "github:o/r#7",
			node: &graph.Node{ID: "design", Phase: "design", Actor: graph.ActorAgent, Produces: []string{"design.md"}, Command: "work-on"},
			want: []string{
				"the-loop assignment for issue-1:",
				"you are now at node: design (phase: design)",
				"produce: design.md",
				"the work item itself (the default)",
				"`/the-loop:work-on issue-1`",
				"report back: `the-loop graph complete issue-1`",
			},
			absent: []string{"--pr"},
		},
		{
			name: "the pull-request surface chosen at selection",
			loop: graph.WorkItemLoop, ref: "github:o/r#7", surface: surfacePullRequest,
			node: &graph.Node{ID: "design", Produces: []string{"design.md"}},
			want: []string{"a pull request in the repository the ticket belongs to"},
		},
		{
			name: "a human gate is announced, never assigned",
			loop: graph.WorkItemLoop, ref: "github:o/r#7",
			node:   &graph.Node{ID: "design-approval", Actor: graph.ActorHuman},
			want:   []string{"HUMAN gate", "Do not claim it"},
			absent: []string{"report back", "produce:"},
		},
		{
			name: "an inner loop names its pull request",
			loop: graph.PRLoop, ref: "github:acme/svc#42",
			node: &graph.Node{ID: "implementation", Actor: graph.ActorAgent, Produces: []string{"tasks.md"}},
			want: []string{
				"pull request #42's pdlc-pr-loop on issue-1 (in acme/svc)",
				"this pull request",
				"`the-loop graph complete issue-1 --pr 42 --pr-repo acme/svc`",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := obCtx(nil, tc.node, "")
			ctx.Graph = &graph.Graph{Name: tc.loop}
			ctx.WorkItem.Ref = tc.ref
			ctx.Surface = tc.surface
			text := renderAssignment(ctx)
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("assignment lacks %q:\n%s", w, text)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(text, a) {
					t.Errorf("assignment contains %q:\n%s", a, text)
				}
			}
		})
	}
}

func TestDeliverAssignmentHandsTheTextToTheSession(t *testing.T) {
	fake := &obFake{}
	ctx := obCtx(fake, &graph.Node{ID: "design", Produces: []string{"design.md"}}, "")
	r, err := deliverAssignment{}.Run(ctx)
	if err != nil || r.Status != graph.StatusPass || r.Data["delivered"] != true {
		t.Fatalf("got %s %v %v, want delivered", r.Status, r.Data, err)
	}
	call := fake.Calls[0]
	if call.Op != "deliver-assignment" || call.Params["node"] != "design" || call.Params["workItem"] != "issue-1" || !strings.Contains(call.Params["text"].(string), "design.md") {
		t.Errorf("call = %v", call)
	}
}

func TestDeliverAssignmentSkipsWhereTheOriginalSkips(t *testing.T) {
	cases := []struct {
		name string
		in   graph.Integration
		want string // the skip's reason
	}{
		// The original's test_deliver_assignment_skips_without_a_channel: the
		// CLI path, where nothing is wired to push into a session.
		{"no integration: the CLI path", nil, "no delivery channel"},
		{"the none integration", graph.NoIntegration{}, "no delivery channel"},
		{"an integration with no delivery channel", &obUnsupported{}, "no delivery channel"},
		{"no live session", &obFake{Answers: map[string]map[string]any{opDeliverAssignment: {"delivered": false}}}, "no live session to deliver into"},
		{"a delivery that fails", &obBroken{}, "delivery failed: deliver-assignment: github is down"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := deliverAssignment{}.Run(obCtx(tc.in, nil, ""))
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != graph.StatusSkip || !strings.Contains(r.Render(), tc.want) {
				t.Fatalf("got %s %q, want a skip saying %q", r.Status, r.Render(), tc.want)
			}
			if _, degraded := r.Data["error"]; degraded {
				t.Errorf("data[error] = %v: the runtime would warn and log graph.hook_degraded", r.Data["error"])
			}
		})
	}
}
