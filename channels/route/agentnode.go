package route

import (
	"context"
	"strconv"

	"github.com/the-loop/the-loop/builtins"
	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/bindings"
	"github.com/the-loop/the-loop/channels/deliver"
	"github.com/the-loop/the-loop/eventlog"
	"github.com/the-loop/the-loop/policy"
)

// An ordinary comment on a work item that stands at an agent's (or code's)
// node, as the original's dispatcher does with one: the comment is
// delivered first, to where the work item's binding says its messages go
// (its URL, its command, else its inbox in the state root: package
// deliver), so that whoever works the node hears it; then the node is
// advanced with it, so that work the comment reports done moves the item
// on at once rather than at the next graph complete.
//
// Delivery fails open: a target that cannot be reached is logged and
// recorded (channel.dropped, reason undeliverable), and the advance runs
// all the same. Advancement fails closed: a fault leaves the state as it
// was and is returned, so that the delivery is released and tried again;
// the comment is then delivered again too, which is why a delivered
// message carries the comment's id (ts) for a target to recognise it by.

// DeliveryFailed and the target names (deliver.TargetInbox, TargetURL,
// TargetCommand) are what an outcome's "delivery" field says became of the
// comment; DeliveryRelayed is a chat reply the ledger recorded on the
// issue, which its channel delivered already.
const (
	DeliveryFailed  = "failed"
	DeliveryRelayed = "relayed"
)

// deliverFunc hands a message to a binding's target.
type deliverFunc func(ctx context.Context, b bindings.Binding, m deliver.Message) (deliver.Result, error)

// atWork delivers the comment and, unless the item only now entered its
// node or has finished its loop, advances the node with it. entered is
// what entering the loop said, nil when the item stood there already.
//
// Departure from the original (docs/compatibility.md#an-ordinary-comment-at-an-agents-node): the node is advanced even when the delivery failed.
func (r *Router) atWork(ctx context.Context, e *policy.Engine, in *inbound, t *target, item string, sel policy.Selector, pos policy.Position, entered []any) (channels.Outcome, error) {
	r.react(in, policy.ReactionStarted)
	kv := append(entered, r.handOver(ctx, in, t)...)
	if err := ctx.Err(); err != nil {
		// Shutting down is no fault of the target's: the delivery is
		// kept, to be delivered and advanced when it is tried again.
		return channels.Outcome{}, err
	}
	switch {
	case entered != nil:
		// A node just entered has done no work to judge yet: the comment
		// is heard, and that is all.
		return routed(t.fields(in, kv...)), nil
	case pos.Terminal:
		// A loop that is over has nothing to advance to.
		return routed(t.fields(in, append(kv, "node", pos.Node, "status", "done")...)), nil
	}
	ev, err := channels.ParseEvent("delivery "+in.d.ID, in.d.Body)
	if err != nil {
		return r.fault(in, t, "advance", err)
	}
	step, err := e.Advance(item, sel, ev)
	if err != nil {
		return r.fault(in, t, "advance", err)
	}
	kv = append(kv, "node", step.Node, "status", step.Status)
	if step.Outcome != "" && step.Outcome != step.Status {
		kv = append(kv, "outcome", step.Outcome)
	}
	if step.To != "" {
		kv = append(kv, "to", step.To)
		r.react(in, policy.ReactionCompleted)
	}
	r.log.Info("delivered a comment to a work item at work, then advanced it", "work_item", t.work, "node", step.Node, "status", step.Status, "to", step.To)
	return routed(t.fields(in, kv...)), nil
}

// handOver delivers the comment to the work item's target and says what
// became of it, as outcome fields. It never fails: delivery fails open.
func (r *Router) handOver(ctx context.Context, in *inbound, t *target) []any {
	text := in.comment.Body
	if env, ok := builtins.ParseEnvelope(text); ok && env.Type == channels.EventReply {
		// The ledger's record of a chat reply: the chat channel's
		// pipeline delivered it when it recorded it.
		return []any{"delivery", DeliveryRelayed}
	}
	if words, ok := builtins.RelayedWords(text); ok {
		text = words
	}
	m := deliver.Message{Ref: t.work.String(), Channel: policy.ChannelGitHub, Thread: in.entity.String(),
		TS: strconv.FormatInt(in.comment.ID, 10), Author: in.actor, Text: text, At: in.comment.CreatedAt.UTC()}
	got, err := r.deliver(ctx, t.binding, m)
	if err != nil {
		r.log.Warn("could not deliver a comment to the work item's target; advancing all the same", "work_item", t.work, "err", err)
		r.emit("channel.dropped", eventlog.LevelWarning, map[string]any{"channel": policy.ChannelGitHub,
			"work_item": t.work.String(), "actor": in.actor, "reason": "undeliverable", "error": err.Error(), "delivery_id": in.d.ID})
		r.react(in, policy.ReactionError)
		return []any{"delivery", DeliveryFailed, "delivery_error", err.Error()}
	}
	r.emit("channel.delivered", eventlog.LevelInfo, map[string]any{"channel": policy.ChannelGitHub,
		"work_item": t.work.String(), "actor": in.actor, "target": got.Target, "delivery_id": in.d.ID})
	return []any{"delivery", got.Target}
}
