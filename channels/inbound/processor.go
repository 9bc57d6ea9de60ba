package inbound

import (
	"context"
	"fmt"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/slack"
)

// DropNotANewMessage: the Slack event is not a message just written (an
// edit, a deletion, a join, another event type).
const DropNotANewMessage = "not-a-new-message"

// Processor takes the Slack events the ingress queued through the
// pipeline: it implements channels.Processor for a delivery whose Channel
// is channels.ChannelSlack. The queue gives it what it gives the router:
// one outcome per event, in order per work item, and a retry of what
// failed.
type Processor struct {
	Pipeline *Pipeline
}

var _ channels.Processor = Processor{}

// Process reads the event's message and takes it through the pipeline.
// The outcome is routed when the pipeline processed the message, else
// dropped with the pipeline's reason; an error (the bindings could not be
// read, GitHub failed for now to record it) leaves it queued, to be
// processed again after a pause. A delivery processed again, or queued by
// an earlier run, may have been recorded already: its record is looked
// for before it is posted.
func (p Processor) Process(ctx context.Context, d channels.Delivery) (channels.Outcome, error) {
	if d.Channel != channels.ChannelSlack {
		return channels.Outcome{}, fmt.Errorf("inbound: a %q delivery is not a Slack event", d.Channel)
	}
	env, err := slack.ParseEvent(d.Body)
	if err != nil {
		// The handler verified and parsed it before queueing: a body that
		// no longer parses is not one a retry would mend.
		return channels.Outcome{Reason: DropNotANewMessage, Fields: map[string]any{"error": err.Error()}}, nil
	}
	r, why := slack.ReplyOf(env)
	if why != "" {
		return channels.Outcome{Reason: DropNotANewMessage, Fields: map[string]any{"why": why}}, nil
	}
	res, err := p.Pipeline.process(ctx, r, d.Retries > 0 || d.Resumed)
	if err != nil {
		return channels.Outcome{}, err
	}
	out := channels.Outcome{Routed: res.Outcome == OutcomeProcessed, Fields: res.fields()}
	if !out.Routed {
		out.Reason = res.Outcome
	}
	return out, nil
}

// fields are the result as an outcome event's fields.
func (r Result) fields() map[string]any {
	f := map[string]any{}
	add := func(k string, v any) {
		if v != "" && v != nil {
			f[k] = v
		}
	}
	add("work_item", r.WorkItem)
	add("kind", r.Event)
	add("gate", string(r.Gate))
	if r.Mirrored != nil {
		f["mirrored"] = *r.Mirrored
	}
	if r.Delivered != nil {
		f["delivered"] = *r.Delivered
	}
	add("error", r.Error)
	return f
}
