package builtins

import (
	"slices"
	"strings"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/internal/lazyregexp"
)

// This file holds what post-phase-selection and classify-phase-selection
// share: the checklist vocabulary, how a checklist is read back, and the
// frozen-graph record. The posting side renders rows in exactly the shape the
// reading side parses, so the two are kept together.

// The phase-selection gate's fixed strings. They are matched by machines
// (ours and the Python tool's), so they never change.
const (
	// defaultExecuteKeyword releases the gate unless Settings.ExecuteKeyword
	// names another.
	defaultExecuteKeyword = "the-loop execute"
	// selectionMarker rides in the checklist comment, making the entry hook
	// idempotent and letting the gate find the comment to read its ticks.
	selectionMarker = "<!-- the-loop:phase-selection -->"
	// selectionDecision is where the answered gate is recorded in the graph
	// state's decisions.
	selectionDecision = "phase-selection"
)

// Where the outer loop is collaborated on. The work item is the default; a
// loop with no outer loop (the contribution loop) records noSurface, which is
// a different fact from the default: the question was never asked.
const (
	surfacePullRequest = "pull-request"
	surfaceWorkItem    = "work-item"
	noSurface          = ""
	// surfaceToken is the checklist row that chooses the pull request.
	surfaceToken = "outer-loop-on-pull-request"
)

// How many harness sessions a work item's pull requests get, narrowest first.
const (
	sessionPerPRNever           = "never"
	sessionPerPRCrossRepository = "cross-repository"
	sessionPerPRAlways          = "always"
	// prSessionsTokenPrefix prefixes the checklist row of each mode.
	prSessionsTokenPrefix = "pr-sessions-"
)

var sessionPerPRModes = []string{sessionPerPRNever, sessionPerPRCrossRepository, sessionPerPRAlways}

// sessionPerPRMode resolves a configured sessionPerPr value to a mode. Total:
// nil is the shipped default, the legacy booleans keep their meaning (true is
// cross-repository, false is never), and anything unrecognised falls back to
// the shipped default rather than the widest mode.
func sessionPerPRMode(v any) string {
	switch x := v.(type) {
	case bool:
		if x {
			return sessionPerPRCrossRepository
		}
		return sessionPerPRNever
	case string:
		if slices.Contains(sessionPerPRModes, x) {
			return x
		}
	}
	return sessionPerPRCrossRepository
}

// sessionPerPRDefault is the mode the checklist pre-ticks and every unanswered
// or ambiguous reply keeps. The operator's routing.tmux.sessionPerPr is not
// carried in graph.Settings yet, so this is the shipped default.
func sessionPerPRDefault(*graph.Context) string { return sessionPerPRMode(nil) }

// prSessionsMode maps a checklist token to its mode, "" for any other token.
func prSessionsMode(token string) string {
	mode, ok := strings.CutPrefix(token, prSessionsTokenPrefix)
	if !ok || !slices.Contains(sessionPerPRModes, mode) {
		return ""
	}
	return mode
}

// isNonPhaseToken reports whether a checklist row answers a question other
// than "which phases": such a row is never a skip and never a refusal.
func isNonPhaseToken(token string) bool {
	return token == surfaceToken || prSessionsMode(token) != ""
}

// Python's \s (and str.isspace) for text patterns: wider than RE2's ASCII \s,
// so a checklist typed with, say, a no-break space reads the same in both tools.
const pyWhitespaceClass = `\t\n\v\f\r \x1c-\x1f\x85\xa0\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}`

// pyRegexp compiles pattern, on first use, after expanding {ws} to
// Python's \s, {nws} to its complement \S, and {wsc} to the bare class
// contents for use inside a bracket expression. The expanding waits for
// the first use as well: pyRegexp runs at package initialisation, in
// every process, and most never match a checklist.
func pyRegexp(pattern string) *lazyregexp.Regexp {
	return lazyregexp.NewExpanded(pattern, pyExpand)
}

// pyExpand spells out pyRegexp's placeholders. Three ReplaceAll calls cost
// a few hundred nanoseconds where building a strings.Replacer cost fifty
// microseconds. No placeholder contains another, so the order of the
// calls does not matter.
func pyExpand(pattern string) string {
	pattern = strings.ReplaceAll(pattern, "{ws}", "["+pyWhitespaceClass+"]")
	pattern = strings.ReplaceAll(pattern, "{nws}", "[^"+pyWhitespaceClass+"]")
	return strings.ReplaceAll(pattern, "{wsc}", pyWhitespaceClass)
}

// pySplitLines splits s at every line boundary Python's str.splitlines
// recognises, dropping the boundaries; a trailing boundary adds no empty line.
func pySplitLines(s string) []string {
	var lines []string
	start := 0
	for i, r := range s {
		if i < start {
			continue // the \n of a \r\n pair
		}
		switch r {
		case '\n', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
			lines = append(lines, s[start:i])
			start = i + len(string(r))
		case '\r':
			lines = append(lines, s[start:i])
			start = i + 1
			if strings.HasPrefix(s[start:], "\n") {
				start++
			}
		}
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}

// checkLine is one checklist row: "- [x] design", "* [ ] `design`". The token
// is a node id (or one of the non-phase tokens), so what a human reads is what
// the graph routes on. Whitespace may run across lines, as in the original.
var checkLine = pyRegexp("(?m)^{ws}*[-*]{ws}*\\[([ xX])\\]{ws}*`?([A-Za-z0-9][A-Za-z0-9._-]*)`?")

// checkRow is one parsed checklist row.
type checkRow struct {
	Token  string
	Ticked bool
}

// checklistRows parses every checklist row of body, in order.
func checklistRows(body string) []checkRow {
	var rows []checkRow
	for _, m := range checkLine.FindAllStringSubmatch(body, -1) {
		rows = append(rows, checkRow{Token: m[2], Ticked: strings.TrimSpace(m[1]) != ""})
	}
	return rows
}

// hasChecklist reports whether body carries at least one checklist row.
func hasChecklist(body string) bool { return checkLine.MatchString(body) }

// phaseRows splits the walked loop's nodes into the checklist's three groups,
// in declaration order: default-on selectable nodes, opt-in nodes, and the
// protected nodes that always run (everything else but terminals and the gate
// itself). It reads the compiled graph the runtime walks, so the rows offered,
// the vocabulary a reply is checked against and the nodes routed around are
// one list. Without a graph all three are empty.
func phaseRows(ctx *graph.Context) (skippable, optIn, protected []string) {
	if ctx.Graph == nil {
		return nil, nil, nil
	}
	current := obNodeID(ctx)
	for _, n := range ctx.Graph.Nodes {
		switch {
		case n.OptIn:
			optIn = append(optIn, n.ID)
		case n.Skippable:
			skippable = append(skippable, n.ID)
		case !n.Terminal && n.ID != current:
			protected = append(protected, n.ID)
		}
	}
	return skippable, optIn, protected
}

// asksSurface reports whether the walked loop has an outer loop whose surface
// can be chosen: every loop but the contribution loop, which joins somebody
// else's work item and opens no pull request to carry a spec chain.
func asksSurface(ctx *graph.Context) bool {
	return ctx.Graph == nil || ctx.Graph.Name != graph.ContributionLoop
}

// executeKeyword is the configured execute keyword, else the default.
func executeKeyword(ctx *graph.Context) string {
	if k := strings.TrimSpace(ctx.Settings.ExecuteKeyword); k != "" {
		return k
	}
	return defaultExecuteKeyword
}

// phaseSelection is what one reply's checklist selects.
type phaseSelection struct {
	Skips   []string // unticked default-on phases
	OptIns  []string // ticked opt-in phases
	Refused []string // unticked protected phases, named back and run anyway
}

// parseSelection reads a checklist against the three row groups. Only an
// explicit untick removes a default-on phase, and only an explicit tick adds
// an opt-in one, so a partial or unreadable list fails toward the default.
// Non-phase rows and tokens outside the vocabulary are ignored.
func parseSelection(body string, skippable, optIn, protected []string) phaseSelection {
	var s phaseSelection
	add := func(list *[]string, token string) {
		if !slices.Contains(*list, token) {
			*list = append(*list, token)
		}
	}
	for _, row := range checklistRows(body) {
		switch {
		case isNonPhaseToken(row.Token):
		case slices.Contains(optIn, row.Token):
			if row.Ticked {
				add(&s.OptIns, row.Token)
			}
		case row.Ticked:
		case slices.Contains(skippable, row.Token):
			add(&s.Skips, row.Token)
		case slices.Contains(protected, row.Token):
			add(&s.Refused, row.Token)
		}
	}
	return s
}

// parseSurface is the surface a checklist chooses: the first surface row
// decides, ticked for a pull request; absent or unticked is the work item,
// which opens nothing.
func parseSurface(body string) string {
	for _, row := range checklistRows(body) {
		if row.Token != surfaceToken {
			continue
		}
		if row.Ticked {
			return surfacePullRequest
		}
		return surfaceWorkItem
	}
	return surfaceWorkItem
}

// parsePRSessions is the mode a checklist chooses: exactly one distinct
// ticked mode row is a choice; none, several or an unknown mode keep def.
func parsePRSessions(body, def string) string {
	var ticked []string
	for _, row := range checklistRows(body) {
		if mode := prSessionsMode(row.Token); mode != "" && row.Ticked && !slices.Contains(ticked, mode) {
			ticked = append(ticked, mode)
		}
	}
	if len(ticked) == 1 {
		return ticked[0]
	}
	return def
}

// frozenGraph is the record of the graph this work item will walk, as the
// selection froze it: every node in declaration order with whether it is
// walked. An opt-in node nobody ticked is skipped too, and optIn says which of
// the two kinds of absence it is. The shape is JSON-natural (map[string]any,
// []any) so it reads back from graph-state.json unchanged.
func frozenGraph(ctx *graph.Context, sel phaseSelection, surface, sessionPerPR string) map[string]any {
	nodes := []any{}
	loop := ""
	if ctx.Graph != nil {
		loop = ctx.Graph.Name
		for _, n := range ctx.Graph.Nodes {
			skipped := slices.Contains(sel.Skips, n.ID) || (n.OptIn && !slices.Contains(sel.OptIns, n.ID))
			nodes = append(nodes, map[string]any{
				"id":         n.ID,
				"phase":      n.Phase,
				"skipped":    skipped,
				"selectable": n.Skippable || n.OptIn,
				"optIn":      n.OptIn,
			})
		}
	}
	return map[string]any{
		"loop":         loop,
		"workItem":     ctx.WorkItem.ID,
		"surface":      surface,
		"sessionPerPr": sessionPerPR,
		"nodes":        nodes,
	}
}

// prSessionsRowText says what each mode does, for the checklist and the
// confirmation.
var prSessionsRowText = map[string]string{
	sessionPerPRNever:           "all of this work item's pull requests share its one session.",
	sessionPerPRCrossRepository: "a pull request in **another** repository gets a session of its own; one in this repository is handled by this work item's session.",
	sessionPerPRAlways:          "**every** pull request gets a session of its own, including those in this repository.",
}

// gateDecided reports whether a decision is recorded under key: present and not
// an empty value.
func gateDecided(decisions map[string]any, key string) bool {
	v, ok := decisions[key]
	if !ok || v == nil {
		return false
	}
	switch x := v.(type) {
	case bool:
		return x
	case string:
		return x != ""
	case map[string]any:
		return len(x) > 0
	case []any:
		return len(x) > 0
	}
	return true
}
