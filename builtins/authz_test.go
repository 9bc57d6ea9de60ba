package builtins

import (
	"reflect"
	"testing"
	"time"

	"github.com/the-loop/the-loop/graph"
)

func TestMarkSelfAuthoredIsRecognisedAndIdempotent(t *testing.T) {
	marked := markSelfAuthored("hello  \n\n")
	want := "hello\n\n" + selfCommentAttribution + "\n" + selfCommentMarker + "\n"
	if marked != want {
		t.Errorf("markSelfAuthored = %q, want %q", marked, want)
	}
	if !isSelfAuthored(marked) {
		t.Error("a marked body is not recognised")
	}
	if again := markSelfAuthored(marked); again != marked {
		t.Errorf("marking twice changed the body: %q", again)
	}
	if isSelfAuthored("") || isSelfAuthored("<!-- the-loop:something-else -->") {
		t.Error("an unmarked body is recognised as the-loop's")
	}
}

func TestIsAuthorizedFailsClosed(t *testing.T) {
	cases := []struct {
		actor   string
		allowed []string
		want    bool
	}{
		{"owner", []string{"owner"}, true},
		{"@owner", []string{"owner"}, true},
		{"owner", []string{"@owner"}, true},
		{" @owner ", []string{"@owner"}, true},
		{"Owner", []string{"owner"}, true}, // GitHub logins are case-insensitive
		{"owner2", []string{"owner"}, false},
		{"owner", nil, false},
		{"", []string{"owner"}, false},
		{"@", []string{"@"}, false},
		{"", []string{""}, false},
	}
	for _, tc := range cases {
		if got := isAuthorized(tc.actor, tc.allowed); got != tc.want {
			t.Errorf("isAuthorized(%q, %q) = %v, want %v", tc.actor, tc.allowed, got, tc.want)
		}
	}
}

func TestAuthorizedCommentsDropsTheHarnessAndStrangers(t *testing.T) {
	ctx := obCtx(nil, nil, "")
	ctx.Event = eventOf(
		"@owner", "first",
		"@drive-by", "steer me",
		"@owner", markSelfAuthored("the-loop talking to itself"),
		"", "anonymous",
		"owner", "second",
	)
	got := authorizedComments(ctx)
	want := []graph.Comment{{Author: "@owner", Body: "first"}, {Author: "owner", Body: "second"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("authorizedComments = %v, want %v", got, want)
	}
	ctx.Event = nil
	if got := authorizedComments(ctx); got != nil {
		t.Errorf("nil event read %v", got)
	}
}

func TestCommentsFromListingReadsEveryProviderShape(t *testing.T) {
	listing := map[string]any{"comments": []any{
		map[string]any{"user": map[string]any{"login": "a"}, "body": "one"},
		map[string]any{"author": "b", "body": "two"},
		map[string]any{"author": map[string]any{"login": "c"}, "body": "three"},
		map[string]any{"body": "four"},
		"not a comment",
	}}
	got := commentsFromListing(listing)
	want := []graph.Comment{{Author: "a", Body: "one"}, {Author: "b", Body: "two"}, {Author: "c", Body: "three"}, {Body: "four"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("commentsFromListing = %v, want %v", got, want)
	}
	typed := commentsFromListing(map[string]any{"comments": []map[string]any{{"author": "d", "body": "five"}}})
	if len(typed) != 1 || typed[0].Author != "d" {
		t.Errorf("typed listing = %v", typed)
	}
	if got := commentsFromListing(map[string]any{}); got != nil {
		t.Errorf("empty listing = %v", got)
	}
}

func TestListedRepliesKeepWhenEachCommentWasPosted(t *testing.T) {
	got := ListedReplies(map[string]any{"comments": []any{
		map[string]any{"author": "a", "body": "one", "created_at": "2026-03-09T10:49:12Z"},
		map[string]any{"author": "b", "body": "two", "createdAt": "2026-03-09T11:00:00+01:00"},
		map[string]any{"author": "c", "body": "three", "created_at": "yesterday"},
	}})
	want := []graph.Reply{
		{Comment: graph.Comment{Author: "a", Body: "one"}, At: time.Date(2026, 3, 9, 10, 49, 12, 0, time.UTC)},
		{Comment: graph.Comment{Author: "b", Body: "two"}, At: time.Date(2026, 3, 9, 10, 0, 0, 0, time.UTC)},
		{Comment: graph.Comment{Author: "c", Body: "three"}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i].Comment != want[i].Comment || !got[i].At.Equal(want[i].At) {
			t.Errorf("reply %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestTheIntegrationsOwnCommentsAreTheLoopsOwnButARelayIsNot(t *testing.T) {
	relay := StampEnvelope("💬 **the-loop** recorded an answer to the open gate from `jc1993`:\n\n> approved",
		Envelope{Type: "gate.feedback", Source: "slack", Actor: map[string]string{"github": "jc1993"}})
	reply := StampEnvelope(markSelfAuthored("💬 **the-loop** recorded a reply:\n\n> approved"),
		Envelope{Type: "work-item.reply", Source: "slack", Actor: map[string]string{"github": "jc1993"}})
	for _, tc := range []struct {
		name string
		c    graph.Comment
		want bool
	}{
		{"a person's comment", graph.Comment{Author: "owner", Body: "approved"}, false},
		{"a marked comment", graph.Comment{Author: "owner", Body: markSelfAuthored("approved")}, true},
		{"an unmarked comment by the integration's identity", graph.Comment{Author: "owner", Body: "approved", Self: true}, true},
		{"a relay by the integration's identity", graph.Comment{Author: "owner", Body: relay, Self: true}, false},
		{"a relay by anyone else", graph.Comment{Author: "owner", Body: relay}, false},
		{"a reply record, marked", graph.Comment{Author: "owner", Body: reply, Self: true}, true},
		{"an envelope of another type by the identity", graph.Comment{Author: "owner", Self: true,
			Body: StampEnvelope("> approved", Envelope{Type: "phase-approval-pending", Source: "slack"})}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsSelfAuthoredComment(tc.c); got != tc.want {
				t.Errorf("IsSelfAuthoredComment = %v, want %v", got, tc.want)
			}
		})
	}

	// A gate hears the relay, as jc1993's words, and nothing else the
	// identity posted, though it is on the allowlist.
	ctx := obCtx(nil, nil, "")
	ctx.Settings.AuthorizedUsers = []string{"owner", "jc1993"}
	ctx.Event = &graph.Event{Comments: []graph.Comment{
		{Author: "owner", Body: "forced transition a -> b by owner. Reason: approved at the meeting.", Self: true},
		{Author: "owner", Body: relay, Self: true},
	}}
	got := authorizedComments(ctx)
	if want := []graph.Comment{{Author: "jc1993", Body: "approved", Self: true}}; !reflect.DeepEqual(got, want) {
		t.Errorf("authorizedComments = %v, want %v", got, want)
	}
	if why := waitingFor(ctx, "no authorized feedback yet"); why != "no authorized feedback yet" {
		t.Errorf("the-loop's own comment is counted as a person's not read: %q", why)
	}
}

func TestListedRepliesSayWhichTheIntegrationsIdentityPosted(t *testing.T) {
	got := ListedReplies(map[string]any{"comments": []any{
		map[string]any{"author": "a", "body": "one", "self": true},
		map[string]any{"author": "b", "body": "two", "self": "yes"},
		map[string]any{"author": "c", "body": "three"},
	}})
	var self []bool
	for _, r := range got {
		self = append(self, r.Self)
	}
	if !reflect.DeepEqual(self, []bool{true, false, false}) {
		t.Errorf("self = %v, want only a boolean true read", self)
	}
}

// A comment GitHub dates as updated after it was written was edited then;
// one updated when it was written, or dated oddly, was not.
func TestListedRepliesSayWhenACommentWasEdited(t *testing.T) {
	got := ListedReplies(map[string]any{"comments": []any{
		map[string]any{"author": "a", "body": "one", "created_at": "2026-03-09T10:49:12Z", "updated_at": "2026-03-09T11:00:00Z"},
		map[string]any{"author": "b", "body": "two", "created_at": "2026-03-09T10:49:12Z", "updated_at": "2026-03-09T10:49:12Z"},
		map[string]any{"author": "c", "body": "three", "createdAt": "2026-03-09T10:49:12Z", "updatedAt": "2026-03-09T10:00:00Z"},
		map[string]any{"author": "d", "body": "four", "updated_at": "2026-03-09T11:00:00Z"},
	}})
	want := []time.Time{time.Date(2026, 3, 9, 11, 0, 0, 0, time.UTC), {}, {}, {}}
	for i, w := range want {
		if !got[i].Edited.Equal(w) {
			t.Errorf("reply %d edited %v, want %v", i, got[i].Edited, w)
		}
	}
}
