// Package inbound is the pipeline a message heard on a chat channel goes
// through (seed 003, the original tool's inbound pipeline), in its order:
//
//  1. map the thread to a work item, through the bindings (unmapped);
//  2. drop what a bot wrote, the-loop's own bot included (self-authored);
//  3. authorize the sender: their id on the channel must be a person's in
//     routing.authorizedUsers; an empty list denies everyone
//     (unauthorized-actor);
//  4. classify, in the order keyword → gate → reply: a control keyword is
//     control.command and reads no graph; else the work item's graph is
//     read through the router's own link ([route.Link.Gate], which only
//     reads): at a human gate (open) it is gate.feedback; when the read
//     cannot tell (unknown) it is gate.feedback if the channel is granted
//     that, else work-item.reply; when the graph says no gate, or nothing
//     drives graphs (none), it is work-item.reply;
//  5. check the channel's publish grant: a type not granted is dropped
//     (unpublishable-event), never downgraded to another;
//  6. record it on the ledger first, the work item's issue (see
//     github.Ledger): a reply marked as the-loop's own and defanged, a
//     gate answer or control command unmarked, for the webhook ingress to
//     judge as it judges a typed comment, under the message's id
//     (github.RecordID). When GitHub fails for now (github.Transient,
//     after the ledger's own retries), nothing more is done: the error
//     leaves the Slack event in serve's queue to be processed again, and
//     the record is looked for by its id before it is posted again. A
//     gate answer or control command GitHub refuses is dropped as
//     unrecorded: its record was its request;
//  7. deliver a work-item.reply, and only that, to the work item's bound
//     session (package deliver: a URL, a command, or the inbox).
//
// Every drop is a channel.dropped event with its reason; an authorized
// reply that was classified is a channel.reply_received carrying kind and
// gate (ids and words, never the text).
//
// A [Pipeline] processes one [channels.Reply]; `the-loop reply` runs it
// once (through [Pipeline.ProcessAgain] when the message has an id, so
// that running it again never records it twice), and `the-loop serve`
// runs it for every Slack event it accepts ([Processor]). [Result.Done]
// says whether a reply had every effect it asks for; `reply` exits by it.
package inbound
