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
	Name string `json:"name"`
	// Level is what Emit records when it is given no level.
	Level string `json:"level"`
	// Description says what happened, then the fields it carries.
	Description string `json:"description"`
	// Fields are the event's own fields, after the envelope, in the order
	// the description names them. A record carries those that apply.
	Fields []Field `json:"fields"`
}

// Field is one field an event's records may carry.
type Field struct {
	// Name is the record's key.
	Name string `json:"name"`
	// Doc says what it holds when its name does not: the values it takes
	// (a | b), or when it is there. "" when the name says it.
	Doc string `json:"doc,omitempty"`
}

// HasField reports whether records of e may carry the field name.
func (e EventType) HasField(name string) bool {
	return slices.ContainsFunc(e.Fields, func(f Field) bool { return f.Name == name })
}

// Catalog is every event type the-loop emits, sorted by Name. Emit refuses a
// type that is not here, so adding an instrumentation point means adding its
// row. The table is read-only.
var Catalog = []EventType{
	{Name: "channel.delivered", Level: LevelInfo, Description: "A work-item.reply heard on a channel was handed to the work item's bound session (channel, work_item, actor, delivery_id, target: url | command | inbox).",
		Fields: []Field{{"channel", ""}, {"work_item", ""}, {"actor", ""}, {"delivery_id", ""}, {"target", "url | command | inbox"}}},
	{Name: "channel.dropped", Level: LevelInfo, Description: "A message on a channel was not processed, or a work-item.reply recorded on the ledger could not be delivered (channel, work_item, thread, actor, kind, gate, delivery_id, needs: a grant it also needs, error, reason: channel-disabled | unmapped | self-authored | unauthorized-actor | unpublishable-event | kickoff-disabled | not-a-new-message | undeliverable).",
		Fields: []Field{{"channel", ""}, {"work_item", ""}, {"thread", ""}, {"actor", ""}, {"kind", ""}, {"gate", ""}, {"delivery_id", ""}, {"needs", "a grant it also needs"}, {"error", ""}, {"reason", "channel-disabled | unmapped | self-authored | unauthorized-actor | unpublishable-event | kickoff-disabled | not-a-new-message | undeliverable"}}},
	{Name: "channel.mirror_failed", Level: LevelWarning, Description: "A message on a channel could not be recorded on its work item's ledger (channel, work_item, kind, error, retry). With retry true GitHub failed for now (a 5xx, no answer): nothing more is done with the message, and its delivery is processed again; otherwise a work-item.reply is still delivered, and the delivery of a gate.feedback or control.command is routing.dropped as unrecorded, since the record is its request.",
		Fields: []Field{{"channel", ""}, {"work_item", ""}, {"kind", ""}, {"error", ""}, {"retry", ""}}},
	{Name: "channel.mirrored", Level: LevelInfo, Description: "A message on a channel was recorded on its work item's ledger: a work-item.reply marked as the-loop's own, a gate.feedback or control.command unmarked for the webhook ingress to judge (channel, work_item, actor, kind, found: the record an earlier attempt posted was found on the issue, and not posted again).",
		Fields: []Field{{"channel", ""}, {"work_item", ""}, {"actor", ""}, {"kind", ""}, {"found", "the record an earlier attempt posted was found on the issue, and not posted again"}}},
	{Name: "channel.post_failed", Level: LevelWarning, Description: "Posting to a channel failed; the work item remains the record (channel, work_item, event_type, error).",
		Fields: []Field{{"channel", ""}, {"work_item", ""}, {"event_type", ""}, {"error", ""}}},
	{Name: "channel.posted", Level: LevelInfo, Description: "An outbound notification was posted to a channel (channel, work_item, event_type, thread).",
		Fields: []Field{{"channel", ""}, {"work_item", ""}, {"event_type", ""}, {"thread", ""}}},
	{Name: "channel.reaction_added", Level: LevelDebug, Description: "A reaction acknowledging a message on a channel was added to it (channel, state: received | completed | error, content).",
		Fields: []Field{{"channel", ""}, {"state", "received | completed | error"}, {"content", ""}}},
	{Name: "channel.reaction_failed", Level: LevelWarning, Description: "A reaction acknowledging a message on a channel could not be added; what the message did is unaffected (channel, state, content, error).",
		Fields: []Field{{"channel", ""}, {"state", ""}, {"content", ""}, {"error", ""}}},
	{Name: "channel.reply_received", Level: LevelInfo, Description: "An authorized reply arrived on a work item's thread and was classified (channel, work_item, actor, kind: work-item.reply | gate.feedback | control.command, gate: open | none | unknown | n/a). Carries ids and words, never the text.",
		Fields: []Field{{"channel", ""}, {"work_item", ""}, {"actor", ""}, {"kind", "work-item.reply | gate.feedback | control.command"}, {"gate", "open | none | unknown | n/a"}}},
	{Name: "control.ambiguous", Level: LevelWarning, Description: "A reply carried more than one distinct control keyword, so none was applied (work_item, actor, commands, delivery_id).",
		Fields: []Field{{"work_item", ""}, {"actor", ""}, {"commands", ""}, {"delivery_id", ""}}},
	{Name: "control.command", Level: LevelInfo, Description: "A control keyword from an authorized user was applied (work_item, command, actor, via: comment, effect, delivery_id).",
		Fields: []Field{{"work_item", ""}, {"command", ""}, {"actor", ""}, {"via", "comment"}, {"effect", ""}, {"delivery_id", ""}}},
	{Name: "control.rejected", Level: LevelWarning, Description: "A control keyword was recognised but refused (work_item, command, actor, via: comment, reason, delivery_id).",
		Fields: []Field{{"work_item", ""}, {"command", ""}, {"actor", ""}, {"via", "comment"}, {"reason", ""}, {"delivery_id", ""}}},
	{Name: "graph.advanced", Level: LevelInfo, Description: "A node's exit chain passed and the pointer followed the edge for its outcome (work_item, node, to, outcome).",
		Fields: []Field{{"work_item", ""}, {"node", ""}, {"to", ""}, {"outcome", ""}}},
	{Name: "graph.assignment_delivered", Level: LevelInfo, Description: "Entering an agent node handed its assignment to the work item's session (work_item, node, endpoint).",
		Fields: []Field{{"work_item", ""}, {"node", ""}, {"endpoint", ""}}},
	{Name: "graph.assignment_failed", Level: LevelWarning, Description: "Handing an entered node's assignment to its session failed; the node is entered anyway (work_item, node, endpoint, error).",
		Fields: []Field{{"work_item", ""}, {"node", ""}, {"endpoint", ""}, {"error", ""}}},
	{Name: "graph.blocked", Level: LevelInfo, Description: "A hook blocked a node's exit chain; the pointer stays and the finding is recorded as lastBlock (work_item, node, hook).",
		Fields: []Field{{"work_item", ""}, {"node", ""}, {"hook", ""}}},
	{Name: "graph.cleaned", Level: LevelInfo, Description: "A work item moved to its terminal cleanup node because its local resources are being released; no gate was bypassed (work_item, from, reason).",
		Fields: []Field{{"work_item", ""}, {"from", ""}, {"reason", ""}}},
	{Name: "graph.completed", Level: LevelInfo, Description: "A work item reached a terminal node (work_item, node).",
		Fields: []Field{{"work_item", ""}, {"node", ""}}},
	{Name: "graph.entry_unmet", Level: LevelWarning, Description: "A node's entry chain did not pass (a hook blocked or waited); entry chains do not gate, so the item entered the node all the same (work_item, node, hook, status, messages).",
		Fields: []Field{{"work_item", ""}, {"node", ""}, {"hook", ""}, {"status", ""}, {"messages", ""}}},
	{Name: "graph.escalated", Level: LevelWarning, Description: "A node used up its attempts or repeated the same finding and stopped advancing until a human acts (work_item, node, attempts, repeated, hook).",
		Fields: []Field{{"work_item", ""}, {"node", ""}, {"attempts", ""}, {"repeated", ""}, {"hook", ""}}},
	{Name: "graph.forced", Level: LevelWarning, Description: "An operator moved the pointer without a verdict; the skipped gates keep their real results (work_item, from, to, actor, reason).",
		Fields: []Field{{"work_item", ""}, {"from", ""}, {"to", ""}, {"actor", ""}, {"reason", ""}}},
	{Name: "graph.frozen", Level: LevelInfo, Description: "A work item's phase selection was fixed: which nodes it walks and which it skips (work_item).",
		Fields: []Field{{"work_item", ""}}},
	{Name: "graph.frozen_publish_failed", Level: LevelWarning, Description: "The frozen selection could not be copied to the portable record; graph-state.json still holds it (work_item, error).",
		Fields: []Field{{"work_item", ""}, {"error", ""}}},
	{Name: "graph.gate_session", Level: LevelInfo, Description: "A human gate was entered and the session it continues in was resolved (work_item, node, resolution).",
		Fields: []Field{{"work_item", ""}, {"node", ""}, {"resolution", ""}}},
	{Name: "graph.hook_degraded", Level: LevelWarning, Description: "An outbound hook passed without making its call (no integration, or the call failed); the verdict and edge are unaffected (work_item, node, hook, error).",
		Fields: []Field{{"work_item", ""}, {"node", ""}, {"hook", ""}, {"error", ""}}},
	{Name: "graph.link_failed", Level: LevelError, Description: "Driving a work item's graph from an inbound event failed; the event was still delivered (work_item, action, error, delivery_id).",
		Fields: []Field{{"work_item", ""}, {"action", ""}, {"error", ""}, {"delivery_id", ""}}},
	{Name: "graph.no_edge", Level: LevelWarning, Description: "No edge leaves a node for its outcome, so the item was parked rather than guessed at (work_item, node, outcome).",
		Fields: []Field{{"work_item", ""}, {"node", ""}, {"outcome", ""}}},
	{Name: "graph.node_skipped", Level: LevelInfo, Description: "The pointer went around a node declared skipped, along its skipped edge; none of its hooks ran (work_item, node, via, by, reason).",
		Fields: []Field{{"work_item", ""}, {"node", ""}, {"via", ""}, {"by", ""}, {"reason", ""}}},
	{Name: "graph.opt_ins_selected", Level: LevelInfo, Description: "A human selected optional phases at the phase-selection gate (work_item, via, nodes).",
		Fields: []Field{{"work_item", ""}, {"via", ""}, {"nodes", ""}}},
	{Name: "graph.parked", Level: LevelInfo, Description: "A node is waiting on a human; its exit chain runs again on the next event (work_item, node).",
		Fields: []Field{{"work_item", ""}, {"node", ""}}},
	{Name: "graph.repo_hooks_loaded", Level: LevelInfo, Description: "A repository's graph.hooks declaration was loaded (repo, modules, attachments). Counts only, never module contents.",
		Fields: []Field{{"repo", ""}, {"modules", ""}, {"attachments", ""}}},
	{Name: "graph.repo_hooks_refused", Level: LevelWarning, Description: "A repository declares graph.hooks but routing.graph.repoHooks is false on this machine, so none were loaded (repo, modules, attachments).",
		Fields: []Field{{"repo", ""}, {"modules", ""}, {"attachments", ""}}},
	{Name: "graph.skipped", Level: LevelInfo, Description: "An inbound event left a work item's graph untouched (work_item, action, reason: no-spec-dir | spec-dir-outside-checkout, spec_dir).",
		Fields: []Field{{"work_item", ""}, {"action", ""}, {"reason", "no-spec-dir | spec-dir-outside-checkout"}, {"spec_dir", ""}}},
	{Name: "graph.skips_declared", Level: LevelInfo, Description: "A human declared nodes skipped, at phase-selection or with graph skip; a declaration, not a verdict (work_item, via, nodes, actor, reason).",
		Fields: []Field{{"work_item", ""}, {"via", ""}, {"nodes", ""}, {"actor", ""}, {"reason", ""}}},
	{Name: "graph.skips_rejected", Level: LevelWarning, Description: "A skip was refused: unknown node, not skippable, or already behind the pointer (work_item, token, via, why).",
		Fields: []Field{{"work_item", ""}, {"token", ""}, {"via", ""}, {"why", ""}}},
	{Name: "graph.spec_tree_excluded", Level: LevelInfo, Description: "A contribution in a repository that never adopted the-loop kept its spec tree out of git (work_item, path).",
		Fields: []Field{{"work_item", ""}, {"path", ""}}},
	{Name: "graph.started", Level: LevelInfo, Description: "A work item entered its loop's start node and ran its entry chain (work_item, node).",
		Fields: []Field{{"work_item", ""}, {"node", ""}}},
	{Name: "graph.state_write_failed", Level: LevelError, Description: "A work item's state could not be written after its transition's events were logged: those events describe a move that did not happen (work_item, error).",
		Fields: []Field{{"work_item", ""}, {"error", ""}}},
	{Name: "harness.config_scaffold_failed", Level: LevelWarning, Description: "A verb that moves an item (or the ingress) could not adopt a repository with no harness config: nothing was written, and the run went on with the built-in defaults (work_item, path, error: why, such as a .the-loop that is a file, unwritable, or a symbolic link).",
		Fields: []Field{{"work_item", ""}, {"path", ""}, {"error", "why, such as a .the-loop that is a file, unwritable, or a symbolic link"}}},
	{Name: "harness.config_scaffolded", Level: LevelInfo, Description: "the-loop adopted a repository with no harness config by writing the built-in default (work_item, path, repo).",
		Fields: []Field{{"work_item", ""}, {"path", ""}, {"repo", ""}}},
	{Name: "reaction.added", Level: LevelDebug, Description: "A reaction acknowledging an inbound comment was added to it (work_item: the issue or pull request, state: started | completed | error, content, delivery_id).",
		Fields: []Field{{"work_item", "the issue or pull request"}, {"state", "started | completed | error"}, {"content", ""}, {"delivery_id", ""}}},
	{Name: "reaction.failed", Level: LevelWarning, Description: "A reaction acknowledging an inbound comment could not be added; what the comment did is unaffected (work_item, state, content, error, delivery_id).",
		Fields: []Field{{"work_item", ""}, {"state", ""}, {"content", ""}, {"error", ""}, {"delivery_id", ""}}},
	{Name: "routing.dropped", Level: LevelInfo, Description: "An accepted webhook was not routed: dropped on arrival (disabled-event | duplicate-delivery), by processing (no-work-item | self-authored, with why: marker, bot, or identity for a comment by the login the-loop posts with | unauthorized-actor | not-a-new-comment | control-ambiguous | control-rejected | graph-disabled | awaiting-start | paused | stopped | foreign-checkout | no-checkout | no-spec-dir | replayed-comment | stale-comment | already-acted | comment-deleted | review-dismissed | work-item-closed | pr-closed-unmerged | pr-loop-not-running), or its queued entry could not be read back and its delivery id was released for a redelivery (processing-failed, with error); a delivery whose processing fails is not dropped but retried (routing.retrying). Every queued delivery gets exactly one routing.routed or routing.dropped, across restarts (gh_event, delivery_id, work_item, action, reason, previous, retries: how often its processing failed first, and the processor's fields such as actor).",
		Fields: []Field{{"gh_event", ""}, {"delivery_id", ""}, {"work_item", ""}, {"action", ""}, {"reason", ""}, {"previous", "for duplicate-delivery: the state the earlier delivery of that id reached"}, {"retries", "how often its processing failed first"}, {"why", "marker, bot or identity, for a self-authored comment"}, {"error", "for processing-failed"}}},
	{Name: "routing.parked", Level: LevelError, Description: "A delivery whose processing failed 12 times in this run (about half an hour of pauses) is parked: it stays in the queue file and is processed again when serve next starts, and its work item's later deliveries go on without it (gh_event or channel and channel_event, delivery_id, work_item, attempt: failures so far, error).",
		Fields: []Field{{"gh_event", ""}, {"channel", ""}, {"channel_event", ""}, {"delivery_id", ""}, {"work_item", ""}, {"attempt", "failures so far"}, {"error", ""}}},
	{Name: "routing.retrying", Level: LevelWarning, Description: "A delivery's processing failed and changed nothing; it stays queued, ahead of its work item's later deliveries, and is processed again after a pause that doubles with each failure (gh_event or channel and channel_event, delivery_id, work_item, attempt: failures so far, retry_in, error).",
		Fields: []Field{{"gh_event", ""}, {"channel", ""}, {"channel_event", ""}, {"delivery_id", ""}, {"work_item", ""}, {"attempt", "failures so far"}, {"retry_in", ""}, {"error", ""}}},
	{Name: "routing.routed", Level: LevelInfo, Description: "An accepted webhook mapped to work items and passed every guard (gh_event, delivery_id, work_item, action, and the processor's fields such as work_items; an end of a work item or of a pull request delivering one says ended: issue-closed | pr-merged | pr-closed).",
		Fields: []Field{{"gh_event", ""}, {"delivery_id", ""}, {"work_item", ""}, {"action", ""}, {"work_items", ""}, {"ended", "issue-closed | pr-merged | pr-closed"}}},
	{Name: "server.queue_quarantined", Level: LevelError, Description: "The webhook receiver's queue file was damaged (truncated, empty, a page past its end, unreadable, failing bbolt's consistency check, over its size bound, or not a regular file) and was renamed beside it; serve started with an empty queue, and the deliveries the file held are not processed unless recovered from it (path, moved_to, why).",
		Fields: []Field{{"path", ""}, {"moved_to", ""}, {"why", ""}}},
	{Name: "server.started", Level: LevelInfo, Description: "The webhook receiver started (host, port, path, queued: deliveries left by the last run).",
		Fields: []Field{{"host", ""}, {"port", ""}, {"path", ""}, {"queued", "deliveries left by the last run"}}},
	{Name: "server.stopped", Level: LevelInfo, Description: "The webhook receiver shut down; deliveries still queued are processed on the next start (queued).",
		Fields: []Field{{"queued", ""}}},
	{Name: "slack.rejected", Level: LevelWarning, Description: "A request to the Slack Events API endpoint was refused before it was queued (event_id when it was read, retry_num, remote, unlogged, reason: method-not-allowed | too-large | unsupported-media-type | invalid-signature | invalid-payload | unavailable).",
		Fields: []Field{{"event_id", "when it was read"}, {"retry_num", ""}, {"remote", ""}, {"reason", "method-not-allowed | too-large | unsupported-media-type | invalid-signature | invalid-payload | unavailable"}, {"unlogged", "refusals left out of the log before this one, which logs refusals at a bounded rate"}}},
	{Name: "webhook.received", Level: LevelInfo, Description: "An inbound webhook passed its signature check and was answered 202; one to be processed is durable in the queue before that (gh_event, delivery_id, work_item, action, verified).",
		Fields: []Field{{"gh_event", ""}, {"delivery_id", ""}, {"work_item", ""}, {"action", ""}, {"verified", ""}}},
	{Name: "webhook.rejected", Level: LevelWarning, Description: "An inbound webhook was refused before routing (delivery_id, gh_event, remote, unlogged, reason: invalid-signature | invalid-payload | too-large | unsupported-media-type | unavailable).",
		Fields: []Field{{"delivery_id", ""}, {"gh_event", ""}, {"remote", ""}, {"unlogged", "refusals left out of the log before this one, which logs refusals at a bounded rate"}, {"reason", "invalid-signature | invalid-payload | too-large | unsupported-media-type | unavailable"}}},
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
