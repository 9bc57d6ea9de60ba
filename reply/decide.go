package reply

import (
	"strings"
)

// Outcome is what the replies a gate read decided. Its values are the
// graph's outcome names.
type Outcome string

const (
	// Undecided: nothing read decides; the gate stays open.
	Undecided Outcome = ""
	// Approved: approved, and nothing more was said.
	Approved Outcome = "approved"
	// ApprovedWithComments: approved, with something beside it: a hedge,
	// or more than one reply.
	ApprovedWithComments Outcome = "approved-with-comments"
	// ChangesRequested: someone asked for changes.
	ChangesRequested Outcome = "changes-requested"
)

// The original's phrase lists, read as whole words and phrases.
var (
	// ApprovalPhrases approve.
	ApprovalPhrases = []string{"approved", "lgtm", "looks good", "ship it"}
	// ChangePhrases request changes.
	ChangePhrases = []string{"changes requested", "request changes", "please change", "rejected"}
	// hedgePhrases make an approval one with comments.
	hedgeWords = set("but", "nit", "nits", "nitpick", "nitpicks")
)

// The states of a pull request review, as GitHub's webhooks spell them
// (its REST listing spells them in capitals; [Decide] reads either).
const (
	ReviewApproved         = "approved"
	ReviewChangesRequested = "changes_requested"
	ReviewCommented        = "commented"
	ReviewDismissed        = "dismissed"
	ReviewPending          = "pending"
)

// Reply is one reply a gate reads.
type Reply struct {
	// Body is the reply as written.
	Body string
	// Review is the state of the pull request review the reply is, ""
	// for an ordinary comment.
	Review string
}

// Verdict is what [Decide] read.
type Verdict struct {
	Outcome Outcome
	// Unread are the decision phrases found that did not count, and why,
	// in the order they stand: what a person is told when the gate stays
	// open although they wrote "approved".
	Unread []Mention
}

// Decide reads replies, oldest first, as a gate does. A requested change
// anywhere is ChangesRequested. Otherwise an approval is Approved, or
// ApprovedWithComments when more than one reply was read or one hedges;
// an approval negated after the last approval ("not approved after all")
// takes it back. A pull request review decides by its state: approved
// approves, changes_requested requests changes, and dismissed and pending
// are not read at all; a commented review is read as a comment.
//
// Departure from the original (docs/compatibility.md#how-a-reply-is-read): whole words, in their clause, instead of a substring over the joined comments.
func Decide(replies []Reply) Verdict {
	var (
		v        Verdict
		read     int
		changes  bool
		approved bool // the last word on approval is an approval
		hedged   bool
	)
	for _, r := range replies {
		switch strings.ToLower(r.Review) {
		case ReviewDismissed, ReviewPending:
			continue
		case ReviewApproved:
			read++
			approved = true
			hedged = hedged || hedges(r.Body)
			continue
		case ReviewChangesRequested:
			read++
			changes = true
			continue
		}
		read++
		for _, m := range Mentions(r.Body, decisionPhrases) {
			change := isChange[m.Phrase]
			switch {
			case m.Why == Decides && change:
				changes = true
			case m.Why == Decides:
				approved = true
			case m.Why == Negated && !change:
				approved = false
				v.Unread = append(v.Unread, m)
			default:
				v.Unread = append(v.Unread, m)
			}
		}
		hedged = hedged || hedges(r.Body)
	}
	switch {
	case changes:
		v.Outcome = ChangesRequested
	case approved && (read > 1 || hedged):
		v.Outcome = ApprovedWithComments
	case approved:
		v.Outcome = Approved
	}
	return v
}

// decisionPhrases are ApprovalPhrases and ChangePhrases, changes first.
var decisionPhrases = append(append([]string(nil), ChangePhrases...), ApprovalPhrases...)

var isChange = set(ChangePhrases...)

// hedges reports whether body's own words hedge, wherever they stand: a
// "but" in a question still says there is more than an approval.
func hedges(body string) bool {
	found := false
	eachWord(Own(body), func(w string) { found = found || hedgeWords[w] })
	return found
}

// Floor is the original tool's deterministic floor, kept to hold Decide
// to: a substring test over the lower-cased bodies joined by newlines,
// changes first, an approval with comments when there is more than one
// body or "but" or "nit" occurs anywhere.
func Floor(bodies []string) Outcome {
	text := strings.ToLower(strings.Join(bodies, "\n"))
	has := func(words []string) bool {
		for _, w := range words {
			if strings.Contains(text, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has(ChangePhrases):
		return ChangesRequested
	case has(ApprovalPhrases):
		if len(bodies) > 1 || has([]string{"but", "nit"}) {
			return ApprovedWithComments
		}
		return Approved
	}
	return Undecided
}
