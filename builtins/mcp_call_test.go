package builtins

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

func TestMCPCall(t *testing.T) {
	cases := []struct {
		name   string
		params map[string]any
		answer map[string]any
		status graph.Status
		result string
	}{
		{"no tool named", map[string]any{}, nil, graph.StatusSkip, ""},
		{"the tool succeeds", map[string]any{"tool": "jira.create", "arguments": map[string]any{"summary": "x"}}, map[string]any{"ok": true, "result": "JIRA-7"}, graph.StatusPass, "JIRA-7"},
		{"the tool reports failure", map[string]any{"tool": "jira.create"}, map[string]any{"ok": false}, graph.StatusBlock, ""},
		{"an answer without ok is a failure", map[string]any{"tool": "jira.create"}, map[string]any{"result": "?"}, graph.StatusBlock, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := &obFake{Answers: map[string]map[string]any{opMCPCall: tc.answer}}
			ctx := obCtx(fake, nil, "")
			ctx.Params = tc.params
			r, err := mcpCall{}.Run(ctx)
			if err != nil || r.Status != tc.status {
				t.Fatalf("got %s %v (%s), want %s", r.Status, err, r.Render(), tc.status)
			}
			if tc.status == graph.StatusPass && (r.Data["tool"] != "jira.create" || r.Data["result"] != tc.result) {
				t.Errorf("data = %v", r.Data)
			}
			if tc.status == graph.StatusBlock && !r.Retriable {
				t.Error("a tool's failure should be retriable")
			}
		})
	}
}

func TestMCPCallPassesItsParametersWithDefaults(t *testing.T) {
	fake := &obFake{Answers: map[string]map[string]any{opMCPCall: {"ok": true}}}
	ctx := obCtx(fake, nil, "")
	ctx.Params = map[string]any{"tool": "t"}
	mcpCall{}.Run(ctx)
	want := map[string]any{"ref": "github:o/r#1", "tool": "t", "arguments": map[string]any{}, "harness": "claude", "timeoutSeconds": float64(300)}
	if !reflect.DeepEqual(fake.Calls[0].Params, want) {
		t.Errorf("params = %v, want %v", fake.Calls[0].Params, want)
	}
}

// performer is an integration that says which operations it performs.
type performer struct {
	obFake
	ops []string
}

func (p *performer) Performs(op string) bool { return slices.Contains(p.ops, op) }

func (p *performer) Call(op string, params map[string]any) (map[string]any, error) {
	if !p.Performs(op) {
		return nil, fmt.Errorf("%s: %w", op, errors.ErrUnsupported)
	}
	return p.obFake.Call(op, params)
}

// TestMCPCallUnderReadOnlyPredictsTheRunsBlock: check and a dry run say
// what advance will do. An integration known not to delegate makes the
// run block for good, so the read-only evaluation blocks too; one that
// delegates, or cannot say, is skipped without a call.
func TestMCPCallUnderReadOnlyPredictsTheRunsBlock(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   graph.Integration
		want graph.Status
	}{
		{"no integration", nil, graph.StatusBlock},
		{"the none integration", graph.NoIntegration{}, graph.StatusBlock},
		{"one that does not delegate", &performer{ops: []string{"add-comment"}}, graph.StatusBlock},
		{"one that delegates", &performer{ops: []string{opMCPCall}}, graph.StatusSkip},
		{"one that cannot say", &obFake{}, graph.StatusSkip},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := obCtx(&obFake{}, nil, "")
			ctx.Integration = tc.in
			ctx.Params = map[string]any{"tool": "jira.create"}
			ctx.ReadOnly = true
			r, err := mcpCall{}.Run(ctx)
			if err != nil || r.Status != tc.want {
				t.Fatalf("got %s %v (%s), want %s", r.Status, err, r.Render(), tc.want)
			}
			if tc.want == graph.StatusBlock && r.Retriable {
				t.Error("a block for want of delegation is not retriable")
			}
			if p, ok := tc.in.(*performer); ok && len(p.Calls) > 0 {
				t.Errorf("called out under read-only: %v", p.ops)
			}
			if f, ok := tc.in.(*obFake); ok && len(f.Calls) > 0 {
				t.Errorf("called out under read-only")
			}
			// The run decides the same where the integration says it
			// does not delegate.
			if tc.want == graph.StatusBlock {
				ctx.ReadOnly = false
				if r, _ := (mcpCall{}).Run(ctx); r.Status != graph.StatusBlock || r.Retriable {
					t.Errorf("the run: %s retriable=%v, want the same block", r.Status, r.Retriable)
				}
			}
		})
	}
}
