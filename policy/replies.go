package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/the-loop/the-loop/builtins"
	"github.com/the-loop/the-loop/graph"
)

// opListComments is the one integration operation Check performs: the
// listing of a work item's thread, {ref} -> {comments: [...]}.
const opListComments = "list-comments"

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
		return nil, nil
	}
	res, err := e.replies.Call(opListComments, map[string]any{"ref": item.Ref})
	if err != nil {
		return nil, &ReplyError{Item: item.ID, Ref: item.Ref, Err: err}
	}
	return builtins.ListedReplies(res), nil
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
