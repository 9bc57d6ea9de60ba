// Package builtins holds the-loop's shipped hooks, one hook per file, and the
// registry the graph compiler resolves their names against.
//
// # Using it
//
// Registry returns the shipped hooks as a graph.Registry; pass it to the
// graph compiler. Every hook implements graph.Hook: Run reads a
// *graph.Context and returns a graph.Result (pass, block, wait or skip). A
// returned error is a broken check, which the chain runner turns into a
// non-retriable block, never a pass. Hooks taking with: parameters also
// implement graph.ParamChecker, so a misspelt or mistyped parameter fails
// when the graph compiles, with an error naming the key and what it should
// hold:
//
//	with.sections: got string, want a list of section titles
//
// The registry is filled during package initialisation and is read-only
// afterwards, so it is safe for concurrent use. Hooks keep no state between
// runs.
//
// # The content hooks
//
// These read the work item's spec folder and nothing else; they are pure
// apart from record-feedback, which writes only outside read-only
// evaluation.
//
//   - validate-artifacts: the node's produces (and with.validates) exist,
//     exactly once per slot, and hold up: locked, frontMatter, sections,
//     checkmarks. Every unmet requirement comes back in one block.
//   - enforces-boundaries-from: every with.markers phrase raised in
//     with.upstream is answered in the node's own artifacts.
//   - lint-artifacts: mermaid diagrams parse (checkMermaid, in mermaid.go)
//     and prose lines respect with.maxLineLength.
//   - classify-feedback: an authorized human's reply, classified as
//     approved, approved-with-comments or changes-requested, or a wait.
//   - record-feedback: that reply appended to the artifact's
//     "## Review comments" section, atomically.
//   - await-inner-loops: the outer loop waits for every pull request's inner
//     loop to complete.
//
// A produces entry names one artifact and may accept several names,
// "requirements.md|bugfix.md"; resolveSlots (artifacts.go) is the one
// resolver every content hook uses, and it never chooses between present
// alternatives. Front matter is read through ctx.Files
// (graph.Files.FrontMatter), which resolves YAML scalars as the reference
// implementation does, and compared as pythonStr (frontmatter.go) renders
// it, so a comparison reaches the same verdict on the same file.
//
// A finding about a line of a file carries it (Message.Line, and Column
// where it is plain), counted from the top of the file: a body line is
// offset by its front matter (graph.Files.FrontMatterLines). The text never
// holds it, so messages read as the reference implementation's; a finding
// with no line to point at, such as a missing section, has Line 0.
//
// The gate hooks (classify-phase-selection, classify-goal,
// classify-adhoc-reply), the outbound hooks (set-phase-label,
// request-review, publish-artifact, notify, post-*, deliver-assignment,
// mcp-call) and verify-tests live in files of their own names.
//
// # Who a gate listens to
//
// Every gate reads comments by one rule (filterAuthorized, authz.go):
// the-loop's own comments are dropped first (IsSelfAuthoredComment): one
// carrying its marker (IsSelfAuthored; the hooks mark what they post, and
// the GitHub integration marks every comment it posts but a ledger relay),
// and one its integration's own identity posted (graph.Comment.Self, from
// the listing's "self") unless it is a relay of a person's words
// (RelayedWords); then any whose author is not on
// Settings.AuthorizedUsers (IsAuthorized).
// A comment that passes and carries a ledger envelope (envelope.go:
// StampEnvelope writes it, ParseEnvelope reads it) naming an authorized
// github id as its actor is attributed to that person, so a reply given
// on a chat channel and posted by the operator's account is recorded as
// its author's. Attribution maps one authorized login to another and
// never admits anyone.
//
// # Adding a hook
//
// Create one file named after the hook, declare its type, and call register
// from the file's init. Give it a CheckParams when it takes parameters,
// refusing unknown keys. Test it beside the file with a graph.Context built
// by hand.
package builtins
