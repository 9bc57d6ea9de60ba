package builtins

import (
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

func TestPostGoalRequestAsksOnceShowingTheAcceptedShape(t *testing.T) {
	fake := &obFake{}
	ctx := goalCtx(fake)
	r, err := postGoalRequest{}.Run(ctx)
	if err != nil || r.Status != graph.StatusPass || r.Data["posted"] != true {
		t.Fatalf("first entry: %s %v %v, want posted", r.Status, r.Data, err)
	}
	body := fake.posted()[0]
	for _, want := range []string{"Goal:", "Success criteria:", goalRequestMarker, selfCommentMarker} {
		if !strings.Contains(body, want) {
			t.Errorf("request lacks %q", want)
		}
	}
	// The request's own example must not read as a goal: it is self-marked.
	r, _ = postGoalRequest{}.Run(ctx)
	if r.Data["posted"] != false || r.Data["reason"] != "already asked" {
		t.Errorf("second entry: %v, want not posted, already asked", r.Data)
	}
	if n := len(fake.posted()); n != 1 {
		t.Errorf("posted %d requests, want 1", n)
	}
}

func TestPostGoalRequestStaysQuietWhenTheGoalIsAlreadyStated(t *testing.T) {
	fake := &obFake{Thread: []map[string]any{{"user": map[string]any{"login": "owner"}, "body": goalComment}}}
	r, _ := postGoalRequest{}.Run(goalCtx(fake))
	if r.Data["posted"] != false || r.Data["reason"] != "goal already stated" {
		t.Fatalf("data = %v, want not posted, goal already stated", r.Data)
	}
	if len(fake.posted()) != 0 {
		t.Error("posted a request although the goal was stated")
	}
}

func TestPostGoalRequestAsksWhenOnlyAStrangerStatedAGoal(t *testing.T) {
	fake := &obFake{Thread: []map[string]any{{"user": map[string]any{"login": "drive-by"}, "body": goalComment}}}
	r, _ := postGoalRequest{}.Run(goalCtx(fake))
	if r.Data["posted"] != true {
		t.Fatalf("data = %v, want the request posted", r.Data)
	}
}
