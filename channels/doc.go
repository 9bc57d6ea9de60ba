// Package channels is where the world reaches the-loop and the-loop reaches
// back: the webhook ingress (the-loop serve) and what it accepts, the
// bindings of work items to checkouts, the control keywords and the
// routing of a reply to the graph, and the integrations the outbound hooks
// act through (GitHub, in package channels/github).
//
// It sits between cmd and policy: it drives work items through
// policy.Engine, never through the graph directly, and it is the only
// package that speaks to the network.
//
// An accepted [Delivery] is durable before it is acknowledged, and gets
// exactly one [Outcome] from a [Processor], in order per work item (a
// crash before the outcome is recorded has it processed again).
//
// A work item is named by a [Ref] (github:OWNER/REPO#N, [ParseRef]); its
// spec folder is [Ref.ItemID]. Control keywords are a [Vocabulary]
// ([VocabularyOf] the CLI config), and [Vocabulary.Parse] finds the
// command a comment carries. Package bindings keeps which checkout each
// work item is driven in and which chat thread it is discussed in; package
// deliver hands a reply heard for a work item to the target its binding
// names, or keeps it in the work item's inbox; package route is the
// Processor.
package channels
