package eventlog

import (
	"slices"
	"strings"
)

// Levels, least to most severe. Every record carries one.
const (
	LevelDebug   = "debug"
	LevelInfo    = "info"
	LevelWarning = "warning"
	LevelError   = "error"
)

// Levels lists the valid levels, least severe first.
var Levels = []string{LevelDebug, LevelInfo, LevelWarning, LevelError}

// EventType is one entry of the catalog.
type EventType struct {
	// Name is the dot-namespaced type written as the record's "event".
	Name string
	// Level is what Emit records when it is given no level.
	Level string
	// Description says what happened, then the fields it carries.
	Description string
}

// Catalog is every event type the-loop emits, sorted by Name. Emit refuses a
// type that is not here, so adding an instrumentation point means adding its
// row. The table is read-only.
var Catalog = []EventType{
	{"channel.delivered", LevelInfo, "A work-item.reply heard on a channel was handed to the work item's bound session (channel, work_item, actor, target: url | command | inbox)."},
	{"channel.dropped", LevelInfo, "A message on a channel was not processed, or a work-item.reply recorded on the ledger could not be delivered (channel, work_item, thread, actor, kind, gate, needs: a grant it also needs, error, reason: channel-disabled | unmapped | self-authored | unauthorized-actor | unpublishable-event | kickoff-disabled | not-a-new-message | undeliverable)."},
	{"channel.mirror_failed", LevelWarning, "A message on a channel could not be recorded on its work item's ledger (channel, work_item, kind, error, retry). With retry true GitHub failed for now (a 5xx, no answer): nothing more is done with the message, and its delivery is processed again; otherwise a work-item.reply is still delivered, and the delivery of a gate.feedback or control.command is routing.dropped as unrecorded, since the record is its request."},
	{"channel.mirrored", LevelInfo, "A message on a channel was recorded on its work item's ledger: a work-item.reply marked as the-loop's own, a gate.feedback or control.command unmarked for the webhook ingress to judge (channel, work_item, actor, kind, found: the record an earlier attempt posted was found on the issue, and not posted again)."},
	{"channel.post_failed", LevelWarning, "Posting to a channel failed; the work item remains the record (channel, work_item, event_type, error)."},
	{"channel.posted", LevelInfo, "An outbound notification was posted to a channel (channel, work_item, event_type, thread)."},
	{"channel.reaction_added", LevelDebug, "A reaction acknowledging a message on a channel was added to it (channel, state: received | completed | error, content)."},
	{"channel.reaction_failed", LevelWarning, "A reaction acknowledging a message on a channel could not be added; what the message did is unaffected (channel, state, content, error)."},
	{"channel.reply_received", LevelInfo, "An authorized reply arrived on a work item's thread and was classified (channel, work_item, actor, kind: work-item.reply | gate.feedback | control.command, gate: open | none | unknown | n/a). Carries ids and words, never the text."},
	{"control.ambiguous", LevelWarning, "A reply carried more than one distinct control keyword, so none was applied (work_item, actor, commands, delivery_id)."},
	{"control.command", LevelInfo, "A control keyword from an authorized user was applied (work_item, command, actor, via: comment, effect, delivery_id)."},
	{"control.rejected", LevelWarning, "A control keyword was recognised but refused (work_item, command, actor, via: comment, reason, delivery_id)."},
	{"graph.advanced", LevelInfo, "A node's exit chain passed and the pointer followed the edge for its outcome (work_item, node, to, outcome)."},
	{"graph.assignment_delivered", LevelInfo, "Entering an agent node handed its assignment to the work item's session (work_item, node, endpoint)."},
	{"graph.assignment_failed", LevelWarning, "Handing an entered node's assignment to its session failed; the node is entered anyway (work_item, node, endpoint, error)."},
	{"graph.blocked", LevelInfo, "A hook blocked a node's exit chain; the pointer stays and the finding is recorded as lastBlock (work_item, node, hook)."},
	{"graph.cleaned", LevelInfo, "A work item moved to its terminal cleanup node because its local resources are being released; no gate was bypassed (work_item, from, reason)."},
	{"graph.completed", LevelInfo, "A work item reached a terminal node (work_item, node)."},
	{"graph.entry_unmet", LevelWarning, "A node's entry chain did not pass (a hook blocked or waited); entry chains do not gate, so the item entered the node all the same (work_item, node, hook, status, messages)."},
	{"graph.escalated", LevelWarning, "A node used up its attempts or repeated the same finding and stopped advancing until a human acts (work_item, node, attempts, repeated, hook)."},
	{"graph.forced", LevelWarning, "An operator moved the pointer without a verdict; the skipped gates keep their real results (work_item, from, to, actor, reason)."},
	{"graph.frozen", LevelInfo, "A work item's phase selection was fixed: which nodes it walks and which it skips (work_item)."},
	{"graph.frozen_publish_failed", LevelWarning, "The frozen selection could not be copied to the portable record; graph-state.json still holds it (work_item, error)."},
	{"graph.gate_session", LevelInfo, "A human gate was entered and the session it continues in was resolved (work_item, node, resolution)."},
	{"graph.hook_degraded", LevelWarning, "An outbound hook passed without making its call (no integration, or the call failed); the verdict and edge are unaffected (work_item, node, hook, error)."},
	{"graph.link_failed", LevelError, "Driving a work item's graph from an inbound event failed; the event was still delivered (work_item, action, error)."},
	{"graph.no_edge", LevelWarning, "No edge leaves a node for its outcome, so the item was parked rather than guessed at (work_item, node, outcome)."},
	{"graph.node_skipped", LevelInfo, "The pointer went around a node declared skipped, along its skipped edge; none of its hooks ran (work_item, node, via, by, reason)."},
	{"graph.opt_ins_selected", LevelInfo, "A human selected optional phases at the phase-selection gate (work_item, via, nodes)."},
	{"graph.parked", LevelInfo, "A node is waiting on a human; its exit chain runs again on the next event (work_item, node)."},
	{"graph.repo_hooks_loaded", LevelInfo, "A repository's graph.hooks declaration was loaded (repo, modules, attachments). Counts only, never module contents."},
	{"graph.repo_hooks_refused", LevelWarning, "A repository declares graph.hooks but routing.graph.repoHooks is false on this machine, so none were loaded (repo, modules, attachments)."},
	{"graph.skipped", LevelInfo, "An inbound event left a work item's graph untouched (work_item, action, reason: no-spec-dir | spec-dir-outside-checkout, spec_dir)."},
	{"graph.skips_declared", LevelInfo, "A human declared nodes skipped, at phase-selection or with graph skip; a declaration, not a verdict (work_item, via, nodes, actor, reason)."},
	{"graph.skips_rejected", LevelWarning, "A skip was refused: unknown node, not skippable, or already behind the pointer (work_item, token, via, why)."},
	{"graph.spec_tree_excluded", LevelInfo, "A contribution in a repository that never adopted the-loop kept its spec tree out of git (work_item, path)."},
	{"graph.started", LevelInfo, "A work item entered its loop's start node and ran its entry chain (work_item, node)."},
	{"graph.state_write_failed", LevelError, "A work item's state could not be written after its transition's events were logged: those events describe a move that did not happen (work_item, error)."},
	{"harness.config_scaffold_failed", LevelWarning, "A verb that moves an item (or the ingress) could not adopt a repository with no harness config: nothing was written, and the run went on with the built-in defaults (work_item, path, error: why, such as a .the-loop that is a file, unwritable, or a symbolic link)."},
	{"harness.config_scaffolded", LevelInfo, "the-loop adopted a repository with no harness config by writing the built-in default (work_item, path, repo)."},
	{"reaction.added", LevelDebug, "A reaction acknowledging an inbound comment was added to it (work_item: the issue or pull request, state: started | completed | error, content, delivery_id)."},
	{"reaction.failed", LevelWarning, "A reaction acknowledging an inbound comment could not be added; what the comment did is unaffected (work_item, state, content, error, delivery_id)."},
	{"routing.dropped", LevelInfo, "An accepted webhook was not routed: dropped on arrival (disabled-event | duplicate-delivery), by processing (no-work-item | self-authored, with why: marker, bot, or identity for a comment by the login the-loop posts with | unauthorized-actor | not-a-new-comment | control-ambiguous | control-rejected | graph-disabled | awaiting-start | paused | stopped | foreign-checkout | no-checkout | no-spec-dir | replayed-comment | stale-comment | already-acted | comment-deleted | review-dismissed | work-item-closed | pr-closed-unmerged | pr-loop-not-running), or its queued entry could not be read back and its delivery id was released for a redelivery (processing-failed, with error); a delivery whose processing fails is not dropped but retried (routing.retrying). Every queued delivery gets exactly one routing.routed or routing.dropped, across restarts (gh_event, delivery_id, work_item, action, reason, retries: how often its processing failed first, and the processor's fields such as actor)."},
	{"routing.parked", LevelError, "A delivery whose processing failed 12 times in this run (about half an hour of pauses) is parked: it stays in the queue file and is processed again when serve next starts, and its work item's later deliveries go on without it (gh_event or channel and channel_event, delivery_id, work_item, attempt: failures so far, error)."},
	{"routing.retrying", LevelWarning, "A delivery's processing failed and changed nothing; it stays queued, ahead of its work item's later deliveries, and is processed again after a pause that doubles with each failure (gh_event or channel and channel_event, delivery_id, work_item, attempt: failures so far, retry_in, error)."},
	{"routing.routed", LevelInfo, "An accepted webhook mapped to work items and passed every guard (gh_event, delivery_id, work_item, action, and the processor's fields such as work_items; an end of a work item or of a pull request delivering one says ended: issue-closed | pr-merged | pr-closed)."},
	{"server.queue_quarantined", LevelError, "The webhook receiver's queue file was damaged (truncated, empty, a page past its end, unreadable, failing bbolt's consistency check, over its size bound, or not a regular file) and was renamed beside it; serve started with an empty queue, and the deliveries the file held are not processed unless recovered from it (path, moved_to, why)."},
	{"server.started", LevelInfo, "The webhook receiver started (host, port, path, queued: deliveries left by the last run)."},
	{"server.stopped", LevelInfo, "The webhook receiver shut down; deliveries still queued are processed on the next start (queued)."},
	{"slack.rejected", LevelWarning, "A request to the Slack Events API endpoint was refused before it was queued (event_id when it was read, retry_num, remote, reason: method-not-allowed | too-large | unsupported-media-type | invalid-signature | invalid-payload | unavailable)."},
	{"webhook.received", LevelInfo, "An inbound webhook passed its signature check and was answered 202; one to be processed is durable in the queue before that (gh_event, delivery_id, work_item, action, verified)."},
	{"webhook.rejected", LevelWarning, "An inbound webhook was refused before routing (delivery_id, gh_event, remote, reason: invalid-signature | invalid-payload | too-large | unsupported-media-type | unavailable)."},
}

// Lookup returns the catalog entry for event.
func Lookup(event string) (EventType, bool) {
	i, ok := slices.BinarySearchFunc(Catalog, event, func(e EventType, name string) int {
		return strings.Compare(e.Name, name)
	})
	if !ok {
		return EventType{}, false
	}
	return Catalog[i], true
}

// Describe returns the catalog description of event.
func Describe(event string) (string, bool) {
	e, ok := Lookup(event)
	return e.Description, ok
}

// validLevel reports whether level is one of Levels.
func validLevel(level string) bool { return slices.Contains(Levels, level) }
