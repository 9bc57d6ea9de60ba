// Package reply reads what a person wrote in a reply on a work item's
// thread: which words are theirs, and whether those words decide a human
// gate. It is the one reader every path uses (the classify-feedback gate,
// the webhook router and the chat pipeline through the control keywords,
// and check --replies through the gate), so a reply reads the same
// whichever way it arrived. It is pure: no I/O, no clock, no state.
//
// # Whose words
//
// [Own] is the text of a reply less everything its author did not write
// now: quoted lines ("> ..."), fenced, indented and inline code, HTML
// comments (which is where the-loop's own markers and envelopes live) and
// struck-out text. A person quoting an approval, showing a command in
// backticks, or pasting a log does not approve or command anything.
//
// # Decisions
//
// A decision is one of the original tool's phrases, read as a whole word
// or phrase in the person's own words (so "disapproved" is not
// "approved"):
//
//	approve:          approved, lgtm, looks good, ship it
//	request changes:  changes requested, request changes, please change, rejected
//
// Each is read in its clause (a sentence, cut again at commas, colons,
// dashes and "and", "but", "however", "although", "though", "so"), and it
// decides nothing when
//
//   - a negation stands before it in its clause: "not", "never",
//     "without", "nor", "cannot", any word ending in "n't", and "no" right
//     before it ("no longer approved" is "no" then "longer": negated too);
//   - its sentence is a question (ends at a "?");
//   - its sentence is a condition: "if", "once", "when", "whenever",
//     "unless", "until", "assuming", "provided";
//   - it stands inside double quotes, as a word mentioned rather than used.
//
// [Decide] reads the replies a gate was handed, in order, into an
// [Outcome]. A change request anywhere outranks an approval, as in the
// original. An approval is "with comments" when more than one reply was
// read or the person hedged ("but", "nit", "nits", "nitpick"), again as in
// the original, but as whole words: "contribute" and "unit" hedge nothing.
// A negated approval after the last approval takes it back ("LGTM." then
// "actually, not approved yet"). A pull request review's state, when a
// reply is one, is the decision its reviewer chose; its body is read for
// hedges only.
//
// [Mentions] is the same reading for any other list of phrases (the
// ad-hoc loop's "done" words); [Floor] is the original's substring test,
// kept so that tests can say exactly where the two part.
package reply
