package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/the-loop/the-loop/builtins"
)

// MaxComments is the most comments one listing reads: a thread longer
// than that is an error, not a silently shortened answer.
const MaxComments = 5000

// maxLabels is the most labels one listing reads (GitHub allows 100 on an
// issue).
const maxLabels = 1000

// request is one REST call: the operation and ref it serves (for
// errors), and what is sent.
type request struct {
	op, ref string
	method  string
	// path is below the API root, escaped.
	path string
	// body is sent as JSON when not nil.
	body any
	// repeatable: sending it twice does what sending it once does, so a
	// transient failure (a 5xx, a dropped connection) may be retried. A
	// rate-limited request was not performed, and is retried either way.
	repeatable bool
}

func (r request) fail(status int, msg string, err error) *Error {
	return &Error{Op: r.op, Ref: r.ref, Method: r.method, Path: r.path, Status: status, Msg: msg, Err: err}
}

// transport carries requests to GitHub: REST over HTTP, or the gh CLI.
type transport interface {
	name() string
	// do sends r and decodes the answer into out; nil discards it.
	do(ctx context.Context, r request, out any) error
	// list sends r, a GET of a list, following GitHub's pagination to
	// the end, and returns its items; more than max is an error.
	list(ctx context.Context, r request, max int) ([]json.RawMessage, error)
	// credential names the credential requests go with, without
	// revealing it: what Identity keeps a login under. Two credentials
	// that may be different accounts have different names.
	credential() string
}

// via is the transport, or the error every call fails with when there is
// none.
func (in *Integration) via(op string, ref Ref) (transport, error) {
	if in.transport == nil {
		return nil, fmt.Errorf("github %s %s: %w", op, ref, in.unavailable)
	}
	return in.transport, nil
}

// apiComment is a comment as GitHub's REST API answers it.
type apiComment struct {
	ID   int64 `json:"id"`
	User struct {
		Login string `json:"login"`
	} `json:"user"`
	Body      string    `json:"body"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func (c apiComment) comment() Comment {
	return Comment{ID: c.ID, Author: c.User.Login, Body: c.Body, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

type apiLabel struct {
	Name string `json:"name"`
}

func labelNames(ls []apiLabel) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Name
	}
	return out
}

// AddComment posts body on the issue or pull request as the-loop's own:
// marked with the self-authored marker and its visible attribution
// (builtins.MarkSelfAuthored) unless it already carries them, so that no
// reader ever takes what the-loop posts for a person's answer, whichever
// caller composed it. The one comment the-loop posts unmarked is a
// record of a person's words, which goes through AddRelay.
//
// Departure from the original (docs/compatibility.md#the-audit-comments-of-graph-force-and-graph-skip-are-marked): the integration marks every body it posts, not the runtime.
func (in *Integration) AddComment(ctx context.Context, ref Ref, body string) (Comment, error) {
	return in.postComment(ctx, ref, builtins.MarkSelfAuthored(body))
}

// AddRelay posts body, a ledger record of what a person said on another
// channel (see Ledger), unmarked: the gates read the person's words in it
// (builtins.RelayedWords), attributed by its envelope. A body that is not
// such a record, carrying a gate.feedback or control.command envelope and
// the words quoted, or that carries the marker, is refused: nothing else
// the-loop writes may go up unmarked.
func (in *Integration) AddRelay(ctx context.Context, ref Ref, body string) (Comment, error) {
	if _, ok := builtins.RelayedWords(body); !ok || builtins.IsSelfAuthored(body) {
		return Comment{}, &Error{Op: OpAddComment, Ref: ref.String(), Msg: "params.relay: the body is not a ledger record of a person's words (an unmarked gate.feedback or control.command envelope and the words quoted); not posted"}
	}
	return in.postComment(ctx, ref, body)
}

func (in *Integration) postComment(ctx context.Context, ref Ref, body string) (Comment, error) {
	t, err := in.via(OpAddComment, ref)
	if err != nil {
		return Comment{}, err
	}
	var c apiComment
	err = t.do(ctx, request{op: OpAddComment, ref: ref.String(), method: http.MethodPost, path: issuePath(ref) + "/comments",
		body: map[string]any{"body": body}}, &c)
	return c.comment(), err
}

// Comments lists every comment on the issue or pull request, oldest
// first, following pagination.
func (in *Integration) Comments(ctx context.Context, ref Ref) ([]Comment, error) {
	return in.comments(ctx, OpListComments, ref, issuePath(ref)+"/comments")
}

// ReviewComments lists every comment on the pull request's diff (its
// review comments), oldest first, following pagination.
func (in *Integration) ReviewComments(ctx context.Context, ref Ref) ([]Comment, error) {
	return in.comments(ctx, OpListReviewComments, ref, fmt.Sprintf("/repos/%s/%s/pulls/%d/comments", ref.Owner, ref.Repo, ref.Number))
}

func (in *Integration) comments(ctx context.Context, op string, ref Ref, path string) ([]Comment, error) {
	t, err := in.via(op, ref)
	if err != nil {
		return nil, err
	}
	r := request{op: op, ref: ref.String(), method: http.MethodGet, path: path, repeatable: true}
	items, err := t.list(ctx, r, MaxComments)
	if err != nil {
		return nil, err
	}
	out := make([]Comment, 0, len(items))
	for _, raw := range items {
		var c apiComment
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, r.fail(0, "a comment in the answer is not one", err)
		}
		out = append(out, c.comment())
	}
	return out, nil
}

// Review is one pull request review as GitHub's REST listing answers it.
type Review struct {
	ID     int64
	Author string
	Body   string
	// State is GitHub's, upper case: APPROVED, CHANGES_REQUESTED,
	// COMMENTED, DISMISSED or PENDING.
	State string
	// SubmittedAt is when it was submitted; zero for a pending review.
	SubmittedAt time.Time
}

// apiReview is a review as the REST API answers it; body may be null.
type apiReview struct {
	ID   int64 `json:"id"`
	User struct {
		Login string `json:"login"`
	} `json:"user"`
	Body        *string    `json:"body"`
	State       string     `json:"state"`
	SubmittedAt *time.Time `json:"submitted_at"`
}

func (r apiReview) review() Review {
	out := Review{ID: r.ID, Author: r.User.Login, State: r.State}
	if r.Body != nil {
		out.Body = *r.Body
	}
	if r.SubmittedAt != nil {
		out.SubmittedAt = *r.SubmittedAt
	}
	return out
}

// Reviews lists every review of the pull request ref names, in the order
// GitHub keeps them (oldest first), following pagination.
func (in *Integration) Reviews(ctx context.Context, ref Ref) ([]Review, error) {
	t, err := in.via(OpListReviews, ref)
	if err != nil {
		return nil, err
	}
	r := request{op: OpListReviews, ref: ref.String(), method: http.MethodGet,
		path: fmt.Sprintf("/repos/%s/%s/pulls/%d/reviews", ref.Owner, ref.Repo, ref.Number), repeatable: true}
	items, err := t.list(ctx, r, MaxComments)
	if err != nil {
		return nil, err
	}
	out := make([]Review, 0, len(items))
	for _, raw := range items {
		var rv apiReview
		if err := json.Unmarshal(raw, &rv); err != nil {
			return nil, r.fail(0, "a review in the answer is not one", err)
		}
		out = append(out, rv.review())
	}
	return out, nil
}

// Labels lists the issue's labels.
func (in *Integration) Labels(ctx context.Context, ref Ref) ([]string, error) {
	t, err := in.via(OpListLabels, ref)
	if err != nil {
		return nil, err
	}
	r := request{op: OpListLabels, ref: ref.String(), method: http.MethodGet, path: issuePath(ref) + "/labels", repeatable: true}
	items, err := t.list(ctx, r, maxLabels)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(items))
	for _, raw := range items {
		var l apiLabel
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, r.fail(0, "a label in the answer is not one", err)
		}
		out = append(out, l.Name)
	}
	return out, nil
}

// AddLabels adds labels beside the issue's own (it never replaces them)
// and returns the labels the issue then has.
func (in *Integration) AddLabels(ctx context.Context, ref Ref, labels ...string) ([]string, error) {
	return in.SetLabels(ctx, ref, labels, "")
}

// SetLabels adds labels, like AddLabels, and then, when replacePrefix is
// not "", takes off every other label of the issue that starts with it:
// how a phase label replaces the previous phase's while the labels people
// put on the issue stay. It returns the labels the issue then has.
func (in *Integration) SetLabels(ctx context.Context, ref Ref, labels []string, replacePrefix string) ([]string, error) {
	op := OpAddLabels
	if replacePrefix != "" {
		op = OpSetLabels
	}
	t, err := in.via(op, ref)
	if err != nil {
		return nil, err
	}
	var now []apiLabel
	if err := t.do(ctx, request{op: op, ref: ref.String(), method: http.MethodPost, path: issuePath(ref) + "/labels",
		body: map[string]any{"labels": labels}, repeatable: true}, &now); err != nil {
		return nil, err
	}
	have := labelNames(now)
	if replacePrefix == "" {
		return have, nil
	}
	for _, l := range slices.Clone(have) {
		if !strings.HasPrefix(l, replacePrefix) || slices.Contains(labels, l) {
			continue
		}
		if have, err = in.removeLabel(ctx, t, op, ref, l, have); err != nil {
			return nil, err
		}
	}
	return have, nil
}

// RemoveLabel takes label off the issue and returns the labels it then
// has. A label the issue does not carry is an error (GitHub's 404).
func (in *Integration) RemoveLabel(ctx context.Context, ref Ref, label string) ([]string, error) {
	t, err := in.via(OpRemoveLabel, ref)
	if err != nil {
		return nil, err
	}
	var now []apiLabel
	err = t.do(ctx, labelDeletion(OpRemoveLabel, ref, label), &now)
	return labelNames(now), err
}

// removeLabel is a set-labels' removal of label from have: one that is
// already gone (someone took it off meanwhile) is not an error.
func (in *Integration) removeLabel(ctx context.Context, t transport, op string, ref Ref, label string, have []string) ([]string, error) {
	var now []apiLabel
	err := t.do(ctx, labelDeletion(op, ref, label), &now)
	var ge *Error
	if errors.As(err, &ge) && ge.Status == http.StatusNotFound {
		return slices.DeleteFunc(have, func(l string) bool { return l == label }), nil
	}
	if err != nil {
		return nil, err
	}
	return labelNames(now), nil
}

func labelDeletion(op string, ref Ref, label string) request {
	return request{op: op, ref: ref.String(), method: http.MethodDelete,
		path: issuePath(ref) + "/labels/" + url.PathEscape(label), repeatable: true}
}

// RequestReviewers asks users and teams (slugs) to review the pull request
// ref names.
func (in *Integration) RequestReviewers(ctx context.Context, ref Ref, users, teams []string) error {
	t, err := in.via(OpRequestReviewers, ref)
	if err != nil {
		return err
	}
	body := map[string]any{"reviewers": nonNil(users)}
	if len(teams) > 0 {
		body["team_reviewers"] = teams
	}
	return t.do(ctx, request{op: OpRequestReviewers, ref: ref.String(), method: http.MethodPost,
		path: fmt.Sprintf("/repos/%s/%s/pulls/%d/requested_reviewers", ref.Owner, ref.Repo, ref.Number),
		body: body, repeatable: true}, nil)
}

// AddReaction reacts with content (one of Reactions) to the comment
// commentID of ref's repository, or to the issue itself when commentID
// is 0. Reacting twice with the same content is one reaction.
func (in *Integration) AddReaction(ctx context.Context, ref Ref, commentID int64, content string) error {
	if !slices.Contains(Reactions, content) {
		return &Error{Op: OpAddReaction, Ref: ref.String(), Msg: fmt.Sprintf("params.content: got %q, want one of %s", content, strings.Join(Reactions, ", "))}
	}
	t, err := in.via(OpAddReaction, ref)
	if err != nil {
		return err
	}
	path := issuePath(ref) + "/reactions"
	if commentID > 0 {
		path = fmt.Sprintf("/repos/%s/%s/issues/comments/%d/reactions", ref.Owner, ref.Repo, commentID)
	}
	return t.do(ctx, request{op: OpAddReaction, ref: ref.String(), method: http.MethodPost, path: path,
		body: map[string]any{"content": content}, repeatable: true}, nil)
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}
