package builtins

// About is what a shipped hook checks and what to do when it stops a
// node: the words docs/hooks.md and the SARIF rule table both show, kept
// here once so that the two never drift.
type About struct {
	// Summary is one sentence: what the hook is for.
	Summary string
	// Checks says what it looks at and when it blocks, waits or skips.
	Checks string
	// Fix says what makes it pass.
	Fix string
}

// Describe is the shipped hook name's About; false for a name that is not
// a shipped hook.
func Describe(name string) (About, bool) {
	a, ok := about[name]
	return a, ok
}

var about = map[string]About{
	"await-inner-loops": {
		Summary: "Waits until the work item's pull-request loops are complete.",
		Checks:  "Every inner loop found for the item must be at its complete node, and every repository the execution log's front matter lists under repos: must have one. It waits while one is unfinished; a repos: entry that is not an owner/repo name blocks.",
		Fix:     "Finish (merge) the pull requests the wait names, or correct the repos: list in execution-log.md.",
	},
	"classify-adhoc-reply": {
		Summary: "Reads an ad-hoc item's reply as done or more work.",
		Checks:  "Reads the authorized comments on the item's thread. Under check there is no reply, so it waits.",
		Fix:     "Reply on the item's thread saying it is done, or what more work is needed.",
	},
	"classify-feedback": {
		Summary: "A human approval gate: reads the reviewers' decision.",
		Checks:  "Reads the authorized comments (and, for a pull request, its reviews) posted while the gate was open. A decision (approved, approved with comments, changes requested) passes the gate; no decision is a wait. Under check without --replies github it always waits.",
		Fix:     "Have an authorized reviewer answer on the item's thread, then run check with --replies github so the answer is read.",
	},
	"classify-goal": {
		Summary: "Reads the goal statement from the item's reply.",
		Checks:  "A goal needs both a goal and its acceptance criteria. Without them it waits.",
		Fix:     "Reply with the goal and its criteria, in the form the goal request asked for.",
	},
	"classify-phase-selection": {
		Summary: "Reads which optional phases the item takes.",
		Checks:  "Reads the ticked phases from the phase-selection reply. Until there is one, it waits.",
		Fix:     "Tick the phases wanted in the phase-selection comment, or reply naming them.",
	},
	"deliver-assignment": {
		Summary: "Hands the node's work to the agent assigned to it.",
		Checks:  "Runs as an item enters a node; it does not judge artifacts. Without a delivery channel (the CLI path, where the command's output names the next node) it skips, and a delivery that fails skips with the reason: it never holds the node.",
		Fix:     "Nothing, on the CLI path; where an assignment channel is configured, check it and that the agent can be reached.",
	},
	"enforces-boundaries-from": {
		Summary: "Makes a document answer the boundary markers its upstream raised.",
		Checks:  "Each marker phrase (with.markers) found in the upstream artifact (with.upstream) must appear in the node's own artifacts. A marker not answered, or a declared artifact that is missing, blocks.",
		Fix:     "Answer each marker the finding names in the node's document, or write the missing document.",
	},
	"lint-artifacts": {
		Summary: "Lints the node's Markdown artifacts.",
		Checks:  "Every mermaid block must be non-empty, parse, and hold no backtick in a quoted label; with maxLineLength set, prose lines must be no longer. A node with no artifact skips.",
		Fix:     "Fix the diagram or line at the place the finding points to.",
	},
	"log-entry": {
		Summary: "Appends a line to the item's execution log.",
		Checks:  "Runs as an item enters a node; it does not judge artifacts. It fails only when the log cannot be written.",
		Fix:     "Make execution-log.md writable, or see the error it gives.",
	},
	"mcp-call": {
		Summary: "Calls a tool of an MCP server.",
		Checks:  "Calls the tool the attachment names, through the harness. It blocks when the tool reports failure or the call cannot be made, and for good when nothing is wired to make it.",
		Fix:     "Check the tool name, the harness and that the server runs.",
	},
	"notify": {
		Summary: "Tells the roles concerned that a gate waits on them.",
		Checks:  "Delivers a notification to the configured roles. With no roles, or no channel subscribed to the event, it skips. It fails only when no channel could deliver it.",
		Fix:     "Check the notification channel's configuration.",
	},
	"post-goal-request": {
		Summary: "Asks for the item's goal on its thread.",
		Checks:  "Posts the goal request once. It fails only when the post fails.",
		Fix:     "Check the integration's token and permissions.",
	},
	"post-phase-selection": {
		Summary: "Posts the phase-selection checklist on the item's thread.",
		Checks:  "Posts the checklist once. It fails only when the post fails.",
		Fix:     "Check the integration's token and permissions.",
	},
	"publish-artifact": {
		Summary: "Posts an artifact of the spec folder on the item's thread.",
		Checks:  "Reads the artifact, confined to the spec folder, and posts it. A missing artifact skips.",
		Fix:     "Check the integration's token, and that the artifact is a file inside the spec folder.",
	},
	"record-feedback": {
		Summary: "Records the reviewers' comments in the item's artifact.",
		Checks:  "Appends the decision and each comment to the artifact named by with.into. Under check it writes nothing; an absent artifact skips.",
		Fix:     "Make the artifact writable, or see the error it gives.",
	},
	"request-review": {
		Summary: "Asks for a review on the item's thread.",
		Checks:  "Posts the review request. It fails only when the post fails.",
		Fix:     "Check the integration's token and permissions.",
	},
	"set-phase-label": {
		Summary: "Labels the item's issue with its phase.",
		Checks:  "Sets the label as the item enters a node. It fails only when the call fails.",
		Fix:     "Check the integration's token and permissions.",
	},
	"validate-artifacts": {
		Summary: "Checks that the node's documents exist and hold what the harness config requires.",
		Checks:  "Each artifact the node declares must exist (exactly one of a|b alternatives), and have the front matter keys, sections and content the checks in the harness config require. A node that declares checks but has no artifact blocks.",
		Fix:     "Write the missing document, or add the key, section or content the finding names, at the place it points to.",
	},
	"verify-tests": {
		Summary: "Runs the repository's test command.",
		Checks:  "Runs with.command (not under check, which runs no subprocess) and blocks when it fails or times out.",
		Fix:     "Make the tests pass; the finding holds the end of their output.",
	},
}
