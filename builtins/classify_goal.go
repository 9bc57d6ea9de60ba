package builtins

import (
	"fmt"
	"strings"

	"github.com/the-loop/the-loop/graph"
)

func init() { register("classify-goal", classifyGoal{}) }

// The goal gate's fixed strings.
const (
	// goalRequestMarker rides in post-goal-request's comment so a re-entered
	// gate does not ask twice.
	goalRequestMarker = "<!-- the-loop:goal-request -->"
	// goalDecision is where the answered gate is recorded in the graph
	// state's decisions.
	goalDecision = "goal-definition"
)

// The accepted statement, anywhere in one comment:
//
//	Goal: <one sentence>
//	Success criteria:
//	- [ ] <criterion>
//	- <criterion>
//
// Markdown decoration is tolerated around both labels (**Goal:**, ## Success
// criteria). Criteria are the bullets directly after the criteria line; the
// list ends at the first blank line after a criterion or the first line that
// is not a bullet. Checkbox state is ignored: criteria are frozen as unmet.
var (
	goalLine       = pyRegexp(`(?im)^{ws}*(?:[#>*_{wsc}]*)goal(?:\*\*|__)?{ws}*:{ws}*(?:\*\*|__)?{ws}*({nws}.*?){ws}*$`)
	criteriaMarker = pyRegexp(`(?im)^{ws}*(?:[#>*_{wsc}]*)success{ws}+criteria(?:\*\*|__)?{ws}*:?{ws}*(?:\*\*|__)?{ws}*$`)
	criterionLine  = pyRegexp(`^{ws}*[-*]{ws}*(?:\[[ xX]\]{ws}*)?({nws}.*?){ws}*$`)
)

// goalStatement is a parsed goal. Both parts are required: a goal without
// criteria gives no definition of done, criteria without a goal no purpose.
type goalStatement struct {
	Goal     string
	Criteria []string
	// By is "@login" of the authorized author, set by latestGoal.
	By string
}

// parseGoal reads a goal statement from one comment body; ok is false unless
// both a goal line and at least one criterion are present.
func parseGoal(body string) (goalStatement, bool) {
	gm := goalLine.FindStringSubmatch(body)
	cm := criteriaMarker.FindStringIndex(body)
	if gm == nil || cm == nil {
		return goalStatement{}, false
	}
	var criteria []string
	for _, line := range pySplitLines(body[cm[1]:]) {
		if fmTrim(line) == "" {
			if len(criteria) > 0 {
				break // the list ended; a later paragraph is not a criterion
			}
			continue
		}
		m := criterionLine.FindStringSubmatch(line)
		if m == nil {
			break
		}
		criteria = append(criteria, m[1])
	}
	if len(criteria) == 0 {
		return goalStatement{}, false
	}
	return goalStatement{Goal: gm[1], Criteria: criteria}, true
}

// record is the goal as result data: {goal, criteria, by}, JSON-natural.
func (g goalStatement) record() map[string]any {
	return map[string]any{"goal": g.Goal, "criteria": obAnyList(g.Criteria), "by": g.By}
}

// latestGoal is the most recent authorized goal statement: the thread's
// comments in order (the arming comment is consumed by the control path and
// only ever found there), then the event's, which are newer. A restated goal
// therefore wins. thread may be nil (unreadable, or read-only evaluation),
// which simply finds less: fail closed to waiting, never to a guess.
func latestGoal(ctx *graph.Context, thread []graph.Comment) (goalStatement, bool) {
	var found goalStatement
	ok := false
	candidates := append(filterAuthorized(ctx, thread), authorizedComments(ctx)...)
	for _, c := range candidates {
		if g, parsed := parseGoal(c.Body); parsed {
			g.By = "@" + normalizeLogin(c.Author)
			found, ok = g, true
		}
	}
	return found, ok
}

// goalThread reads the thread for the goal gate; read-only evaluation and an
// unreadable thread both yield nil.
func goalThread(ctx *graph.Context) []graph.Comment {
	if ctx.ReadOnly {
		return nil
	}
	thread, err := threadComments(ctx)
	if err != nil {
		obWarn(ctx, "could not read the thread for a goal", "ref", ctx.WorkItem.Ref, "error", err)
		return nil
	}
	return thread
}

// classifyGoal is the contribution loop's goal gate. It waits until an
// authorized user has stated a goal and success criteria, in the thread or in
// the event, then releases on outcome "defined" and hands the goal to the
// runtime to freeze with its author. Once the decision is recorded it passes
// without reading anything.
//
// Data: outcome "defined", decision "goal-definition", and on a fresh answer
// goal {goal: string, criteria: [string], by: "@login"}; error when the
// confirmation comment could not be posted.
type classifyGoal struct{}

var (
	_ graph.Hook         = classifyGoal{}
	_ graph.ParamChecker = classifyGoal{}
)

const classifyGoalName = "classify-goal"

func (classifyGoal) CheckParams(params map[string]any) error {
	return withRules{}.verify(classifyGoalName, params)
}

func (classifyGoal) Run(ctx *graph.Context) (graph.Result, error) {
	const name = classifyGoalName
	if gateDecided(ctx.Decisions, goalDecision) {
		return graph.Pass(name, map[string]any{"outcome": graph.OutcomeDefined, "decision": goalDecision}), nil
	}
	goal, ok := latestGoal(ctx, goalThread(ctx))
	if !ok {
		return graph.Wait(name, waitingFor(ctx, "waiting for an authorized user to state the goal and its success criteria in one comment (a `Goal:` line, then a `Success criteria:` bullet list)")), nil
	}
	data := map[string]any{"outcome": graph.OutcomeDefined, "decision": goalDecision, "goal": goal.record()}
	if !ctx.ReadOnly {
		if _, err := callOut(ctx, opAddComment, map[string]any{"ref": ctx.WorkItem.Ref, "body": goalConfirmation(goal)}); err != nil {
			obWarn(ctx, "could not post the goal confirmation", "ref", ctx.WorkItem.Ref, "error", err)
			data["error"] = err.Error()
		}
	}
	return graph.Pass(name, data), nil
}

// goalConfirmation echoes the frozen goal on the thread.
func goalConfirmation(g goalStatement) string {
	var b strings.Builder
	fmt.Fprintf(&b, "🤖 _the-loop_ — **goal frozen**\n\n")
	fmt.Fprintf(&b, "Working toward this goal, as %s stated it:\n\n", g.By)
	fmt.Fprintf(&b, "> **Goal:** %s\n>\n> **Success criteria:**\n", g.Goal)
	for _, c := range g.Criteria {
		fmt.Fprintf(&b, "> - [ ] %s\n", c)
	}
	b.WriteString("\nThese criteria are the definition of done: verification holds until each one is met. Next, the-loop asks which phases this contribution needs.")
	return markSelfAuthored(b.String())
}
