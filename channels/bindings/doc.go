// Package bindings keeps which checkout the ingress drives each work item
// in, and which chat thread it is discussed in: a work item ref
// (github:OWNER/REPO#N, see channels.ParseRef) bound to the absolute path
// of a checkout of its repository, to a Slack [Thread], or to both, with
// where a reply heard for it is delivered ([Target]) and the last control
// command an authorized person gave for it.
//
// The bindings are the operator's, never a repository's: one JSON file in
// the state root (the CLI config's state.root), <state root>/sessions/bindings.json,
// readable by the operator alone. [Open] a [Store] on the state root;
// [Store.Set] (and [Store.Bind], Set with a checkout alone),
// [Store.Unbind] and [Store.Record] change it under a lock every process
// shares, each replacing the file atomically; [Store.Lookup],
// [Store.ByThread] and [Store.List] read it. A file that is not a bindings
// file (bad JSON, an unknown key, a ref, thread or target that does not
// parse, a work item or a thread bound twice, a newer version) is a
// [*CorruptError] for every operation and is never overwritten: it holds
// start records that a silent reset would drop.
//
// A binding may know only its thread, and no checkout: the original's "no
// checkout" case, where a reply on the thread is recorded for the work
// item but no graph is read ([Binding.HasCheckout]). A thread belongs to
// one work item: binding it to a second is refused ([*ThreadTakenError]).
// A binding's delivery target is operator configuration like the rest of
// the file, which is why package channels/deliver may run its command.
//
// Why the start record lives here: the original tool keeps "an authorized
// person asked for this work item to run" in the operator's state root,
// beside the work item's other machine-kept facts, and never in the
// repository. graph-state.json is in the checkout and written by agents and
// pull requests, so a start recorded there could be forged by the very
// change it gates; the binding is the operator's own statement about the
// work item, and unbinding forgets all of it together.
//
// The-loop sessions bind, list and unbind are its command line.
package bindings
