package channels

// Reply is one message heard on a chat channel (Slack, or any tool that
// speaks through `the-loop reply`): what the inbound pipeline classifies.
// Every field is as the channel reported it; none of it is trusted until
// the pipeline has mapped the thread to a bound work item and found the
// author on routing.authorizedUsers.
type Reply struct {
	// Channel is the channel's name in the CLI config: "slack".
	Channel string
	// ChannelID is the channel's own id for the room the message is in
	// (a Slack channel id such as C0123).
	ChannelID string
	// Thread is the thread the message replies in (Slack's thread_ts);
	// for a top-level message, its own timestamp.
	Thread string
	// TS is the message's own id on the channel (Slack's ts): what a
	// reaction acknowledging it is put on.
	TS string
	// Author is the author's id on the channel (a Slack member id).
	Author string
	// Text is the message as written.
	Text string
	// TopLevel is set for a message that starts a conversation rather than
	// replying in one: the original opens a work item from it.
	TopLevel bool
	// Bot is set when a bot wrote it, the-loop's own bot included: a bot
	// never speaks to the loop.
	Bot bool
}

// Gate is what the pipeline's read of a work item's graph returned when it
// classified a reply: the third value is what makes "cannot tell" differ
// from "no".
type Gate string

const (
	// GateOpen: the work item waits at a human gate.
	GateOpen Gate = "open"
	// GateNone: the graph says it does not, or nothing drives a graph
	// (routing.graph.enabled false), so there is no gate to answer.
	GateNone Gate = "none"
	// GateUnknown: the pipeline cannot see the graph (no binding, no
	// checkout, a held or foreign checkout, no state, a fault). It may well
	// be at a gate on a checkout this process does not know.
	GateUnknown Gate = "unknown"
	// GateNotRead: a control keyword, which never reads the graph.
	GateNotRead Gate = "n/a"
)
