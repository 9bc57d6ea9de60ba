package builtins

import (
	"fmt"
	"strings"

	"github.com/the-loop/the-loop/graph"
)

func init() { register("post-phase-selection", postPhaseSelection{}) }

// postPhaseSelection is the phase-selection gate's entry hook: it posts one
// checklist naming every selectable phase of the walked loop, the surface
// question and the pull-request sessions question, and asks an authorized user
// to reply with the execute keyword. The comment carries selectionMarker, so a
// re-entered gate that finds it on the thread does not post again.
//
// Data: posted (bool), plus reason "already asked" when the marker was found,
// or error when the post failed.
type postPhaseSelection struct{}

var (
	_ graph.Hook         = postPhaseSelection{}
	_ graph.ParamChecker = postPhaseSelection{}
)

const postPhaseSelectionName = "post-phase-selection"

func (postPhaseSelection) CheckParams(params map[string]any) error {
	return withRules{}.verify(postPhaseSelectionName, params)
}

func (postPhaseSelection) Run(ctx *graph.Context) (graph.Result, error) {
	if ctx.ReadOnly {
		return graph.Skip(postPhaseSelectionName, readOnlyReason), nil
	}
	if threadCarries(ctx, selectionMarker) {
		return graph.Pass(postPhaseSelectionName, map[string]any{"posted": false, "reason": "already asked"}), nil
	}
	body := selectionChecklist(ctx)
	if _, err := callOut(ctx, opAddComment, map[string]any{"ref": ctx.WorkItem.Ref, "body": body}); err != nil {
		obWarn(ctx, "could not post the phase-selection checklist", "ref", ctx.WorkItem.Ref, "error", err)
		return degradedWith(postPhaseSelectionName, err, map[string]any{"posted": false}), nil
	}
	return graph.Pass(postPhaseSelectionName, map[string]any{"posted": true}), nil
}

// selectionChecklist renders the checklist comment. Every row is in the shape
// checklistRows parses; everything else is the-loop's own text.
func selectionChecklist(ctx *graph.Context) string {
	skippable, optIn, protected := phaseRows(ctx)
	keyword := executeKeyword(ctx)
	var b strings.Builder
	line := func(format string, args ...any) {
		fmt.Fprintf(&b, format, args...)
		b.WriteByte('\n')
	}

	line("🤖 _the-loop_ — **which phases should this work item go through?**")
	line("")
	adds := ""
	if len(optIn) > 0 {
		adds = " and tick any optional phase it should have"
	}
	line("Nothing starts until this is answered. On this comment, untick every phase this work item can do without%s, then reply `%s`. The boxes as they stand at that moment are frozen into the graph this item walks.", adds, keyword)
	line("")
	for _, id := range skippable {
		line("- [x] %s", id)
	}
	line("")

	if len(optIn) > 0 {
		line("**Optional phases: these run only if you tick them.**")
		line("")
		for _, id := range optIn {
			if about := nodeDescription(ctx, id); about != "" {
				line("- [ ] %s — %s", id, about)
			} else {
				line("- [ ] %s", id)
			}
		}
		line("")
	}

	switch {
	case len(protected) > 0:
		line("Always run, whatever is unticked above:")
		line("")
		for _, id := range protected {
			line("- %s", id)
		}
		line("")
	case len(skippable) > 0:
		line("**Nothing in this loop is mandatory apart from this question**: the reviews, the security review and the approval gate can all be unticked. Each phase you untick is recorded under your name, in the work item's graph state, in a confirmation on this thread and in every `the-loop check` that follows.")
		line("")
	}

	if asksSurface(ctx) {
		line("**Where should the requirements, design, testing plan and tasks be worked out?** This row is not a phase:")
		line("")
		line("- [ ] `%s` — on a pull request in this repository.", surfaceToken)
		line("")
		line("Unticked (the default), they are worked out here on the work item. Either way the artifacts are committed files linked from here, and every repository this work item changes gets a pull request of its own for the inner loop.")
		line("")
	} else {
		line("This is a contribution to a work item somebody else is running, so there is no outer loop to place: the plan and the results are posted on this thread, and the code arrives as an ordinary pull request on the repository it changes.")
		line("")
	}

	def := sessionPerPRDefault(ctx)
	line("**How many sessions should this work item's pull requests get?** Not a phase either: it decides how many harness conversations serve this item. Tick exactly one; the deployment's default is pre-ticked.")
	line("")
	for _, mode := range sessionPerPRModes {
		mark := " "
		if mode == def {
			mark = "x"
		}
		line("- [%s] `%s%s` — %s", mark, prSessionsTokenPrefix, mode, prSessionsRowText[mode])
	}
	line("")
	line("No tick, or more than one, keeps `%s`, the operator's `routing.tmux.sessionPerPr`. In every mode a pull request gets a session only when it can have a working tree of its own; otherwise its events go to this work item's session and `session.pr_session_declined` is recorded.", def)
	line("")

	rest := "."
	if len(optIn) > 0 {
		rest = ": every ticked phase above, and none of the optional ones."
	}
	line("Replying `%s` without touching the boxes runs the full process%s", keyword, rest)
	line("")
	line("A checklist in your `%s` reply takes precedence over the boxes here. The boxes are only a proposal; your reply is what authorizes it.", keyword)
	line("")
	b.WriteString(selectionMarker)
	return markSelfAuthored(b.String())
}

// nodeDescription is the node's description flattened onto one line.
func nodeDescription(ctx *graph.Context, id string) string {
	if ctx.Graph == nil {
		return ""
	}
	for _, n := range ctx.Graph.Nodes {
		if n.ID == id {
			return strings.Join(strings.Fields(n.Description), " ")
		}
	}
	return ""
}
