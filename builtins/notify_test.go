package builtins

import (
	"reflect"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

func TestNotifyResolvesRolesFromTheConfigFirst(t *testing.T) {
	cases := []struct {
		name          string
		params        map[string]any
		notifications map[string]any
		event         string
		roles         []any // nil means a skip
	}{
		{"configured roles for the default event", nil,
			map[string]any{"events": map[string]any{"phase-approval-pending": []any{"approver", "lead"}}},
			"phase-approval-pending", []any{"approver", "lead"}},
		{"the config wins over the hook's roles", map[string]any{"event": "pr-review-pending", "roles": []any{"fallback"}},
			map[string]any{"events": map[string]any{"pr-review-pending": []any{"reviewer"}}},
			"pr-review-pending", []any{"reviewer"}},
		{"the hook's roles when the config names none", map[string]any{"event": "conflict-escalated", "roles": []any{"owner"}},
			map[string]any{"events": map[string]any{"other": []any{"x"}}},
			"conflict-escalated", []any{"owner"}},
		{"no roles anywhere skips", map[string]any{"event": "decision-pending"}, nil, "decision-pending", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := &obFake{}
			ctx := obCtx(fake, &graph.Node{ID: "design-approval"}, "")
			for k, v := range tc.params {
				ctx.Params[k] = v
			}
			ctx.Settings.Notifications = tc.notifications
			r, err := notify{}.Run(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tc.roles == nil {
				if r.Status != graph.StatusSkip || !strings.Contains(r.Render(), tc.event) || len(fake.Calls) > 0 {
					t.Errorf("got %s %q calls %v, want a skip naming %s", r.Status, r.Render(), fake.ops(), tc.event)
				}
				return
			}
			if r.Status != graph.StatusPass || r.Data["delivered"] != true || !reflect.DeepEqual(r.Data["roles"], tc.roles) {
				t.Fatalf("got %s %v, want delivered to %v", r.Status, r.Data, tc.roles)
			}
			call := fake.Calls[0]
			if call.Op != "notify" || call.Params["event"] != tc.event || !reflect.DeepEqual(call.Params["roles"], tc.roles) || call.Params["ref"] != "github:o/r#1" {
				t.Errorf("call = %v", call)
			}
			if text := call.Params["text"].(string); !strings.Contains(text, "issue-1") || !strings.Contains(text, "design-approval") {
				t.Errorf("text = %q, want the work item and node", text)
			}
		})
	}
}

func TestNotifyReadsTheChannelsAnswer(t *testing.T) {
	cases := []struct {
		name   string
		answer map[string]any
		status graph.Status
		err    string
	}{
		{"no channel subscribed is a skip", map[string]any{"subscribed": false}, graph.StatusSkip, ""},
		{"nothing delivered degrades", map[string]any{"delivered": false, "error": "slack: channel_not_found"}, graph.StatusPass, "slack: channel_not_found"},
		{"nothing delivered without a reason still degrades", map[string]any{"delivered": false}, graph.StatusPass, "no channel delivered"},
		{"delivered", map[string]any{"delivered": true}, graph.StatusPass, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := &obFake{Answers: map[string]map[string]any{opNotify: tc.answer}}
			ctx := obCtx(fake, nil, "")
			ctx.Params["roles"] = []any{"lead"}
			r, _ := notify{}.Run(ctx)
			if r.Status != tc.status {
				t.Fatalf("status = %s, want %s", r.Status, tc.status)
			}
			got, _ := r.Data["error"].(string)
			if (tc.err == "") != (got == "") || !strings.Contains(got, tc.err) {
				t.Errorf("data[error] = %q, want %q", got, tc.err)
			}
		})
	}
}
