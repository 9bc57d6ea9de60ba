package channels

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/the-loop/the-loop/graph"
)

// Delivery is one webhook delivery the ingress accepted.
type Delivery struct {
	// ID is GitHub's X-GitHub-Delivery: what de-duplicates a delivery, and
	// what a redelivery of it keeps.
	ID string `json:"id"`
	// Event is X-GitHub-Event: issue_comment, issues, pull_request, ...
	Event string `json:"event"`
	// Body is the payload, exactly as signed.
	Body json.RawMessage `json:"body"`
	// Item is the ref of the work item the delivery concerns
	// (github:OWNER/REPO#N): the issue or pull request it is on (ItemOf),
	// or the work item a pull request delivers when the processor names
	// it; "" when it names none. Deliveries of one Item are processed one
	// at a time, in the order they were accepted.
	Item     string    `json:"item"`
	Received time.Time `json:"received"`
	// Channel is where the delivery came from: "" for a GitHub webhook,
	// ChannelSlack for a Slack event. Event and ID are then the channel's
	// own (Slack's event type and event_id).
	Channel string `json:"channel,omitempty"`
	// Retries is how many times processing it failed before, in this run
	// and earlier ones: 0 the first time. The queue sets it.
	Retries int `json:"retries,omitempty"`
	// Resumed says an earlier run queued it and did not settle it: that
	// run may have begun processing it, and died before it was recorded.
	Resumed bool `json:"resumed,omitempty"`
}

// ChannelSlack is the Delivery.Channel of an event Slack's Events API
// posted.
const ChannelSlack = "slack"

// Reasons a delivery is dropped, as routing.dropped's reason says them.
const (
	DropDisabledEvent     = "disabled-event"
	DropDuplicateDelivery = "duplicate-delivery"
	DropNoWorkItem        = "no-work-item"
	DropSelfAuthored      = "self-authored"
	DropUnauthorizedActor = "unauthorized-actor"
)

// Outcome is what processing a delivery decided: routed, or dropped for a
// reason. Fields are added to the routing.routed or routing.dropped event.
type Outcome struct {
	Routed bool
	Reason string
	Fields map[string]any
}

// A Processor decides what one delivery does: which work item it concerns,
// whether its author may act, and what it asks of the graph. Each delivery
// gets exactly one recorded Outcome; the call that produced it is made
// again after a crash that came before the Outcome was recorded, so what
// a processor does must bear being done twice. It is never called for two
// deliveries of one Item at once.
//
// An error means the delivery could not be processed and changed nothing
// (advancement fails closed): it stays queued and is processed again
// after a pause that grows (Delivery.Retries says how often it failed),
// its ID still known, so a redelivery of it is a duplicate. A delivery
// that was processed and chose to do nothing is an Outcome with Routed
// false, not an error.
type Processor interface {
	Process(ctx context.Context, d Delivery) (Outcome, error)
}

// ItemOf is the ref of the issue or pull request a payload concerns:
// github:OWNER/REPO#N from repository.full_name and issue.number (a pull
// request's comments arrive as issue_comment on its issue) or
// pull_request.number; "" when it names none, or not in GitHub's shape.
func ItemOf(body []byte) string {
	var p struct {
		Repository struct {
			FullName string `json:"full_name"`
		} `json:"repository"`
		Issue *struct {
			Number int `json:"number"`
		} `json:"issue"`
		PullRequest *struct {
			Number int `json:"number"`
		} `json:"pull_request"`
	}
	if json.Unmarshal(body, &p) != nil {
		return ""
	}
	switch {
	case p.Issue != nil:
		return graph.RefFor(p.Repository.FullName, p.Issue.Number)
	case p.PullRequest != nil:
		return graph.RefFor(p.Repository.FullName, p.PullRequest.Number)
	}
	return ""
}

// ByChannel is a Processor that hands each delivery to the processor of
// its Channel ("" for GitHub's webhooks). A delivery from a channel with
// none is an error: the queue releases it rather than decide for a
// processor it does not have.
type ByChannel map[string]Processor

// Process implements Processor.
func (m ByChannel) Process(ctx context.Context, d Delivery) (Outcome, error) {
	p, ok := m[d.Channel]
	if !ok {
		return Outcome{}, fmt.Errorf("no processor for deliveries from channel %q", d.Channel)
	}
	return p.Process(ctx, d)
}
