// Package bindings keeps which checkout the ingress drives each work item
// in: a work item ref (github:OWNER/REPO#N, see channels.ParseRef) bound to
// the absolute path of a checkout of its repository, with the last control
// command an authorized person gave for it.
//
// The bindings are the operator's, never a repository's: one JSON file in
// the state root (the CLI config's state.root), <state root>/sessions/bindings.json,
// readable by the operator alone. [Open] a [Store] on the state root; [Store.Bind],
// [Store.Unbind] and [Store.Record] change it under a lock every process
// shares, each replacing the file atomically; [Store.Lookup] and
// [Store.List] read it. A file that is not a bindings file (bad JSON, an
// unknown key, a ref that does not parse, a work item bound twice, a newer
// version) is a [*CorruptError] for every operation and is never
// overwritten: it holds start records that a silent reset would drop.
//
// Why the start record lives here: the original tool keeps "an authorized
// person asked for this work item to run" in the operator's state root,
// beside the work item's other machine-kept facts, and never in the
// repository. graph-state.json is in the checkout and written by agents and
// pull requests, so a start recorded there could be forged by the very
// change it gates; the binding is the operator's own statement about the
// work item, and unbinding forgets both together.
//
// The-loop sessions bind, list and unbind are its command line.
package bindings
