// Package slack is Slack as a conversation channel: the operator's
// channels.slack settings, the Events API endpoint that carries replies
// into `the-loop serve`, and the Web API calls that acknowledge them.
//
// # Configuration
//
// [ConfigOf] reads channels.slack from the CLI config into a [Config]:
// whether the channel is on, which environment variables hold the bot
// token and the signing secret (never the values), the Web API root, the
// grants (publish: what a message may become, [Config.Granted]), how the
// channel is read, and the [Reactions] that acknowledge a message. What it
// can run with but not as written is a warning, and always resolves to
// doing less: an unknown grant is left out, an unknown read mode reads
// nothing, a malformed reaction name skips its state.
//
// # Receiving events
//
// [NewHandler] is the Events API endpoint, mounted at [EventsPath]. It
// verifies every request with the app's signing secret ([Verify]: Slack's
// v0 HMAC-SHA256 over the timestamp and the body as received, within
// [ReplayWindow] of the clock; [Sign] makes one), reads it with
// [ParseEvent], answers Slack's url_verification handshake, and hands each
// event_callback to the durable queue, (*ingress.Queue).AcceptSigned, as a
// channels.Delivery with Channel "slack" and ID "slack:<event_id>". Slack
// retries an event it thinks went unanswered with the same event_id; the
// queue answers the retry as a duplicate, and the handler answers Slack
// 200 either way, so it stops retrying. There is no insecure mode.
//
// The handler queues every event_callback and leaves judging it to the
// processor, which reads it with [ReplyOf]: the [channels.Reply] of a new
// message, or why it is none (an edit, a deletion, a join, another event
// type). The handler reads it too, only to name the work item the queue
// orders the delivery by (HandlerOptions.ItemOf).
//
// # Acknowledging
//
// A [Client] calls the Web API with the bot token, read from the
// environment where it is used ([TokenFrom]). [Client.AddReaction] puts a
// reaction on a message; one already there is success.
//
// Package slacktest is a fake of the Web API calls and a maker of signed
// Events API requests, for tests here and in the packages that wire the
// channel into serve.
package slack
