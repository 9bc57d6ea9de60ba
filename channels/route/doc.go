// Package route decides what a webhook delivery does: it is the
// channels.Processor the-loop serve hands every accepted delivery to, and
// the seam between GitHub and a work item's process graph (the original
// tool's router, dispatcher and GraphLink).
//
// Build one with [New] from a [Config] (the operator's CLI config, the
// integration, a logger, an event emitter) and call [Router.Process] per
// delivery. In the original's order, a delivery is dropped when
//
//   - the issue or pull request it is on is not bound, and (for a pull
//     request) neither is any work item it delivers, by its head branch or
//     a closing keyword in its description (no-work-item; see
//     [LinkedWorkItems] and package bindings);
//   - its comment carries the-loop's own marker, or a bot wrote it, or
//     the login the-loop posts with wrote it and it is not a ledger relay
//     of a person's words ([Config.Identity]; self-authored, with why:
//     marker, bot or identity). the-loop posts with the operator's
//     credential, and the operator is usually on the allowlist: without
//     this an unmarked comment of its own would be read as the
//     operator's answer;
//   - whoever acted is not on routing.authorizedUsers, or it names nobody
//     (unauthorized-actor; an empty list denies everyone);
//   - it is not a reply: a comment written (issue_comment or
//     pull_request_review_comment created), a pull request review
//     submitted, or one of those edited, deleted or dismissed
//     (not-a-new-comment).
//
// An end is heard before the guards on who acted, as the original hears it:
// closing or merging injects nothing, and GitHub lets only those who may do
// it. A work item's own issue closed (or its bound pull request closed)
// forgets its control record, so that it is started afresh if reopened
// (work-item-closed when there was none); a pull request that delivers a
// work item, merged, has its inner loop forced to complete, audited as
// the-loop's move with the merge as its reason (pr-loop-not-running when
// it was never entered or is complete); closed unmerged, it is left where
// it stood (pr-closed-unmerged).
//
// A pull request review is a reply on the pull request: submitted
// approved or changes_requested by an authorized reviewer, its state is the
// answer the gate reads (classify-feedback reads graph.Comment.Review
// before the words); commented, it is read by its words, as a comment on
// the diff is. A review, or a comment on the diff, is acknowledged on the
// pull request itself.
//
// A reply answers a gate at most once, and counts as its body when the
// gate reads it: an edit of a comment the gate waited on is read again,
// at the gate it was written at (an edit by anyone but its author must
// come from someone authorized too); an edit, deletion or dismissal of a
// reply the router acted on changes nothing (already-acted); a deletion
// or dismissal of one nothing acted on undoes nothing (comment-deleted,
// review-dismissed). check --replies github reads the thread by the same
// rule (see graph.Reply.Edited).
//
// A comment that passes is then read for control keywords
// (channels.Vocabulary). Two different ones: nothing happens
// (control-ambiguous, a control.ambiguous event). start, contribute and do
// prove the bound checkout is the work item's repository (its origin
// remote), record the start on the binding, adopt an unadopted repository
// with the built-in harness config naming it (never for a contribution),
// and enter the work item's loop (the contribution loop for contribute,
// the ad-hoc loop for do); a start refused (foreign-checkout) records
// nothing. stop, pause and cleanup are recorded and hold the item; resume
// releases a pause. execute is handed on to the gate, which reads it.
// None of them spawns an agent session, as the original does: the-loop
// serve drives graphs, not harnesses.
//
// Any other comment, on a work item that is started (routing.control.
// requireStartCommand, default true) and not held, whose checkout is proved
// the work item's own, is handed to the human gate the work item waits at,
// through policy.Engine.Advance: the work item's own loop, or for a comment
// on a linked pull request that pull request's inner loop
// (pdlc-pr-loop). A work item at an agent's (or code's) node hears the
// comment as the original's dispatcher has it heard: it is delivered to
// where the binding says the work item's messages go (its URL, its
// command, else its inbox; package deliver), then the node is advanced
// with it, so that work the comment reports done moves the item on; a node
// just entered, or a loop that is over, is not advanced. A delivery that
// fails is logged (channel.dropped, undeliverable) and the advance runs
// all the same. A work item with no spec folder is left alone
// (no-spec-dir, with a graph.skipped event), though its repository is
// adopted all the same.
//
// The bound checkout is the work item's own only when its origin remote
// names the work item's repository on the operator's GitHub host
// (policy.CLIConfig.GitHubHost: github.com, or the GitHub Enterprise
// Server of integrations.github.api.baseUrl or routing.workspace.
// defaultHost); an origin on any other host is foreign-checkout.
//
// # Faults
//
// Advancement fails closed. A fault (the bindings cannot be read or
// written, the checkout's harness config or state file cannot be read, a
// hook module cannot load, the item's lock is held, its state cannot be
// written) leaves the graph as it was, is logged and recorded as
// graph.link_failed, and is returned as an error: the ingress then keeps
// the delivery queued and processes it again after a pause. A decision
// (every drop above) is an Outcome, because processing it again would
// reach it again. A comment by an authorized author when the login
// the-loop posts with cannot be learned (GitHub down, the token refused)
// is returned as an error too, and logged, before any graph is read: it
// may be the-loop's own echo or the operator's word, and is neither
// guessed nor lost. The login is asked again when it is processed again.
// Acknowledgement fails open: the reactions on the
// comment (routing.reactions: eyes when the-loop acts on it, hooray when it
// moved the graph, confused when it was refused or failed) go through the
// integration's add-reaction operation, and one that cannot be posted is
// logged, never a fault; under the none integration they are skipped.
package route
