package channels

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/repo"
)

// ReadEvent reads an inbound event for a human gate from a JSON file: either
// {"comments": [{"author": "login", "body": "text"}, ...]}, a GitHub
// issue_comment or pull_request_review_comment webhook payload
// ({"comment": {"user": {"login"}, "body"}}), or a pull_request_review one
// ({"review": {"user": {"login"}, "body", "state"}}). An author may also be
// an object with a login, as GitHub writes it.
//
// The file must be a regular file of at most MaxEventBytes: a FIFO, a
// device or a file that keeps growing is refused, never waited on.
func ReadEvent(path string) (*graph.Event, error) {
	data, err := repo.ReadRegular(path, MaxEventBytes)
	if err != nil {
		return nil, fmt.Errorf("read event file: %w", err)
	}
	return ParseEvent(path, data)
}

// MaxEventBytes bounds an event file: GitHub's own limit on a webhook
// payload.
const MaxEventBytes = 25 << 20

// ParseEvent decodes an event document; path is used in errors only.
func ParseEvent(path string, data []byte) (*graph.Event, error) {
	var doc struct {
		Comments []rawComment `json:"comments"`
		Comment  *rawComment  `json:"comment"`
		Review   *rawComment  `json:"review"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, &graph.ConfigError{File: path, Msg: "not an event document; want {\"comments\": [{\"author\": \"login\", \"body\": \"text\"}]}", Err: err}
	}
	raw := doc.Comments
	if doc.Comment != nil {
		raw = append(raw, *doc.Comment)
	}
	if doc.Review != nil {
		// A review's body is null when the reviewer wrote none: its state
		// is what it says.
		r := *doc.Review
		r.review = true
		if r.Body == nil && r.State != "" {
			r.Body = new(string)
		}
		raw = append(raw, r)
	}
	ev := &graph.Event{Comments: []graph.Comment{}}
	for i, c := range raw {
		author := c.login()
		if author == "" {
			return nil, &graph.ConfigError{File: path, Key: fmt.Sprintf("comments[%d].author", i), Msg: "missing; want the commenter's login"}
		}
		if c.Body == nil {
			return nil, &graph.ConfigError{File: path, Key: fmt.Sprintf("comments[%d].body", i), Msg: "missing; want the comment's text"}
		}
		ev.Comments = append(ev.Comments, graph.Comment{Author: author, Body: *c.Body, Review: c.reviewState()})
	}
	return ev, nil
}

type rawComment struct {
	Author json.RawMessage `json:"author"`
	User   json.RawMessage `json:"user"`
	Body   *string         `json:"body"`
	// State is a review's: GitHub's webhook writes it lower case, its
	// REST listing upper case.
	State string `json:"state"`
	// review is set for the payload's review object; State means nothing
	// on a comment.
	review bool
}

// reviewState is the graph.Comment.Review of a review: its state lower
// case; "" for a comment, and for a review state GitHub does not submit
// (pending, dismissed), which is read as no decision.
//
// Departure from the original (docs/compatibility.md#pull-request-reviews-are-read-by-their-state): a review's state decides, not its body alone.
func (c rawComment) reviewState() string {
	if !c.review {
		return ""
	}
	return graph.ReviewState(c.State)
}

func (c rawComment) login() string {
	for _, raw := range []json.RawMessage{c.Author, c.User} {
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return strings.TrimPrefix(s, "@")
		}
		var obj struct {
			Login string `json:"login"`
		}
		if json.Unmarshal(raw, &obj) == nil && obj.Login != "" {
			return obj.Login
		}
	}
	return ""
}

// CommentEvent builds an event from --comment/--author pairs given on the
// command line. Every comment needs an author: a gate reads authorized
// users' replies only.
func CommentEvent(bodies, authors []string) (*graph.Event, error) {
	if len(bodies) == 0 && len(authors) == 0 {
		return nil, nil
	}
	if len(authors) != 1 && len(authors) != len(bodies) {
		return nil, fmt.Errorf("--author: got %d for %d --comment; want one author, or one per comment", len(authors), len(bodies))
	}
	ev := &graph.Event{}
	for i, b := range bodies {
		a := authors[0]
		if len(authors) > 1 {
			a = authors[i]
		}
		ev.Comments = append(ev.Comments, graph.Comment{Author: strings.TrimPrefix(a, "@"), Body: b})
	}
	return ev, nil
}
