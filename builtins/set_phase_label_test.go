package builtins

import (
	"reflect"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

func TestSetPhaseLabel(t *testing.T) {
	cases := []struct {
		name   string
		node   *graph.Node
		prefix string
		want   string // the prefix of the labels it replaces
		status graph.Status
		labels []any
	}{
		{"the default prefix", &graph.Node{ID: "design", Phase: "design"}, "", "loop:", graph.StatusPass, []any{"loop:design"}},
		{"a configured prefix", &graph.Node{ID: "design", Phase: "design"}, "pdlc/", "pdlc/", graph.StatusPass, []any{"pdlc/design"}},
		{"a node with no phase creates no label", &graph.Node{ID: "security-review"}, "", "", graph.StatusSkip, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := &obFake{}
			ctx := obCtx(fake, tc.node, "")
			ctx.Settings.PhaseLabelPrefix = tc.prefix
			r, err := setPhaseLabel{}.Run(ctx)
			if err != nil || r.Status != tc.status {
				t.Fatalf("got %s %v, want %s", r.Status, err, tc.status)
			}
			if tc.labels == nil {
				if len(fake.Calls) > 0 {
					t.Errorf("called out: %v", fake.ops())
				}
				return
			}
			want := []obCall{{Op: "set-labels", Params: map[string]any{"ref": "github:o/r#1", "labels": tc.labels, "replacePrefix": tc.want}}}
			if !reflect.DeepEqual(fake.Calls, want) {
				t.Errorf("calls = %v, want %v", fake.Calls, want)
			}
			if r.Data["label"] != tc.labels[0] || r.Data["applied"] != true {
				t.Errorf("data = %v", r.Data)
			}
		})
	}
}

func TestSetPhaseLabelReportsTheLabelItCouldNotApply(t *testing.T) {
	r, _ := setPhaseLabel{}.Run(obCtx(graph.NoIntegration{}, nil, ""))
	if r.Status != graph.StatusPass || r.Data["label"] != "loop:design" || r.Data["applied"] != false || r.Data["error"] == nil {
		t.Errorf("got %s %v, want a degraded pass naming loop:design", r.Status, r.Data)
	}
}
