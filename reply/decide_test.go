package reply

import (
	"strings"
	"testing"
)

// A departure names why Decide and the original's Floor part on a case;
// the differential test over the original's own work items accepts a
// disagreement only for one of these.
const (
	agrees      = ""
	notTheirs   = "not their own words" // quoted, code, an HTML comment, struck out
	inWord      = "part of a longer word"
	negated     = "negated"
	asked       = "a question"
	conditional = "conditional"
	inQuotes    = "in double quotes"
	withdrawn   = "taken back"
	hedgeInWord = "a hedge inside a longer word"
	reviewState = "a review's state"
)

// phrasings are real-world replies, each with the class it must get, the
// class the original's substring floor gives it, and, where the two part,
// why the floor is wrong. One entry is one gate read: several bodies are
// several comments.
var phrasings = []struct {
	bodies []string
	want   Outcome
	floor  Outcome
	why    string
}{
	// Plain decisions, as the original reads them.
	{[]string{"approved"}, Approved, Approved, agrees},
	{[]string{"Approved."}, Approved, Approved, agrees},
	{[]string{"APPROVED"}, Approved, Approved, agrees},
	{[]string{"LGTM"}, Approved, Approved, agrees},
	{[]string{"lgtm!"}, Approved, Approved, agrees},
	{[]string{"**LGTM**"}, Approved, Approved, agrees},
	{[]string{"__LGTM__"}, Approved, Approved, agrees},
	{[]string{"*approved*"}, Approved, Approved, agrees},
	{[]string{"# LGTM"}, Approved, Approved, agrees},
	{[]string{"Looks good to me."}, Approved, Approved, agrees},
	{[]string{"looks good 👍"}, Approved, Approved, agrees},
	{[]string{"Ship it!"}, Approved, Approved, agrees},
	{[]string{"ship it 🚀"}, Approved, Approved, agrees},
	{[]string{"Approved, thanks for the quick turnaround"}, Approved, Approved, agrees},
	{[]string{"Reviewed the requirements end to end. Approved."}, Approved, Approved, agrees},
	{[]string{"No objections, LGTM"}, Approved, Approved, agrees},
	{[]string{"Great work - approved"}, Approved, Approved, agrees},
	{[]string{"approved\r\n"}, Approved, Approved, agrees},
	{[]string{"Changes requested: the security section is empty."}, ChangesRequested, ChangesRequested, agrees},
	{[]string{"I have to request changes here."}, ChangesRequested, ChangesRequested, agrees},
	{[]string{"Please change the title to say what the fix is."}, ChangesRequested, ChangesRequested, agrees},
	{[]string{"Rejected: out of scope for this quarter."}, ChangesRequested, ChangesRequested, agrees},
	{[]string{"REJECTED"}, ChangesRequested, ChangesRequested, agrees},
	{[]string{"Looks good overall, but please change the rollback section."}, ChangesRequested, ChangesRequested, agrees},
	{[]string{"approved", "please change the title first"}, ChangesRequested, ChangesRequested, agrees},

	// With comments, as the original.
	{[]string{"approved, but tighten the nit"}, ApprovedWithComments, ApprovedWithComments, agrees},
	{[]string{"Approved, but add a line about retries."}, ApprovedWithComments, ApprovedWithComments, agrees},
	{[]string{"LGTM, one nit: the table header."}, ApprovedWithComments, ApprovedWithComments, agrees},
	{[]string{"lgtm with a couple of nits"}, ApprovedWithComments, ApprovedWithComments, agrees},
	{[]string{"nitpick: typo in line 3. Otherwise approved."}, ApprovedWithComments, ApprovedWithComments, agrees},
	{[]string{"approved", "lgtm"}, ApprovedWithComments, ApprovedWithComments, agrees},
	{[]string{"the table reads well", "approved"}, ApprovedWithComments, ApprovedWithComments, agrees},
	{[]string{"Approved. But is the timeout right?"}, ApprovedWithComments, ApprovedWithComments, agrees},

	// Nothing decides, as the original.
	{[]string{"👍"}, Undecided, Undecided, agrees},
	{[]string{":+1:"}, Undecided, Undecided, agrees},
	{[]string{":shipit:"}, Undecided, Undecided, agrees},
	{[]string{"Thanks, reading it now."}, Undecided, Undecided, agrees},
	{[]string{"Can you say more about the rollback?"}, Undecided, Undecided, agrees},
	{[]string{"I approve"}, Undecided, Undecided, agrees},
	{[]string{"+1"}, Undecided, Undecided, agrees},
	{[]string{""}, Undecided, Undecided, agrees},
	{[]string{"   "}, Undecided, Undecided, agrees},

	// Negations: the floor approves on them.
	{[]string{"This is not approved yet: the security section is empty."}, Undecided, Approved, negated},
	{[]string{"Not approved."}, Undecided, Approved, negated},
	{[]string{"NOT LGTM"}, Undecided, Approved, negated},
	{[]string{"It doesn't look good to me and it isn't approved"}, Undecided, Approved, negated},
	{[]string{"I haven't approved this, the tests are missing"}, Undecided, Approved, negated},
	{[]string{"I can’t say it looks good yet"}, Undecided, Approved, negated},
	{[]string{"This is no longer approved: the scope changed."}, Undecided, Approved, negated},
	{[]string{"Never ship it like this."}, Undecided, Approved, negated},
	{[]string{"Don't ship it until the migration is written"}, Undecided, Approved, negated},
	{[]string{"cannot be approved in this form"}, Undecided, Approved, negated},
	{[]string{"Without the benchmark this is not lgtm"}, Undecided, Approved, negated},
	{[]string{"dont ship it"}, Undecided, Approved, negated},
	{[]string{"No changes requested, LGTM"}, Approved, ChangesRequested, negated},
	{[]string{"This is not rejected, it just needs a second reader"}, Undecided, ChangesRequested, negated},
	{[]string{"LGTM.", "Actually, not approved yet: I missed the migration."}, Undecided, ApprovedWithComments, withdrawn},
	{[]string{"approved", "wait, no. This is not approved, the diagram is wrong"}, Undecided, ApprovedWithComments, withdrawn},
	{[]string{"Not approved yet.", "Fixed now, approved."}, ApprovedWithComments, ApprovedWithComments, agrees},

	// Longer words: the floor finds the phrase inside them.
	{[]string{"I have disapproved this"}, Undecided, Approved, inWord},
	{[]string{"This is unapproved scope."}, Undecided, Approved, inWord},
	{[]string{"The design was pre-approved by the board"}, Undecided, Approved, inWord},
	{[]string{"the relationship it describes is wrong"}, Undecided, Approved, inWord},
	{[]string{"Definitely approved"}, Approved, ApprovedWithComments, hedgeInWord},
	{[]string{"approved; unit tests look fine"}, Approved, ApprovedWithComments, hedgeInWord},
	{[]string{"LGTM, thanks for the contribution"}, Approved, ApprovedWithComments, hedgeInWord},
	{[]string{"Looks good, the button copy reads well"}, Approved, ApprovedWithComments, hedgeInWord},

	// Questions.
	{[]string{"approved?"}, Undecided, Approved, asked},
	{[]string{"Is this approved?"}, Undecided, Approved, asked},
	{[]string{"LGTM?"}, Undecided, Approved, asked},
	{[]string{"Should we ship it?"}, Undecided, Approved, asked},
	{[]string{"Has anyone requested changes on this?"}, Undecided, Undecided, agrees},
	{[]string{"Who rejected the earlier draft?"}, Undecided, ChangesRequested, asked},
	{[]string{"Looks good? Ship it."}, Approved, Approved, agrees},

	// Conditions.
	{[]string{"Approved once the security section is filled in."}, Undecided, Approved, conditional},
	{[]string{"If the benchmark holds, then LGTM."}, Undecided, Approved, conditional},
	{[]string{"LGTM when CI is green"}, Undecided, Approved, conditional},
	{[]string{"Ship it unless someone objects by Friday"}, Undecided, Approved, conditional},
	{[]string{"approved, assuming the migration is reversible"}, Undecided, Approved, conditional},
	{[]string{"Approved. If you want, rename the flag."}, Approved, Approved, agrees},

	// Not the person's words now: quotes, code, comments, struck-out text.
	{[]string{"> approved\n\nI disagree with the above, the scope is too wide."}, Undecided, Approved, notTheirs},
	{[]string{"> LGTM\n> — @alice\n\nNot yet: the tests fail on main."}, Undecided, Approved, notTheirs},
	{[]string{"reply `approved` here once we are happy"}, Undecided, Approved, notTheirs},
	{[]string{"To approve, type ``approved`` as a comment"}, Undecided, Approved, notTheirs},
	{[]string{"```\nstatus: approved\n```\nThe front matter above is wrong."}, Undecided, Approved, notTheirs},
	{[]string{"~~~text\nlgtm\n~~~\nthat was the bot's log"}, Undecided, Approved, notTheirs},
	{[]string{"Paste from the log:\n\n    approved by ci\n\nnot mine"}, Undecided, Approved, notTheirs},
	{[]string{"<!-- approved -->\nStill reading."}, Undecided, Approved, notTheirs},
	{[]string{"~~approved~~ changes needed in the API section"}, Undecided, Approved, notTheirs},
	{[]string{"> please change the intro\n\nDone, and LGTM"}, Approved, ChangesRequested, notTheirs},
	{[]string{"The doc says \"approved\" where it means merged."}, Undecided, Approved, inQuotes},
	{[]string{"Type “ship it” to release."}, Undecided, Approved, inQuotes},
	{[]string{"> approved\n\nagreed, approved"}, Approved, Approved, agrees},
	{[]string{"- item one\n    approved by design"}, Approved, Approved, agrees},

	// Pull request reviews: the state the reviewer chose decides.
}

func TestDecideReadsEachPhrasingAsTheTableSays(t *testing.T) {
	if len(phrasings) < 80 {
		t.Fatalf("the table has %d phrasings, want at least 80", len(phrasings))
	}
	for _, c := range phrasings {
		name := strings.Join(c.bodies, " | ")
		var replies []Reply
		for _, b := range c.bodies {
			replies = append(replies, Reply{Body: b})
		}
		if got := Decide(replies).Outcome; got != c.want {
			t.Errorf("Decide(%q) = %q, want %q", name, got, c.want)
		}
		if got := Floor(c.bodies); got != c.floor {
			t.Errorf("Floor(%q) = %q, the table says %q", name, got, c.floor)
		}
		if (c.want == c.floor) != (c.why == agrees) {
			t.Errorf("%q: want %q, floor %q, but the table says why=%q", name, c.want, c.floor, c.why)
		}
	}
}

func TestAReviewDecidesByTheStateItsReviewerChose(t *testing.T) {
	for _, c := range []struct {
		name    string
		replies []Reply
		want    Outcome
	}{
		{"approved with no body", []Reply{{Review: "approved"}}, Approved},
		{"approved in REST's capitals", []Reply{{Review: "APPROVED"}}, Approved},
		{"approved with a nit", []Reply{{Review: "approved", Body: "one nit on naming"}}, ApprovedWithComments},
		{"approved, the body's words are not the decision", []Reply{{Review: "approved", Body: "not what I expected, in a good way"}}, Approved},
		{"changes requested, whatever the body says", []Reply{{Review: "changes_requested", Body: "LGTM otherwise"}}, ChangesRequested},
		{"commented is read as a comment", []Reply{{Review: "commented", Body: "lgtm"}}, Approved},
		{"commented with a question", []Reply{{Review: "commented", Body: "lgtm?"}}, Undecided},
		{"dismissed is not read", []Reply{{Review: "dismissed", Body: "approved"}}, Undecided},
		{"pending is not read", []Reply{{Review: "pending"}}, Undecided},
		{"a later negation takes a review back", []Reply{{Review: "approved"}, {Body: "not approved: the CI run was stale"}}, Undecided},
		{"a review beside a comment is with comments", []Reply{{Body: "the naming is fine"}, {Review: "approved"}}, ApprovedWithComments},
	} {
		if got := Decide(c.replies).Outcome; got != c.want {
			t.Errorf("%s: Decide = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestDecideSaysWhyAPhraseDidNotCount(t *testing.T) {
	v := Decide([]Reply{{Body: "approved? It is not lgtm, and ship it once CI passes."}})
	var got []string
	for _, m := range v.Unread {
		got = append(got, m.Phrase+": "+string(m.Why))
	}
	want := []string{"approved: a question", "lgtm: negated", "ship it: conditional"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("Unread = %q, want %q", got, want)
	}
}

func TestMentionsReadsAnyPhraseListInItsClause(t *testing.T) {
	for _, c := range []struct {
		body string
		want []Why
	}{
		{"done", []Why{Decides}},
		{"not done yet", []Why{Negated}},
		{"done?", []Why{Asked}},
		{"done once I push", []Why{Conditional}},
		{"undone", nil},
		{"`done`", nil},
		{"all done, thanks. done!", []Why{Decides, Decides}},
	} {
		var got []Why
		for _, m := range Mentions(c.body, []string{"done"}) {
			got = append(got, m.Why)
		}
		if strings.Join(whys(got), ",") != strings.Join(whys(c.want), ",") {
			t.Errorf("Mentions(%q) = %q, want %q", c.body, got, c.want)
		}
	}
}

func whys(ws []Why) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = "<" + string(w) + ">"
	}
	return out
}
