package main

// GraphCmd groups the graph verbs.
type GraphCmd struct {
	Show     GraphShowCmd     `cmd:"" help:"Print a loop's nodes, chains and edges."`
	Status   GraphStatusCmd   `cmd:"" help:"Where a work item is, and what is met up to there."`
	Advance  GraphAdvanceCmd  `cmd:"" help:"Evaluate the current node's exit chain and take the matching edge."`
	Complete GraphCompleteCmd `cmd:"" help:"Claim the current node's work is done; prints one JSON result."`
	Run      GraphRunCmd      `cmd:"" help:"Advance until the work item waits, blocks, escalates or completes."`
	Skip     GraphSkipCmd     `cmd:"" help:"Declare nodes or skip sets skipped for a work item."`
	Force    GraphForceCmd    `cmd:"" help:"Move a work item's pointer regardless of gates, on the record."`
	Hooks    GraphHooksCmd    `cmd:"" help:"List the shipped hooks and what the repository declares."`
}
