package graph

import "time"

// Reply is one comment on a work item's thread, and when it was posted.
type Reply struct {
	Comment
	// At is when the comment was posted; a zero At cannot be placed at a
	// gate and is never handed to one.
	At time.Time
}

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
	if n.ID == st.CurrentNode || (st.CurrentNode == "" && n.ID == start) {
		in = after
		if left {
			in = func(t time.Time) bool { return t.After(exited) }
		}
	}
	for i, r := range replies {
		if r.At.IsZero() || consumed[i] || !in(r.At) {
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
