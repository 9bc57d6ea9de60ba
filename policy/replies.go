package policy

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/the-loop/the-loop/builtins"
	"github.com/the-loop/the-loop/graph"
)

// The integration operations Check performs: the listing of a work item's
// thread, {ref} -> {comments: [...]}, and for a pull request's inner loop
// the listings of its reviews, {ref} -> {reviews: [...]}, and of the
// comments on its diff, {ref} -> {comments: [...]}.
const (
	opListComments       = "list-comments"
	opListReviews        = "list-reviews"
	opListReviewComments = "list-review-comments"
)

// ReplyError is a work item whose replies could not be read: Check cannot
// answer for its gates, and says so rather than reporting them waiting.
type ReplyError struct {
	Item string
	Ref  string
	Err  error
}

func (e *ReplyError) Error() string {
	return fmt.Sprintf("%s: read the replies on %s: %v", e.Item, e.Ref, e.Err)
}

func (e *ReplyError) Unwrap() error { return e.Err }

// replySource is how Check reads the replies of sel's loop: a work item's
// thread, and for a pull request's inner loop its conversation, its
// reviews and the comments on its diff, in the order they were written:
// what the ingress hears on a pull request.
func (e *Engine) replySource(sel Selector) graph.ReplySource {
	if sel.PR == 0 {
		return e.readReplies
	}
	return func(item graph.WorkItem) ([]graph.Reply, error) {
		replies, err := e.readReplies(item)
		if _, _, _, perr := graph.ParseRef(item.Ref); err != nil || perr != nil {
			return replies, err // no thread to read, which readReplies noted
		}
		reviews, err := e.listing(item, opListReviews)
		if err != nil {
			return nil, err
		}
		onDiff, err := e.listing(item, opListReviewComments)
		if err != nil {
			return nil, err
		}
		return mergeReplies(mergeReplies(replies, listedReviews(reviews)), builtins.ListedReplies(onDiff)), nil
	}
}

// listedReviews reads a list-reviews answer, {"reviews": [{author, body,
// state, submitted_at}]}, as replies: a submitted review that approves,
// requests changes, or comments in words, dated when it was submitted. A
// dismissed review was withdrawn and a pending one never sent: neither is
// read, nor is a review that says nothing (the wrapper of comments on the
// diff). A review's body cannot be edited into another decision, so it
// has no Edited time.
func listedReviews(listing map[string]any) []graph.Reply {
	raw, _ := listing["reviews"].([]any)
	var out []graph.Reply
	for _, entry := range raw {
		m, ok := entry.(map[string]any)
		if !ok {
			continue
		}
		state, _ := m["state"].(string)
		body, _ := m["body"].(string)
		review := graph.ReviewState(state)
		if review == "" || (review == graph.ReviewCommented && strings.TrimSpace(body) == "") {
			continue
		}
		// The author and the time are read as a comment's are.
		r := builtins.ListedReplies(map[string]any{"comments": []any{map[string]any{
			"author": m["author"], "user": m["user"], "body": body, "created_at": m["submitted_at"], "self": m["self"]}}})
		if len(r) == 1 {
			r[0].Review = review
			out = append(out, r[0])
		}
	}
	return out
}

// mergeReplies is a and b, each oldest first, as one list oldest first; of
// two written at the same time, a's comes first.
func mergeReplies(a, b []graph.Reply) []graph.Reply {
	out := make([]graph.Reply, 0, len(a)+len(b))
	out = append(out, a...)
	out = append(out, b...)
	slices.SortStableFunc(out, func(x, y graph.Reply) int { return x.At.Compare(y.At) })
	return out
}

// readReplies lists item's thread through Options.Replies. An item with no
// GitHub ref has no thread to read: it is noted, not failed, and its gates
// wait as they would without replies. The listing says which comments the
// integration's own identity posted (the GitHub integration asks GitHub
// who its token is, and fails the listing when it cannot learn it), and
// the gates read none of those but the ledger's relays, as they read no
// marked comment (builtins.IsSelfAuthoredComment): the operator is on the
// allowlist, and the-loop posts with their token.
func (e *Engine) readReplies(item graph.WorkItem) ([]graph.Reply, error) {
	if _, _, _, err := graph.ParseRef(item.Ref); err != nil {
		e.mu.Lock()
		e.unreplied = append(e.unreplied, item.ID)
		e.mu.Unlock()
		return nil, graph.ErrRepliesUnread
	}
	res, err := e.listing(item, opListComments)
	if err != nil {
		return nil, err
	}
	return builtins.ListedReplies(res), nil
}

// Refusal is an integration error that says whether the credential was
// refused what it asked for (GitHub's 401 or 403, but a rate limit): a
// token that may not read the thread, not a thread that is wrong.
type Refusal interface {
	error
	Refused() bool
}

// listing is one of item's listings through Options.Replies. A listing
// the credential is refused is no answer about the item: a fork's pull
// request gets a token that may read nothing, and a job's token lacks
// what its permissions do not grant. The first refusal stops the reading
// for the rest of the run, is said once (noteDenied), and every item is
// then evaluated as without replies (graph.ErrRepliesUnread), so that a
// gate the state records approved says so, unverified. Any other failure
// is the item's *ReplyError.
func (e *Engine) listing(item graph.WorkItem, op string) (map[string]any, error) {
	e.mu.Lock()
	denied := e.denied != nil
	e.mu.Unlock()
	if denied {
		return nil, graph.ErrRepliesUnread
	}
	res, err := e.replies.Call(op, map[string]any{"ref": item.Ref})
	var r Refusal
	switch {
	case err == nil:
		return res, nil
	case errors.As(err, &r) && r.Refused():
		e.mu.Lock()
		if e.denied == nil {
			e.denied = err
		}
		e.mu.Unlock()
		return nil, graph.ErrRepliesUnread
	}
	return nil, &ReplyError{Item: item.ID, Ref: item.Ref, Err: err}
}

// noteDenied says, once, that replies were not read and why.
func (e *Engine) noteDenied() {
	e.mu.Lock()
	err := e.denied
	e.denied = nil
	e.mu.Unlock()
	if err == nil {
		return
	}
	e.note(fmt.Sprintf("replies not read: the token may not read them (%v); human gates wait, and an approval the state records is reported unverified (under GitHub Actions, give the job permissions issues: read and pull-requests: read)", err))
}

// noteUnreplied says, once and in order, which items had no thread to read.
func (e *Engine) noteUnreplied() {
	e.mu.Lock()
	items := slices.Sorted(slices.Values(e.unreplied))
	e.unreplied = nil
	e.mu.Unlock()
	if len(items) == 0 {
		return
	}
	e.note(fmt.Sprintf("no replies read for %s: no GitHub ref (an item named issue-N has one when the harness config declares ticketing.github); their human gates wait",
		strings.Join(slices.Compact(items), ", ")))
}
