// Package graph is the-loop's process model and the runtime that walks work
// items through it. Of ours it imports only the leaf package repo, through
// which it reads and writes every file; everything above it (shipped
// hooks, repository hooks, configuration, the CLI) plugs in through the
// interfaces declared here.
//
// # The model
//
// A loop is compiled once from YAML by [Compile] into an immutable [*Graph]:
// nodes in declaration order, edges indexed by (node, outcome), named skip
// sets. Every structural fault (an unknown hook, a bad with: parameter, a
// skippable node without an on: skipped edge, a duplicate id) is a
// [*ConfigError] carrying file, line, loop, node and key, so a broken graph
// fails at startup with a message that says where.
//
// # The hook contract
//
// Every hook, shipped or repository, implements [Hook]: it receives a
// [*Context] and returns a [Result] whose [Status] is pass, block, wait or
// skip. [RunChain] runs a node's chain in order and stops at the first hook
// that neither passes nor skips. An erroring or panicking hook is a
// non-retriable block: a broken check is never a pass. Routing uses the
// blocking hook's outcome, else the last explicit Data["outcome"], else pass;
// an x- (repository) hook's outcome is dropped with a warning.
//
// To add repository hooks to a compiled graph, use [Apply]: it returns a new
// Graph with the attachments appended after the shipped chains and the
// repository's own table consulted first when resolving names. Apply can
// append; nothing in it can remove, reorder or replace a shipped entry.
//
// # The runtime
//
// A [Runtime] binds a graph to one repository. [Runtime.Status] is pure (no
// writes, no subprocess, no outbound call, no event) and is what check uses;
// given a [ReplySource] (Runtime.Replies) it reads the item's thread once
// and hands each node the [Reply]s posted while the state had the item
// there, so that a gate answered on the issue reads as answered;
// [Runtime.Advance], [Runtime.Complete], [Runtime.DeclareSkips],
// [Runtime.Force] and [Runtime.Run] move an item, each under a file lock
// beside its graph-state.json ([ErrBusy] when another process holds it).
// [State] keeps the original tool's graph-state.json keys and is written
// atomically; a corrupt or newer file is a [*StateError] and is never
// overwritten. A change made under the lock is a transaction: its events
// are synced to the event log before the state recording it is written, so
// a crash never leaves a move without its events, and the next writer
// removes the temporary files a killed one left.
//
// Every verb that moves an item is one pure transition and one executor
// (transition.go). The transition takes the state and what the node's
// exit chain decided, and returns the new state, the [Step] to report and
// the effects: the events, the state write, and the entry chain of the
// node entered (whose hooks make the outbound calls and write the
// execution-log line). The executor applies them in that order under the
// lock. [Runtime.Run]'s dry run makes the same transitions, from chains
// evaluated read-only, and applies them to an in-memory copy of the state
// only; so what it reports is, step for step, what a run does.
//
// To see one hook on its own, [Runtime.Trial] runs it against an item at
// any node and boundary, whatever the item's position, with the context
// check builds and the hooks ahead of it run first; its [TrialReport] says
// what it found, what it printed and spent ([HookTrace]) and why check
// would not run it there. [StatusReport.Unshown] lists, for a whole
// report, the repository hooks whose verdict it does not show, and why.
// To see every finding, set Runtime.AllFindings: Status then runs, at each
// reached node whose chain stopped, the repository hooks after the
// stopper report-only (reportonly.go), and no verdict changes.
//
// To draw a loop, use [Mermaid]: a Mermaid flowchart of the graph, or, given
// a [*StatusReport], of one item on it, coloured by its verdicts.
//
// # Files
//
// A Runtime's Checkout (a [repo.Checkout] with its spec root set) is the
// only way to the repository: a [WorkItem] names its folder by repository
// path, and hooks read through the Context's [Files], which for a
// read-only evaluation is a cache shared by every hook of the item. Reads
// are of regular files inside the checkout only, bounded by
// [MaxArtifactBytes] and [MaxStateBytes].
package graph
