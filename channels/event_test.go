package channels

import (
	"errors"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

func TestParseEvent(t *testing.T) {
	cases := []struct {
		name, doc string
		want      []graph.Comment
		err       string
	}{
		{"our shape", `{"comments": [{"author": "@alice", "body": "LGTM"}]}`, []graph.Comment{{Author: "alice", Body: "LGTM"}}, ""},
		{"github payload", `{"comment": {"user": {"login": "bob"}, "body": "approved"}}`, []graph.Comment{{Author: "bob", Body: "approved"}}, ""},
		{"author object", `{"comments": [{"author": {"login": "carol"}, "body": ""}]}`, []graph.Comment{{Author: "carol", Body: ""}}, ""},
		{"no author", `{"comments": [{"body": "hi"}]}`, nil, "comments[0].author: missing"},
		{"no body", `{"comments": [{"user": "me", "text": "approved"}]}`, nil, "comments[0].body: missing"},
		{"not json", `comments: []`, nil, "not an event document"},
		{"a review approving in no words", `{"review": {"user": {"login": "bob"}, "body": null, "state": "approved"}}`, []graph.Comment{{Author: "bob", Body: "", Review: "approved"}}, ""},
		{"a review as the REST listing spells it", `{"review": {"user": {"login": "bob"}, "body": "no", "state": "CHANGES_REQUESTED"}}`, []graph.Comment{{Author: "bob", Body: "no", Review: "changes_requested"}}, ""},
		{"a dismissed review decides nothing", `{"review": {"user": {"login": "bob"}, "body": "LGTM", "state": "dismissed"}}`, []graph.Comment{{Author: "bob", Body: "LGTM"}}, ""},
		{"a comment's state means nothing", `{"comment": {"user": {"login": "bob"}, "body": "hi", "state": "approved"}}`, []graph.Comment{{Author: "bob", Body: "hi"}}, ""},
		{"a review with neither words nor state", `{"review": {"user": {"login": "bob"}, "body": null}}`, nil, "comments[0].body: missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev, err := ParseEvent("event.json", []byte(c.doc))
			if c.err != "" {
				var ce *graph.ConfigError
				if !errors.As(err, &ce) || ce.File != "event.json" || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, want a ConfigError mentioning %q", err, c.err)
				}
				return
			}
			if err != nil || len(ev.Comments) != len(c.want) || ev.Comments[0] != c.want[0] {
				t.Fatalf("got %+v, %v", ev, err)
			}
		})
	}
}

func TestCommentEvent(t *testing.T) {
	ev, err := CommentEvent([]string{"a, b", "c"}, []string{"@x"})
	if err != nil || len(ev.Comments) != 2 || ev.Comments[0].Body != "a, b" || ev.Comments[1].Author != "x" {
		t.Fatalf("got %+v, %v", ev, err)
	}
	if _, err := CommentEvent([]string{"a", "b", "c"}, []string{"x", "y"}); err == nil {
		t.Error("mismatched authors accepted")
	}
	if ev, err := CommentEvent(nil, nil); ev != nil || err != nil {
		t.Error("no comments should be no event")
	}
}
