package builtins

import (
	"fmt"
	"strings"
	"time"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/internal/lazyregexp"
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
// so the gate waits; when no replies were read and the state records the
// gate approved, the wait says who the state names and when, and that it
// was not verified: the state is the checkout's, so it is never an
// answer, and "no authorized feedback" would misstate what is known.
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
		if note := recordedApproval(ctx.Recorded); note != "" {
			return graph.Wait(classifyFeedbackName, note), nil
		}
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

// recordedApproval is the wait of a gate that read no replies and whose
// approval the graph state records: "approval recorded by alice at
// 2026-11-30T10:00:00Z, not verified (run with --replies github)". "" when
// the state records none, or an outcome that is no approval.
//
// Departure from the original (docs/compatibility.md#who-answered-a-gate-and-an-approval-check-could-not-verify): a recorded approval is said, unverified, instead of "no feedback yet".
func recordedApproval(r *graph.Recorded) string {
	if r == nil || (r.Outcome != string(reply.Approved) && r.Outcome != string(reply.ApprovedWithComments)) {
		return ""
	}
	var b strings.Builder
	b.WriteString("approval recorded")
	if r.Outcome == string(reply.ApprovedWithComments) {
		b.WriteString(" (with comments)")
	}
	if by := recordedLogins(r.By); by != "" {
		b.WriteString(" by " + by)
	}
	if !r.At.IsZero() {
		b.WriteString(" at " + r.At.UTC().Format(time.RFC3339))
	}
	b.WriteString(", not verified (run with --replies github)")
	return b.String()
}

// recordedLogin is a login as the state may record one: GitHub's, or an
// app's bot ("name[bot]").
var recordedLogin = lazyregexp.New(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$`)

// recordedLogins is the state's by, "alice, bob", when each name in it is
// a login: the state is the checkout's, and text that is not one is not
// repeated into a report.
func recordedLogins(by string) string {
	if by == "" || len(by) > 200 {
		return ""
	}
	names := strings.Split(by, ",")
	for i, n := range names {
		names[i] = strings.TrimSpace(n)
		if !recordedLogin.MatchString(names[i]) {
			return ""
		}
	}
	return strings.Join(names, ", ")
}
