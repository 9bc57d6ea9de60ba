package route

import (
	"github.com/the-loop/the-loop/builtins"
	"github.com/the-loop/the-loop/channels"
)

// Edits, deletions and dismissals: one rule, the one check --replies
// github reads a thread by. A reply counts as its body at the time the
// gate reads it, and answers a gate at most once:
//
//   - an edit of a comment (or review) the gate waited on is read again,
//     as if it were written now, at the gate it was written at (an edit
//     of one written before the gate the item waits at now is stale);
//   - an edit, deletion or dismissal of one the ingress acted on (it moved
//     a gate, or was a control command) changes nothing: what it said then
//     stands (already-acted);
//   - a deletion or a dismissal of one nothing acted on undoes nothing,
//     and is said so (comment-deleted, review-dismissed).
//
// check reads the listing, which carries the edited body and no longer
// the deleted comment or the dismissed review: for a gate still open that
// is what the ingress has read; for a gate the item has left, a reply
// edited after it moved is not read (graph.Reply.Edited).

// Reasons a revision of a reply is dropped.
const (
	// DropAlreadyActed: the comment or review was acted on already; an
	// edit, deletion or dismissal of it changes nothing.
	DropAlreadyActed = "already-acted"
	// DropCommentDeleted: a comment nothing acted on was deleted; there
	// is nothing to undo.
	DropCommentDeleted = "comment-deleted"
	// DropReviewDismissed: a review nothing acted on was dismissed.
	DropReviewDismissed = "review-dismissed"
)

// revised decides an edit, a deletion or a dismissal that needs no graph:
// done is false when the delivery is to be read as a reply (an edit of a
// comment nothing acted on, by its author or an authorized person), and
// for a reply just written.
//
// Departure from the original (docs/compatibility.md#edits-deletions-and-dismissals): a reply answers a gate at most once; an edit is read at the gate it was written at.
func (r *Router) revised(in *inbound, t *target) (out channels.Outcome, done bool) {
	switch in.kind {
	case kindEdited, kindDeleted, kindDismissed:
	default:
		return channels.Outcome{}, false
	}
	action := in.p.Action
	if t.binding.HasActed(in.ackID()) {
		r.log.Info("a reply already acted on was revised; what it said then stands", "work_item", t.work,
			"comment_id", in.comment.ID, "action", action)
		return dropped(DropAlreadyActed, t.fields(in, "comment_id", in.comment.ID, "gh_action", action)), true
	}
	switch in.kind {
	case kindDeleted:
		return dropped(DropCommentDeleted, t.fields(in, "comment_id", in.comment.ID)), true
	case kindDismissed:
		return dropped(DropReviewDismissed, t.fields(in, "comment_id", in.comment.ID)), true
	}
	// The words are the author's only if the author wrote them: an edit
	// by anyone else must come from someone whose word counts too.
	if editor := in.sender.Login; editor != "" && !sameLogin(editor, in.actor) &&
		(isBot(editor, in.sender.Type) || !builtins.IsAuthorized(editor, r.cli.AuthorizedUsers())) {
		r.log.Warn("dropping an edit of an authorized person's comment by someone not in routing.authorizedUsers",
			"delivery", in.d.ID, "work_item", t.work, "editor", editor)
		return dropped(channels.DropUnauthorizedActor, t.fields(in, "editor", editor, "gh_action", action)), true
	}
	return channels.Outcome{}, false
}

// waitedOn reports whether a routed answer left the gate waiting: handed
// to the gate, which neither moved nor blocked.
func waitedOn(out channels.Outcome) bool {
	_, moved := out.Fields["to"]
	_, command := out.Fields["control"]
	return !moved && !command && out.Fields["status"] == "wait"
}

func sameLogin(a, b string) bool { return builtins.IsAuthorized(a, []string{b}) }
