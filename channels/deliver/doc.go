// Package deliver hands a message heard for a work item (a reply in its
// Slack thread) to where its binding says it goes, and keeps the work
// item's inbox.
//
// [Deliver] takes a [Message] and the work item's [bindings.Binding]:
//
//   - a binding whose target is a URL has the message POSTed to it as
//     JSON. Redirects are not followed (a target that moved is told to the
//     operator, not guessed at), the answer is read at most [MaxOutput]
//     bytes and discarded, and a 2xx status is delivered; any other is a
//     [*StatusError].
//   - a binding whose target is a command has it run with the message as
//     JSON on its standard input: the argv as bound, never through a
//     shell, in a process group of its own that is killed whole when it
//     overruns. Its output is kept up to [MaxOutput] bytes per stream. Exit
//     status 0 is delivered; any other is an [*ExitError] carrying the
//     status and the first line the command wrote to stderr.
//   - a binding with no target has the message appended to the work item's
//     inbox.
//
// Both outward deliveries are bounded by [Timeout] as well as by the
// context. A failed delivery is not put in the inbox instead: the caller
// is told, and decides whether to try again. The command may run at all
// because a target is the operator's configuration, kept in the state
// root; no checkout can name one.
//
// An inbox is one append-only JSON Lines file per work item,
// <state root>/sessions/inbox/<name>.jsonl ([InboxFile] names it), readable
// by the operator alone. Each message is one line written with one write
// call and synced before Deliver returns, under a lock file every process
// shares, so lines never interleave and an acknowledged message survives
// a crash. the-loop never rewrites or removes an inbox, not even when the
// work item is unbound. [ReadInbox] reads one back, bounded by [MaxInbox],
// and reports a damaged line by its number rather than skip it
// ([*InboxError]).
//
// A Message's JSON has stable field names, for the programs a target
// hands it to: ref, channel, thread, ts, author, text, and at (RFC 3339,
// UTC).
package deliver
