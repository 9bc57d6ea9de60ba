package builtins

import (
	"fmt"

	"github.com/the-loop/the-loop/graph"
)

func init() { register("request-review", requestReview{}) }

// requestReview announces on the thread that a human gate is ready for
// review. The comment is self-marked, so no reader takes it for an answer.
//
// Data: posted (bool); error when the post failed.
type requestReview struct{}

var (
	_ graph.Hook         = requestReview{}
	_ graph.ParamChecker = requestReview{}
)

const requestReviewName = "request-review"

func (requestReview) CheckParams(params map[string]any) error {
	return withRules{}.verify(requestReviewName, params)
}

func (requestReview) Run(ctx *graph.Context) (graph.Result, error) {
	const name = requestReviewName
	if ctx.ReadOnly {
		return graph.Skip(name, readOnlyReason), nil
	}
	body := markSelfAuthored(fmt.Sprintf(
		"🤖 _the-loop_ — **%s** is ready for review.\n\n"+
			"Work item `%s` is waiting at a human gate. Reply to approve, to approve with comments, or with the changes you want.",
		obNodeID(ctx), ctx.WorkItem.ID))
	if _, err := callOut(ctx, opAddComment, map[string]any{"ref": ctx.WorkItem.Ref, "body": body}); err != nil {
		obWarn(ctx, "could not request review", "ref", ctx.WorkItem.Ref, "error", err)
		return degradedWith(name, err, map[string]any{"posted": false}), nil
	}
	return graph.Pass(name, map[string]any{"posted": true}), nil
}
