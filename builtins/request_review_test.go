package builtins

import (
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

func TestRequestReviewNamesTheGateAndTheWorkItem(t *testing.T) {
	fake := &obFake{}
	ctx := obCtx(fake, &graph.Node{ID: "design-approval", Actor: graph.ActorHuman}, "")
	r, err := requestReview{}.Run(ctx)
	if err != nil || r.Status != graph.StatusPass || r.Data["posted"] != true {
		t.Fatalf("got %s %v %v, want posted", r.Status, r.Data, err)
	}
	if len(fake.Calls) != 1 || fake.Calls[0].Op != "add-comment" || fake.Calls[0].Params["ref"] != "github:o/r#1" {
		t.Fatalf("calls = %v, want one add-comment on the work item", fake.Calls)
	}
	body := fake.posted()[0]
	for _, want := range []string{"**design-approval**", "`issue-1`", selfCommentMarker} {
		if !strings.Contains(body, want) {
			t.Errorf("request lacks %q:\n%s", want, body)
		}
	}
}
