package channels

import "slices"

// The event types a message on a channel may become, and what the
// catalog says of each. A channel's channels.<name>.publish grants some of
// them: a message classifies into exactly one, and a type the channel is
// not granted is dropped, never downgraded to another.
const (
	// EventReply is a message delivered into the work item's session as
	// input: the default grant. Its ledger record is marked as the-loop's
	// own, because the pipeline delivers it itself.
	EventReply = "work-item.reply"
	// EventGateFeedback is a message that answers an open human gate. Its
	// record is unmarked, so the ledger's ingress reads it as the person's
	// own words and the gate judges it.
	EventGateFeedback = "gate.feedback"
	// EventControl is a control keyword typed on a channel. Its record is
	// unmarked, so the ledger's ingress applies it through the control
	// seam a typed comment goes through.
	EventControl = "control.command"
	// EventCreate is a top-level message that opens a work item.
	EventCreate = "work-item.create"
)

// Origins of a catalog entry: who raises the event.
const (
	OriginLoop    = "loop"    // the process graph
	OriginCLI     = "cli"     // a command an agent or operator ran
	OriginGitHub  = "github"  // the ledger's own ingress
	OriginChannel = "channel" // a message on a chat channel
)

// EventSpec is one row of the catalog.
type EventSpec struct {
	Name        string
	Description string
	Origin      string
	// Subscribable: a channel may be sent it (channels.<name>.subscribe).
	Subscribable bool
	// Publishable: a channel may be granted it (channels.<name>.publish):
	// a message on that channel may become it.
	Publishable bool
	// Recorded: the ledger writes it down when it originates off the
	// ledger.
	Recorded bool
}

// Catalog is every event a channel subscribes to or publishes, in the
// original tool's order. `the-loop channels` and the configuration
// reference print it; a test holds the docs to it.
var Catalog = []EventSpec{
	{Name: "session.awaiting_input", Origin: OriginCLI, Subscribable: true, Recorded: true,
		Description: "An agent asked a human a question and waits for the answer: the conversation starter, and the default subscription."},
	{Name: "decision-pending", Origin: OriginLoop, Subscribable: true,
		Description: "The graph reached a point where a human decision is needed."},
	{Name: "phase-approval-pending", Origin: OriginLoop, Subscribable: true,
		Description: "A spec phase (requirements, design and testing plan, tasks) is ready for its human gate."},
	{Name: "pr-review-pending", Origin: OriginLoop, Subscribable: true,
		Description: "A pull request delivering the work item is ready for human review."},
	{Name: "security-sign-off-pending", Origin: OriginLoop, Subscribable: true,
		Description: "The work item's risk tier asks for a named human security sign-off."},
	{Name: "conflict-escalated", Origin: OriginLoop, Subscribable: true,
		Description: "The loop hit a block it cannot resolve, recorded the conflict and escalated."},
	{Name: "work-item-complete", Origin: OriginLoop, Subscribable: true,
		Description: "The work item reached complete."},
	{Name: "comment.agent", Origin: OriginGitHub, Subscribable: true,
		Description: "The-loop's own comment on the work item (marked as its own)."},
	{Name: "comment.human", Origin: OriginGitHub, Subscribable: true,
		Description: "A comment by an authorized person that the ledger accepted."},
	{Name: EventReply, Origin: OriginChannel, Publishable: true, Recorded: true,
		Description: "A message on a channel, delivered to the work item's session as input: the default grant. Recorded on the ledger marked as the-loop's own, so it is delivered once."},
	{Name: EventGateFeedback, Origin: OriginChannel, Publishable: true, Recorded: true,
		Description: "A message on a channel that answers an open human gate, or that the pipeline cannot place while the channel may answer gates: recorded on the ledger unmarked, so the ledger's ingress judges it against the graph it keeps."},
	{Name: EventControl, Origin: OriginChannel, Publishable: true, Recorded: true,
		Description: "A control keyword typed on a channel: recorded on the ledger unmarked, so the ledger's ingress applies it through the control seam."},
	{Name: EventCreate, Origin: OriginChannel, Publishable: true, Recorded: true,
		Description: "A top-level message on a channel that opens a work item."},
}

// Spec is the catalog's entry for name.
func Spec(name string) (EventSpec, bool) {
	i := slices.IndexFunc(Catalog, func(s EventSpec) bool { return s.Name == name })
	if i < 0 {
		return EventSpec{}, false
	}
	return Catalog[i], true
}

// Publishable lists the grantable event types, in catalog order.
func Publishable() []string {
	var out []string
	for _, s := range Catalog {
		if s.Publishable {
			out = append(out, s.Name)
		}
	}
	return out
}

// Subscribable lists the event types a channel may be sent, in catalog
// order.
func Subscribable() []string {
	var out []string
	for _, s := range Catalog {
		if s.Subscribable {
			out = append(out, s.Name)
		}
	}
	return out
}

// DefaultPublish is the grant of a channel whose publish list is unset.
var DefaultPublish = []string{EventReply}

// Grants reads a channel's publish list: nil (unset) is DefaultPublish;
// otherwise each name the catalog says is publishable, once, in the order
// given. A name it does not (a typo, a subscribable-only type) is left out
// and returned in ignored: a typo must never widen what a chat message may
// do.
func Grants(publish []string, set bool) (granted, ignored []string) {
	if !set {
		return slices.Clone(DefaultPublish), nil
	}
	granted = []string{}
	for _, name := range publish {
		spec, ok := Spec(name)
		switch {
		case !ok || !spec.Publishable:
			ignored = append(ignored, name)
		case !slices.Contains(granted, name):
			granted = append(granted, name)
		}
	}
	return granted, ignored
}
