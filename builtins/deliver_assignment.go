package builtins

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/the-loop/the-loop/graph"
)

func init() { register("deliver-assignment", deliverAssignment{}) }

// deliverAssignment pushes the entered node's assignment into the session
// bound to the loop: where the work item stands, what to produce, and how to
// report back. The transport is the integration's deliver-assignment
// operation ({ref, workItem, node, text}), served by the session dispatcher;
// an answer of {"delivered": false} means no live session (a skip). The text
// is composed only from the graph's vocabulary and the work item's id, never
// from event payload text.
//
// Without a delivery channel (noChannel: the none integration, or one that
// does not perform the operation) the hook skips quietly: that is the CLI
// path, where the claiming session reads the next node from the command's own
// output, and a second copy would deliver every assignment twice. A delivery
// that fails is a skip too, with the reason, as in the original: the state
// the assignment describes is durable, so a lost push costs a nudge and is
// never a warning on the node it announces.
//
// Data: delivered (true) when delivered.
type deliverAssignment struct{}

var (
	_ graph.Hook         = deliverAssignment{}
	_ graph.ParamChecker = deliverAssignment{}
)

const deliverAssignmentName = "deliver-assignment"

func (deliverAssignment) CheckParams(params map[string]any) error {
	return withRules{}.verify(deliverAssignmentName, params)
}

func (deliverAssignment) Run(ctx *graph.Context) (graph.Result, error) {
	const name = deliverAssignmentName
	if ctx.ReadOnly {
		return graph.Skip(name, readOnlyReason), nil
	}
	res, err := callOut(ctx, opDeliverAssignment, map[string]any{
		"ref":      ctx.WorkItem.Ref,
		"workItem": ctx.WorkItem.ID,
		"node":     obNodeID(ctx),
		"text":     renderAssignment(ctx),
	})
	switch {
	case noChannel(err):
		return graph.Skip(name, "no delivery channel (the CLI path: the command's output names the next node)"), nil
	case err != nil:
		obWarn(ctx, "assignment delivery failed", "node", obNodeID(ctx), "error", err)
		return graph.Skip(name, "delivery failed: "+err.Error()), nil
	}
	if delivered, ok := res["delivered"].(bool); ok && !delivered {
		return graph.Skip(name, "no live session to deliver into"), nil
	}
	return graph.Pass(name, map[string]any{"delivered": true}), nil
}

// assignmentPR is the pull request an inner loop is about, read from the
// work item's ref (github:owner/repo#N): ok only under the PR loop.
func assignmentPR(ctx *graph.Context) (pr int, repo string, ok bool) {
	if ctx.Graph == nil || ctx.Graph.Name != graph.PRLoop {
		return 0, "", false
	}
	rest, found := strings.CutPrefix(ctx.WorkItem.Ref, "github:")
	if !found {
		return 0, "", false
	}
	repo, num, found := strings.Cut(rest, "#")
	n, err := strconv.Atoi(num)
	if !found || err != nil || n <= 0 {
		return 0, "", false
	}
	return n, repo, true
}

// renderAssignment is the assignment text for the node just entered.
func renderAssignment(ctx *graph.Context) string {
	id := ctx.WorkItem.ID
	pr, prRepo, inner := assignmentPR(ctx)
	scope := id
	claim := fmt.Sprintf("the-loop graph complete %s", id)
	if inner {
		scope = fmt.Sprintf("pull request #%d's %s on %s", pr, graph.PRLoop, id)
		claim += fmt.Sprintf(" --pr %d", pr)
		if prRepo != "" {
			scope += fmt.Sprintf(" (in %s)", prRepo)
			claim += " --pr-repo " + prRepo
		}
	}
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	add("the-loop assignment for %s:", scope)
	node := ctx.Node
	if node == nil {
		node = &graph.Node{}
	}
	if node.Phase != "" {
		add("  you are now at node: %s (phase: %s)", node.ID, node.Phase)
	} else {
		add("  you are now at node: %s", node.ID)
	}
	if len(node.Produces) > 0 {
		add("  produce: %s", strings.Join(node.Produces, ", "))
		add("  iterate it on: %s", assignmentSurface(ctx, inner))
	}
	if node.Command != "" {
		add("  work it with: `/the-loop:%s %s`", node.Command, id)
	}
	if node.Actor == graph.ActorHuman {
		add("  this node is a HUMAN gate: the loop waits for an authorized person on the ticket. Do not claim it, and do not start the work it gates.")
	} else {
		add("  when this node's work is done, report back: `%s`", claim)
	}
	add("  (assigned by the-loop's graph, not taken from any event payload)")
	return strings.Join(lines, "\n")
}

// assignmentSurface says where the produced artifact is iterated: the pull
// request for an inner loop, else the surface frozen at phase selection.
func assignmentSurface(ctx *graph.Context, inner bool) string {
	switch {
	case inner:
		return "this pull request (the inner loop always runs on its pull request)"
	case ctx.Surface == surfacePullRequest:
		return "a pull request in the repository the ticket belongs to, the surface chosen at phase-selection"
	}
	return "the work item itself (the default): comment on the ticket, and do not open a pull request just to carry the spec chain"
}
