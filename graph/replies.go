package graph

import (
	"errors"
	"strings"
	"time"
)

// Reply is one comment on a work item's thread, and when it was posted.
type Reply struct {
	Comment
	// At is when the comment was posted; a zero At cannot be placed at a
	// gate and is never handed to one.
	At time.Time
	// Edited is when its body was last edited, zero when it never was.
	// A reply counts as its body at the time the gate reads it: a gate the
	// item has left read it before an edit made after it moved on, and
	// what it read then is not known, so it is not handed the reply.
	Edited time.Time
}

// The states of a pull request review a Comment.Review carries.
const (
	ReviewApproved         = "approved"
	ReviewChangesRequested = "changes_requested"
	ReviewCommented        = "commented"
)

// ReviewState is GitHub's state of a submitted pull request review as a
// Comment.Review: approved, changes_requested or commented, in whichever
// case GitHub wrote it (a webhook lower case, the REST listing upper
// case). Any other state, dismissed and pending among them, is "": such a
// review decides nothing.
func ReviewState(state string) string {
	switch s := strings.ToLower(strings.TrimSpace(state)); s {
	case ReviewApproved, ReviewChangesRequested, ReviewCommented:
		return s
	}
	return ""
}

// ErrRepliesUnread is a ReplySource's answer for an item whose replies it
// did not read (the item has no thread, or the integration was refused):
// Status evaluates its gates as it would with no source, and a gate the
// state records as answered says so, unverified.
var ErrRepliesUnread = errors.New("replies not read")

// ReplySource reads the replies on a work item's thread, oldest first, for
// a read-only evaluation: it is how check sees what people answered on the
// item's issue. It is called at most once per item and evaluation.
type ReplySource func(item WorkItem) ([]Reply, error)

// repliesAt is the event node n's exit chain is handed under Status: the
// replies posted while the state had the item at n, which is what advance
// would have handed the gate when each arrived. Outside that window a
// reply answered another gate, or none: an "approved" on the requirements
// must not pass the design approval that came after it.
//
//   - The node the item is at: from when it was entered. A node that was
//     exited before and entered again (a design sent back for changes)
//     starts after its last exit, whose reply the earlier visit answered.
//   - A node the item has left: from when it was first entered to when it
//     was last exited, both inclusive.
//   - The start node with no entry recorded counts from the beginning of
//     the thread: advance evaluates it without entering it.
//   - Any other node never entered, or whose times do not parse: none.
//
// A node the item has left is not handed a reply edited after it was last
// exited (see Reply.Edited): the webhook ingress does not read an edit
// made after the gate moved either, and the body the gate read is gone.
//
// Replies an earlier gate passed on (consumed) are left out. The event is
// nil when no reply falls in the window; handed are the indexes of those
// it holds.
func repliesAt(replies []Reply, consumed []bool, n *Node, st *State, start string) (ev *Event, handed []int) {
	if len(replies) == 0 {
		return nil, nil
	}
	rec := st.Nodes[n.ID]
	if rec == nil {
		rec = &NodeRecord{}
	}
	entered, hasEntered := parseStamp(rec.EnteredAt)
	exited, hasExited := parseStamp(rec.ExitedAt)
	// after is the window's lower bound, inclusive; nil is unbounded.
	var after func(time.Time) bool
	switch {
	case n.ID == start && !hasEntered:
		after = func(time.Time) bool { return true }
	case hasEntered:
		after = func(t time.Time) bool { return !t.Before(entered) }
	default:
		return nil, nil
	}
	left := hasExited && after(exited)
	in := func(t time.Time) bool { return after(t) && left && !t.After(exited) }
	// editedSince is set for a node the item has left: its replies are
	// read as they were when it moved on.
	editedSince := func(r Reply) bool { return left && r.Edited.After(exited) }
	if n.ID == st.CurrentNode || (st.CurrentNode == "" && n.ID == start) {
		in = after
		editedSince = func(Reply) bool { return false }
		if left {
			in = func(t time.Time) bool { return t.After(exited) }
		}
	}
	for i, r := range replies {
		if r.At.IsZero() || consumed[i] || !in(r.At) || editedSince(r) {
			continue
		}
		if ev == nil {
			ev = &Event{}
		}
		ev.Comments = append(ev.Comments, r.Comment)
		handed = append(handed, i)
	}
	return ev, handed
}

// parseStamp reads a graph-state time: this tool's Timestamp, or the
// original's isoformat with a fraction of a second.
func parseStamp(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}
