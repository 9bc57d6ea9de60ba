package builtins

import (
	"reflect"
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
