package route

import (
	"errors"
	"github.com/the-loop/the-loop/channels/github"

	"github.com/the-loop/the-loop/graph"
)

// react acknowledges the delivery's comment with the reaction
// routing.reactions configures for moment: started (eyes) when the-loop
// acts on it, completed (hooray) when it moved the graph, error (confused)
// when it was refused or failed. Best effort: a reaction never changes what
// the delivery did, so a failed one is logged and recorded as
// reaction.failed, and under the none integration it is skipped with a
// debug line. Each moment is posted at most once per delivery.
func (r *Router) react(in *inbound, moment string) {
	if in.comment == nil || in.comment.ID <= 0 || !r.cli.ReactionsEnabled() {
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
	params := map[string]any{"ref": in.entity.String(), github.ParamCommentID: in.comment.ID, "content": content}
	_, err := r.integration.Call(OpAddReaction, params)
	switch {
	case errors.Is(err, graph.ErrIntegrationUnavailable):
		r.log.Debug("no reaction: no integration to post it", "ref", in.entity, "moment", moment, "err", err)
	case err != nil:
		r.log.Warn("could not add a reaction", "ref", in.entity, "moment", moment, "content", content, "err", err)
		r.emit("reaction.failed", "warning", map[string]any{"work_item": in.entity.String(), "state": moment,
			"content": content, "error": err.Error(), "delivery_id": in.d.ID})
	default:
		r.emit("reaction.added", "debug", map[string]any{"work_item": in.entity.String(), "state": moment,
			"content": content, "delivery_id": in.d.ID})
	}
}
