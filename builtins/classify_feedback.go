package builtins

import (
	"fmt"
	"strings"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/reply"
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
// What the authorized comments say is read by package reply, the one
// reader every path shares: only the person's own words, each decision
// phrase in its clause, a pull request review by the state its reviewer
// chose. No authorized comment, or none that decides, is a wait: a
// question or a partial review keeps the gate open rather than inventing
// an outcome, and the wait says which phrases were not read as decisions
// and why. A decision passes with data outcome (approved,
// approved-with-comments or changes-requested, never anything else; the
// node's edges do the routing) and data comments, the authorized comments
// as [{author, body}] for record-feedback. Under check there is no event,
// so the gate waits.
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
	v := fbClassify(comments)
	if v.Outcome == reply.Undecided {
		return graph.Wait(classifyFeedbackName, "the feedback so far does not decide; the gate stays open"+unreadNote(v.Unread)), nil
	}
	return graph.Pass(classifyFeedbackName, map[string]any{"outcome": string(v.Outcome), "comments": commentRecords(comments)}), nil
}

// fbClassify reads comments, oldest first, as the gates do.
func fbClassify(comments []graph.Comment) reply.Verdict {
	replies := make([]reply.Reply, len(comments))
	for i, c := range comments {
		replies[i] = reply.Reply{Body: c.Body, Review: c.Review}
	}
	return reply.Decide(replies)
}

// unreadNote tells a person whose "approved" did not count why: the
// phrases found and how each was read, at most a few, each once.
func unreadNote(unread []reply.Mention) string {
	const most = 3
	var parts []string
	seen := map[string]bool{}
	for _, m := range unread {
		part := fmt.Sprintf("%q read as %s", m.Phrase, m.Why)
		if seen[part] {
			continue
		}
		seen[part] = true
		if len(parts) == most {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}
