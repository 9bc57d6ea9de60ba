package builtins

import (
	"fmt"
	"slices"
	"strings"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/reply"
)

func init() { register("classify-phase-selection", classifyPhaseSelection{}) }

// classifyPhaseSelection is the phase-selection gate: it waits until an
// authorized user's reply carries the execute keyword, then turns the
// selection into facts the runtime records and routes on. It never chooses a
// destination: the outcome is always "selected", and the skips it reports are
// filtered against the graph's own skippable vocabulary.
//
// The selection is the reply's own checklist when it has one, else the
// current tick state of the-loop's checklist comment, read back from the
// thread. Once the decision is recorded in the graph state the gate passes
// without reading anything, so check does not report an answered item as
// stuck at its first node.
//
// Result data on a fresh selection (all values JSON-natural):
//
//	outcome          "selected"
//	decision         "phase-selection"
//	declaredSkips    {node: {via: "selection", token: node, by: "@login", reason: ""}}
//	optIns           {node: {via: "selection", token: node, by: "@login"}}
//	refused          [node, ...]   protected phases a reply unticked
//	surface          "work-item" | "pull-request" | "" (a loop not asked)
//	sessionPerPr     "never" | "cross-repository" | "always"
//	frozenGraph      see frozenGraph
//	selectionSource  "reply" | "checklist"
//	error            set only when the confirmation comment could not be posted
type classifyPhaseSelection struct{}

var (
	_ graph.Hook         = classifyPhaseSelection{}
	_ graph.ParamChecker = classifyPhaseSelection{}
)

const classifyPhaseSelectionName = "classify-phase-selection"

func (classifyPhaseSelection) CheckParams(params map[string]any) error {
	return withRules{}.verify(classifyPhaseSelectionName, params)
}

func (classifyPhaseSelection) Run(ctx *graph.Context) (graph.Result, error) {
	const name = classifyPhaseSelectionName
	if gateDecided(ctx.Decisions, selectionDecision) {
		return graph.Pass(name, map[string]any{"outcome": graph.OutcomeSelected, "decision": selectionDecision}), nil
	}
	// Departure from the original (docs/compatibility.md#control-keywords): execute counts in the person's own words only.
	keyword := executeKeyword(ctx)
	var chosen *graph.Comment
	for _, c := range authorizedComments(ctx) {
		// The keyword counts in the person's own words only: a quoted
		// instruction or one shown in code is not their choice.
		if strings.Contains(strings.ToLower(reply.Own(c.Body)), strings.ToLower(keyword)) {
			chosen = &c // the latest instruction wins
		}
	}
	if chosen == nil {
		return graph.Wait(name, waitingFor(ctx, fmt.Sprintf("waiting for an authorized user to choose the phases and reply `%s` (tick phases to keep as `- [x] <node>`, untick to skip as `- [ ] <node>`)", keyword))), nil
	}

	skippable, optIn, protected := phaseRows(ctx)
	source, body := "reply", chosen.Body
	if !hasChecklist(body) {
		source, body = "checklist", selectionTickState(ctx)
	}
	sel := parseSelection(body, skippable, optIn, protected)
	surface := noSurface
	if asksSurface(ctx) {
		surface = parseSurface(body)
	}
	sessions := parsePRSessions(body, sessionPerPRDefault(ctx))
	actor := normalizeLogin(chosen.Author)
	by := "@" + actor

	data := map[string]any{
		"outcome":         graph.OutcomeSelected,
		"decision":        selectionDecision,
		"declaredSkips":   selectionRecords(sel.Skips, by, true),
		"optIns":          selectionRecords(sel.OptIns, by, false),
		"refused":         obAnyList(sel.Refused),
		"surface":         surface,
		"sessionPerPr":    sessions,
		"frozenGraph":     frozenGraph(ctx, sel, surface, sessions),
		"selectionSource": source,
	}
	if !ctx.ReadOnly {
		confirmation := selectionConfirmation(actor, sel, optIn, surface, sessions)
		if _, err := callOut(ctx, opAddComment, map[string]any{"ref": ctx.WorkItem.Ref, "body": confirmation}); err != nil {
			// The selection stands: it was authorized and is about to be
			// frozen. Only the human-readable record of it is missing, and the
			// runtime reports that from data["error"].
			obWarn(ctx, "could not post the phase-selection confirmation", "ref", ctx.WorkItem.Ref, "error", err)
			data["error"] = err.Error()
		}
	}
	return graph.Pass(name, data), nil
}

// selectionTickState is the current body of the-loop's checklist comment,
// ticks and all: the newest comment carrying selectionMarker. Unreadable,
// missing, or under a read-only evaluation, it is "", which selects nothing
// away: the full process, never a lighter one.
func selectionTickState(ctx *graph.Context) string {
	if ctx.ReadOnly {
		return ""
	}
	comments, err := threadComments(ctx)
	if err != nil {
		obWarn(ctx, "could not read the phase-selection checklist", "ref", ctx.WorkItem.Ref, "error", err)
		return ""
	}
	for _, c := range slices.Backward(comments) {
		if strings.Contains(c.Body, selectionMarker) {
			return c.Body
		}
	}
	return ""
}

// selectionRecords is the provenance the runtime stores for each selected
// node. A declared skip carries an empty reason, the shape a skip declared on
// the command line shares.
func selectionRecords(nodes []string, by string, withReason bool) map[string]any {
	out := map[string]any{}
	for _, n := range nodes {
		rec := map[string]any{"via": "selection", "token": n, "by": by}
		if withReason {
			rec["reason"] = ""
		}
		out[n] = rec
	}
	return out
}

// obBackticked renders ids as a comma-separated list of code spans.
func obBackticked(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = "`" + id + "`"
	}
	return strings.Join(q, ", ")
}

// selectionConfirmation is the comment that records the frozen selection on
// the thread. It names only the-loop's own vocabulary and the replier's login.
func selectionConfirmation(actor string, sel phaseSelection, offered []string, surface, sessions string) string {
	var b strings.Builder
	line := func(format string, args ...any) {
		fmt.Fprintf(&b, format, args...)
		b.WriteByte('\n')
	}
	line("🤖 _the-loop_ — **phase selection frozen**")
	line("")
	if len(sel.Skips) > 0 {
		line("Skipped, as @%s declared: %s", actor, obBackticked(sel.Skips))
		line("")
		line("A declaration is not a verdict: `the-loop check` lists each of these as *skipped by declaration*, and every other phase still gates this work item.")
	} else {
		line("@%s kept every phase that runs by default, so the full process runs.", actor)
	}
	switch {
	case len(sel.OptIns) > 0:
		line("")
		line("Optional phases @%s added: %s.", actor, obBackticked(sel.OptIns))
	case len(offered) > 0:
		line("")
		line("Optional phases offered and not selected, so not running: %s.", obBackticked(offered))
	}
	if len(sel.Refused) > 0 {
		line("")
		line("**Refused**: %s cannot be deselected and will run.", obBackticked(sel.Refused))
	}
	switch surface {
	case surfacePullRequest:
		line("")
		line("As @%s chose, the outer loop runs **on a pull request** in this repository.", actor)
	case surfaceWorkItem:
		line("")
		line("The outer loop runs **here, on this work item** (the default); every repository this item changes gets its own pull request for the inner loop.")
	}
	line("")
	line("Sessions for this item's pull requests: **`%s`**: %s", sessions, prSessionsRowText[sessions])
	line("")
	b.WriteString("The loop starts now.")
	return markSelfAuthored(b.String())
}
