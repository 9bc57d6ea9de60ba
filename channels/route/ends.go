package route

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/the-loop/the-loop/channels"
)

// Ends: an issue closed, a pull request merged or closed unmerged. As the
// original's dispatcher, the end of a work item (its own issue closed, or
// its own pull request when the pull request is what is bound) forgets its
// control record, so that a reopened item starts from a clean slate; a pull
// request that delivers a work item and is merged drives its inner loop to
// complete (a merge is that pull request's approval, given as a state
// change), recorded as a forced move that forges no verdict; one closed
// unmerged is left where it stood, abandoned rather than finished. The
// original also ends the work item's agent sessions and, when an
// authorized person closed it, releases its checkout and walks it to its
// cleanup node; the-loop serve spawns no session and holds no checkout of
// its own, so there is nothing of that to do, and the outcome says so.

// Reasons an end is dropped.
const (
	// DropWorkItemClosed: the work item's own issue (or bound pull
	// request) was closed, and there was no control record to forget.
	DropWorkItemClosed = "work-item-closed"
	// DropPRClosedUnmerged: a pull request delivering a work item was
	// closed without being merged; its inner loop stays where it was.
	DropPRClosedUnmerged = "pr-closed-unmerged"
	// DropPRLoopNotRunning: a pull request delivering a work item was
	// merged, and its inner loop has nothing to finish: it was never
	// entered, or stands at complete already.
	DropPRLoopNotRunning = "pr-loop-not-running"
)

// mergedReason is the reason the forced move of a merged pull request's
// inner loop records, as the original words it.
func mergedReason(pr channels.Ref) string { return fmt.Sprintf("pull request %s merged", pr) }

// endActor is who the-loop records as having moved an inner loop on a
// merge: the-loop itself, acting on GitHub's word.
const endActor = "the-loop"

// closed decides an issue or pull request closed.
//
// Departure from the original (docs/compatibility.md#ends): a close clears control and forces a merged PR loop, but walks no cleanup node.
func (r *Router) closed(ctx context.Context, in *inbound, t *target) (channels.Outcome, error) {
	unlock, out, done, err := r.lockFresh(ctx, in, t)
	if done {
		return out, err
	}
	defer unlock()
	merged := in.p.PullRequest != nil && in.p.PullRequest.Merged
	if t.pr.IsZero() {
		return r.itemClosed(in, t, merged)
	}
	if !merged {
		r.log.Info("a pull request delivering a work item was closed unmerged; its inner loop is left where it was",
			"work_item", t.work, "pull_request", t.pr)
		return dropped(DropPRClosedUnmerged, t.fields(in)), nil
	}
	return r.prMerged(ctx, in, t)
}

// ended is what the closing of the work item's own issue or pull request
// is called in the outcome: issue-closed, pr-merged or pr-closed.
func ended(in *inbound, merged bool) string {
	switch {
	case in.d.Event == "issues":
		return "issue-closed"
	case merged:
		return "pr-merged"
	}
	return "pr-closed"
}

// itemClosed forgets the control record of a work item that ended.
func (r *Router) itemClosed(in *inbound, t *target, merged bool) (channels.Outcome, error) {
	why := ended(in, merged)
	if t.binding.Control == nil {
		return dropped(DropWorkItemClosed, t.fields(in, "ended", why,
			"why", "no control record to forget; the-loop serve holds no session or checkout to release")), nil
	}
	if _, err := r.bindings.ClearControl(t.work); err != nil {
		return r.fault(in, t, "end", err)
	}
	r.log.Info("the work item ended; its control record is forgotten", "work_item", t.work, "ended", why,
		"command", t.binding.Control.Command)
	return routed(t.fields(in, "ended", why, "effect", "control-cleared", "command", t.binding.Control.Command)), nil
}

// prMerged drives the inner loop of a merged pull request to complete,
// behind the guards an answer passes: the graph driven, the item not held,
// its checkout there and the work item's own.
func (r *Router) prMerged(ctx context.Context, in *inbound, t *target) (channels.Outcome, error) {
	if !r.cli.GraphEnabled() {
		return dropped(DropGraphDisabled, t.fields(in, "ended", "pr-merged")), nil
	}
	if why := r.held(t.binding); why != "" {
		return dropped(why, t.fields(in, "ended", "pr-merged")), nil
	}
	if !t.binding.HasCheckout() {
		return dropped(DropNoCheckout, t.fields(in, "ended", "pr-merged")), nil
	}
	if err := checkoutThere(t); err != nil {
		return r.fault(in, t, "merge", err)
	}
	origin, ok := r.owned(t)
	if !ok {
		r.foreign(t, origin, "merge")
		return dropped(DropForeignCheckout, t.fields(in, "checkout", t.binding.Repo)), nil
	}
	if err := ctx.Err(); err != nil {
		return channels.Outcome{}, err
	}
	e, err := r.open(t)
	if err != nil {
		return r.fault(in, t, "merge", err)
	}
	item, sel := t.work.ItemID(), t.selector()
	pos, err := e.Position(item, sel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.noSpecDir(e, t, "merge")
		return dropped(DropNoSpecDir, t.fields(in, "ended", "pr-merged")), nil
	case err != nil:
		return r.fault(in, t, "merge", err)
	case !pos.Entered:
		return dropped(DropPRLoopNotRunning, t.fields(in, "ended", "pr-merged", "why", "its inner loop was never entered")), nil
	case pos.Node == completeNode:
		return dropped(DropPRLoopNotRunning, t.fields(in, "ended", "pr-merged", "node", pos.Node, "why", "its inner loop is complete already")), nil
	}
	f, err := e.Force(item, completeNode, mergedReason(t.pr), endActor, sel)
	if err != nil {
		return r.fault(in, t, "merge", err)
	}
	for _, w := range f.Warnings {
		r.log.Warn("forcing a merged pull request's inner loop to complete", "work_item", t.work, "pull_request", t.pr, "warning", w)
	}
	r.log.Info("a merged pull request's inner loop was driven to complete", "work_item", t.work, "pull_request", t.pr, "from", f.FromNode)
	return routed(t.fields(in, "ended", "pr-merged", "node", f.FromNode, "to", completeNode, "forced", true)), nil
}

// completeNode is the inner loop's node a merge drives it to.
const completeNode = "complete"
