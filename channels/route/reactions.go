package route

import (
	"errors"
	"time"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/github"
	"github.com/the-loop/the-loop/graph"
)

// react acknowledges the delivery's comment with the reaction
// routing.reactions configures for moment: started (eyes) when the-loop
// acts on it, completed (hooray) when it moved the graph, error (confused)
// when it was refused or failed. Best effort: a reaction never changes what
// the delivery did, so a failed one is logged and recorded as
// reaction.failed, and under the none integration it is skipped with a
// debug line. Each moment is posted at most once per delivery, by the
// router's reaction poster (see postReactions), not while the delivery
// waits. A review, or a comment on a pull request's diff, is acknowledged
// on the pull request itself (see inbound.reactionID).
func (r *Router) react(in *inbound, moment string) {
	if in.comment == nil || in.comment.ID <= 0 || in.kind != kindWritten && in.kind != kindEdited || !r.cli.ReactionsEnabled() {
		return
	}
	content := r.cli.Reaction(moment)
	if content == "" {
		return
	}
	if in.reacted == nil {
		in.reacted = map[string]bool{}
	}
	if in.reacted[moment] {
		return
	}
	in.reacted[moment] = true
	params := map[string]any{"ref": in.entity.String(), github.ParamCommentID: in.reactionID(), "content": content}
	ref, delivery := in.entity, in.d.ID
	r.pending.Add(1)
	select {
	case r.reactions <- func() { r.post(ref, delivery, moment, content, params) }:
	default:
		r.pending.Done()
		r.log.Warn("reaction not posted: too many waiting to be", "ref", ref, "moment", moment)
	}
}

// maxPendingReactions bounds the reactions waiting to be posted.
const maxPendingReactions = 256

// postReactions posts the reactions asked for, one at a time, in order.
func (r *Router) postReactions() {
	for post := range r.reactions {
		post()
		r.pending.Done()
	}
}

// WaitReactions returns once every reaction asked for so far is posted or
// has failed, or once timeout has passed; false in the second case.
func (r *Router) WaitReactions(timeout time.Duration) bool {
	done := make(chan struct{})
	go func() { r.pending.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(timeout):
		return false
	}
}

func (r *Router) post(ref channels.Ref, delivery, moment, content string, params map[string]any) {
	_, err := r.integration.Call(OpAddReaction, params)
	switch {
	case errors.Is(err, graph.ErrIntegrationUnavailable):
		r.log.Debug("no reaction: no integration to post it", "ref", ref, "moment", moment, "err", err)
	case err != nil:
		r.log.Warn("could not add a reaction", "ref", ref, "moment", moment, "content", content, "err", err)
		r.emit("reaction.failed", "warning", map[string]any{"work_item": ref.String(), "state": moment,
			"content": content, "error": err.Error(), "delivery_id": delivery})
	default:
		r.emit("reaction.added", "debug", map[string]any{"work_item": ref.String(), "state": moment,
			"content": content, "delivery_id": delivery})
	}
}
