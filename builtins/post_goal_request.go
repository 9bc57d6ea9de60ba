package builtins

import (
	"strings"

	"github.com/the-loop/the-loop/graph"
)

func init() { register("post-goal-request", postGoalRequest{}) }

// postGoalRequest is the goal gate's entry hook: it asks the thread for a goal
// and success criteria, unless an authorized goal is already there (it
// usually rides in with the arming comment) or the request was already posted
// (goalRequestMarker found on the thread).
//
// Data: posted (bool); reason "goal already stated" or "already asked" when
// nothing was posted on purpose; error when the post failed.
type postGoalRequest struct{}

var (
	_ graph.Hook         = postGoalRequest{}
	_ graph.ParamChecker = postGoalRequest{}
)

const postGoalRequestName = "post-goal-request"

func (postGoalRequest) CheckParams(params map[string]any) error {
	return withRules{}.verify(postGoalRequestName, params)
}

func (postGoalRequest) Run(ctx *graph.Context) (graph.Result, error) {
	const name = postGoalRequestName
	if ctx.ReadOnly {
		return graph.Skip(name, readOnlyReason), nil
	}
	thread := goalThread(ctx)
	if _, ok := latestGoal(ctx, thread); ok {
		return graph.Pass(name, map[string]any{"posted": false, "reason": "goal already stated"}), nil
	}
	if carriesMarker(thread, goalRequestMarker) {
		return graph.Pass(name, map[string]any{"posted": false, "reason": "already asked"}), nil
	}
	if _, err := callOut(ctx, opAddComment, map[string]any{"ref": ctx.WorkItem.Ref, "body": goalRequestBody()}); err != nil {
		obWarn(ctx, "could not post the goal request", "ref", ctx.WorkItem.Ref, "error", err)
		return degradedWith(name, err, map[string]any{"posted": false}), nil
	}
	return graph.Pass(name, map[string]any{"posted": true}), nil
}

// goalRequestBody is the request comment, showing the exact shape parseGoal
// accepts.
func goalRequestBody() string {
	lines := []string{
		"🤖 _the-loop_ — **what should this contribution achieve?**",
		"",
		"the-loop has been asked to contribute to this work item. Before it starts, an authorized user needs to state what the contribution is for, in a single comment shaped like this:",
		"",
		"```",
		"Goal: <one sentence: what the-loop should get done here>",
		"Success criteria:",
		"- [ ] <a check that shows it worked>",
		"- [ ] <as many more as needed>",
		"```",
		"",
		"The criteria are frozen under your name as the definition of done, and the loop's verification gate holds until each is met. If your `the-loop contribute` comment already had this block, there is nothing more to do.",
		"",
		goalRequestMarker,
	}
	return markSelfAuthored(strings.Join(lines, "\n"))
}
