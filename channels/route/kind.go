package route

import "time"

// What a delivery is, as the router reads GitHub's event and action: a
// reply just written (a comment, a pull request review, a comment on a
// pull request's diff), a reply revised (edited, deleted, dismissed), or
// the end of an issue or pull request. Everything else is none of them.

// kind is what the router makes of a delivery's event and action.
type kind int

const (
	// kindOther is not a reply: an issue labelled, a pull request opened,
	// a CI event.
	kindOther kind = iota
	// kindWritten is a reply just written: issue_comment or
	// pull_request_review_comment created, pull_request_review submitted.
	kindWritten
	// kindEdited is a reply's body edited: issue_comment,
	// pull_request_review_comment or pull_request_review edited.
	kindEdited
	// kindDeleted is a comment deleted.
	kindDeleted
	// kindDismissed is a review dismissed.
	kindDismissed
	// kindClosed is an issue or a pull request closed (merged or not).
	kindClosed
)

// source is what kind of reply a delivery's comment is: GitHub numbers
// each in a sequence of its own.
type source int

const (
	sourceIssueComment  source = iota // on an issue or a pull request's conversation
	sourceReview                      // a pull request review
	sourceReviewComment               // a comment on a pull request's diff
)

// kindOf reads the event and action of a delivery.
func kindOf(event, action string) (kind, source) {
	switch event {
	case "issue_comment", "pull_request_review_comment":
		src := sourceIssueComment
		if event == "pull_request_review_comment" {
			src = sourceReviewComment
		}
		switch action {
		case "created":
			return kindWritten, src
		case "edited":
			return kindEdited, src
		case "deleted":
			return kindDeleted, src
		}
		return kindOther, src
	case "pull_request_review":
		switch action {
		case "submitted":
			return kindWritten, sourceReview
		case "edited":
			return kindEdited, sourceReview
		case "dismissed":
			return kindDismissed, sourceReview
		}
		return kindOther, sourceReview
	case "issues", "pull_request":
		if action == "closed" {
			return kindClosed, sourceIssueComment
		}
	}
	return kindOther, sourceIssueComment
}

// review is a pull request review as a webhook carries it. Its body is
// null when the reviewer wrote none.
type review struct {
	ID          int64     `json:"id"`
	Body        *string   `json:"body"`
	User        account   `json:"user"`
	SubmittedAt time.Time `json:"submitted_at"`
}

// asComment is the review as the comment the router reads: written when
// it was submitted. Its state is read by the gate, from the payload
// (channels.ParseEvent).
func (rv *review) asComment() *comment {
	c := &comment{ID: rv.ID, User: rv.User, CreatedAt: rv.SubmittedAt}
	if rv.Body != nil {
		c.Body = *rv.Body
	}
	return c
}

// ackID is the id the comment is recorded under once acted on
// (bindings.Binding.Acted): an issue comment's own id, as it always was; a
// review's and a diff comment's in a negative range of their own (-2n and
// -2n-1), since GitHub numbers them apart and the same number may name
// one of each.
func (in *inbound) ackID() int64 {
	switch in.source {
	case sourceReview:
		return -2 * in.comment.ID
	case sourceReviewComment:
		return -2*in.comment.ID - 1
	}
	return in.comment.ID
}

// reactionID is the comment a reaction goes on: an issue comment's id;
// 0 (the issue or pull request itself) for a review, which takes no
// reaction of its own, and for a diff comment, whose reactions live
// elsewhere in GitHub's API.
func (in *inbound) reactionID() int64 {
	if in.source != sourceIssueComment {
		return 0
	}
	return in.comment.ID
}
