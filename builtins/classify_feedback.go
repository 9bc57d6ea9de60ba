package builtins

import (
	"strings"

	"github.com/the-loop/the-loop/graph"
)

const classifyFeedbackName = "classify-feedback"

func init() { register(classifyFeedbackName, classifyFeedback{}) }

// classifyFeedback is the classify-feedback hook: did the human approve?
//
// It reads only comments whose author is on Settings.AuthorizedUsers
// (compared case-insensitively, a leading @ ignored; an empty list
// authorizes nobody) and never the-loop's own comments, which carry
// selfCommentMarker. Everything else is not read at all: comments are
// attacker-reachable on a public repository.
//
// No authorized comment, or none that decides, is a wait: a question or a
// partial review keeps the gate open rather than inventing an outcome. A
// decision passes with data outcome (approved, approved-with-comments or
// changes-requested, never anything else; the node's edges do the routing)
// and data comments, the authorized comments as [{author, body}] for
// record-feedback. Under check there is no event, so the gate waits.
type classifyFeedback struct{}

var (
	_ graph.Hook         = classifyFeedback{}
	_ graph.ParamChecker = classifyFeedback{}
)

func (classifyFeedback) CheckParams(params map[string]any) error {
	return noWithParams(classifyFeedbackName).check(params)
}

func (classifyFeedback) Run(ctx *graph.Context) (graph.Result, error) {
	comments := authorizedComments(ctx)
	if len(comments) == 0 {
		return graph.Wait(classifyFeedbackName, waitingFor(ctx, "no authorized feedback yet")), nil
	}
	outcome := reviewDecision(comments)
	if outcome == "" {
		outcome = fbClassify(comments)
	}
	if outcome == "" {
		return graph.Wait(classifyFeedbackName, "the feedback so far does not decide; the gate stays open"), nil
	}
	return graph.Pass(classifyFeedbackName, map[string]any{"outcome": outcome, "comments": commentRecords(comments)}), nil
}

// fbClassify is the deterministic classification floor: keyword matching
// over the lower-cased, newline-joined bodies. Requested changes outrank an
// approval; an approval is "with comments" when more than one comment
// arrived or the text hedges ("but", "nit", matched as substrings). "" means
// not decisive.
func fbClassify(comments []graph.Comment) string {
	bodies := make([]string, len(comments))
	for i, c := range comments {
		bodies[i] = c.Body
	}
	text := strings.ToLower(strings.Join(bodies, "\n"))
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(text, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("changes requested", "request changes", "please change", "rejected"):
		return graph.OutcomeChangesRequested
	case has("approved", "lgtm", "looks good", "ship it"):
		if len(comments) > 1 || has("but", "nit") {
			return graph.OutcomeApprovedWithComments
		}
		return graph.OutcomeApproved
	}
	return ""
}

// reviewDecision is what the pull request reviews among comments decided,
// read before any body: a reviewer who chose "Request changes" or
// "Approve" from GitHub's menu said so whatever the text. Requested
// changes outrank an approval; an approving review is then read as if its
// text began with "approved", so that other comments, a hedge or requested
// changes beside it are judged as fbClassify judges them. "" when no
// review decided (a commented review is read by its body alone).
//
// A stopgap kept apart from fbClassify until the reply reader reads
// graph.Comment.Review itself.
func reviewDecision(comments []graph.Comment) string {
	approved := false
	read := make([]graph.Comment, len(comments))
	for i, c := range comments {
		switch c.Review {
		case graph.ReviewChangesRequested:
			return graph.OutcomeChangesRequested
		case graph.ReviewApproved:
			approved, c.Body = true, "approved\n"+c.Body
		}
		read[i] = c
	}
	if !approved {
		return ""
	}
	return fbClassify(read)
}
