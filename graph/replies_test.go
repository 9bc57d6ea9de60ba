package graph

import (
	"errors"
	"testing"
	"time"
)

// at is 2026-03-09 at hh:mm UTC.
func at(hh, mm int) time.Time { return time.Date(2026, 3, 9, hh, mm, 0, 0, time.UTC) }

func reply(body string, when time.Time) Reply {
	return Reply{Comment: Comment{Author: "alice", Body: body}, At: when}
}

// walked is a state in which the item left select at 10:05 and draft at
// 10:20, and has been at review since.
func walked() *State {
	st := NewState("item")
	st.CurrentNode = "review"
	st.Record("select").ExitedAt = Timestamp(at(10, 5))
	st.Record("draft").EnteredAt = Timestamp(at(10, 5))
	st.Record("draft").ExitedAt = Timestamp(at(10, 20))
	st.Record("review").EnteredAt = Timestamp(at(10, 20))
	return st
}

func statusWithReplies(t *testing.T, st *State, replies ...Reply) (*StatusReport, int) {
	t.Helper()
	rt, _ := newRuntime(t)
	calls := 0
	rt.Replies = func(item WorkItem) ([]Reply, error) {
		calls++
		if item.ID != "item" {
			t.Errorf("replies read for %q", item.ID)
		}
		return replies, nil
	}
	rep, err := rt.StatusWith("item", st, false)
	if err != nil {
		t.Fatal(err)
	}
	return rep, calls
}

func nodeReport(rep *StatusReport, id string) NodeReport {
	for _, n := range rep.Nodes {
		if n.Node == id {
			return n
		}
	}
	return NodeReport{}
}

func TestStatusHandsEachGateTheRepliesPostedWhileItWasOpen(t *testing.T) {
	rep, calls := statusWithReplies(t, walked(),
		reply("selected", at(10, 4)),
		reply("approved", at(10, 10)), // at draft: answered nothing
		reply("changes-requested", at(10, 31)),
	)
	if calls != 1 {
		t.Errorf("the thread was read %d times, want once per item", calls)
	}
	if n := nodeReport(rep, "select"); n.Status != "pass" || n.Outcome != "selected" {
		t.Errorf("select: %+v, want the reply posted while it was open", n)
	}
	// The reply after it was entered, not the one before; and since it
	// sends the item back, the gate is not met.
	if n := nodeReport(rep, "review"); n.Status != "block" || n.Outcome != "changes-requested" || n.Messages[0] != "review was answered changes-requested: the item goes back to draft" {
		t.Errorf("review: %+v, want a block saying the item goes back", n)
	}
	if rep.OK || !rep.Blocked() {
		t.Error("a gate that sent the item back is reported met")
	}
}

// The state is the checkout's: a change under review can draw whatever
// windows it likes. However they overlap, one reply answers one gate.
func TestOneReplyAnswersOneGateWhateverWindowsTheStateDraws(t *testing.T) {
	st := walked()
	st.CurrentNode = "build"
	for _, id := range []string{"select", "draft", "review"} {
		st.Record(id).EnteredAt = Timestamp(at(9, 0))
		st.Record(id).ExitedAt = Timestamp(at(23, 0))
	}
	// select passes on the replies it is handed, and they are spent: the
	// approval in its window does not pass review too.
	rep, _ := statusWithReplies(t, st, reply("selected", at(10, 0)), reply("approved", at(10, 1)))
	if n := nodeReport(rep, "select"); n.Status != "pass" {
		t.Errorf("select: %+v, want the first reply", n)
	}
	if n := nodeReport(rep, "review"); n.Status != "wait" {
		t.Errorf("review: %+v, want wait: the replies select passed on are spent", n)
	}
	// A gate that waits spends nothing.
	st.Record("select").EnteredAt = Timestamp(at(11, 0))
	later, _ := statusWithReplies(t, st, reply("approved", at(10, 1)))
	if n := nodeReport(later, "review"); n.Status != "pass" || n.Outcome != "approved" {
		t.Errorf("review: %+v, want the approval no gate before it passed on", n)
	}
}

func TestAReplyToAnEarlierGateDoesNotPassALaterOne(t *testing.T) {
	rep, _ := statusWithReplies(t, walked(), reply("approved", at(10, 10)), reply("approved", at(9, 0)))
	if n := nodeReport(rep, "review"); n.Status != "wait" {
		t.Errorf("review: %+v, want wait: no reply since it was entered", n)
	}
	if rep.OK {
		t.Error("the report is OK with the gate it is at still waiting")
	}
}

func TestAGateEnteredAgainReadsOnlyTheRepliesSinceItsLastExit(t *testing.T) {
	st := walked()
	st.Record("review").ExitedAt = Timestamp(at(10, 40)) // sent back to draft, then entered again
	rep, _ := statusWithReplies(t, st, reply("changes-requested", at(10, 35)), reply("approved", at(10, 40)))
	if n := nodeReport(rep, "review"); n.Status != "wait" {
		t.Errorf("review: %+v, want wait: both replies answered the first visit", n)
	}
	rep, _ = statusWithReplies(t, st, reply("changes-requested", at(10, 35)), reply("approved", at(10, 50)))
	if n := nodeReport(rep, "review"); n.Outcome != "approved" {
		t.Errorf("review: %+v, want the reply to the second visit", n)
	}
}

func TestALeftGateReadsItsWholeVisitAndAnUnenteredNodeNone(t *testing.T) {
	st := walked()
	st.CurrentNode = "build"
	st.Record("review").ExitedAt = Timestamp(at(11, 0))
	st.Record("build").EnteredAt = Timestamp(at(11, 0))
	rep, _ := statusWithReplies(t, st, reply("approved", at(10, 20)), reply("lgtm", at(11, 0)), reply("late", at(11, 1)))
	if n := nodeReport(rep, "review"); n.Outcome != "approved" {
		t.Errorf("review: %+v, want its window [entered, exited] inclusive", n)
	}
	st.CurrentNode = "draft"
	delete(st.Nodes, "review")
	rep, _ = statusWithReplies(t, st, reply("approved", at(10, 30)))
	if n := nodeReport(rep, "review"); n.Status != "wait" {
		t.Errorf("review never entered: %+v, want wait", n)
	}
}

func TestTheStartNodeOfAnItemThatNeverEnteredReadsTheWholeThread(t *testing.T) {
	rep, _ := statusWithReplies(t, NewState("item"), reply("selected", at(1, 0)), Reply{Comment: Comment{Body: "undated"}})
	if n := nodeReport(rep, "select"); n.Outcome != "selected" {
		t.Errorf("select: %+v", n)
	}
	rep, _ = statusWithReplies(t, NewState("item"), Reply{Comment: Comment{Body: "selected"}})
	if n := nodeReport(rep, "select"); n.Status != "wait" {
		t.Errorf("an undated reply was placed: %+v", n)
	}
}

func TestStatusReadsNoRepliesUnderRecomputeAndFailsWithTheSource(t *testing.T) {
	rt, _ := newRuntime(t)
	calls := 0
	rt.Replies = func(WorkItem) ([]Reply, error) { calls++; return nil, errors.New("offline") }
	if _, err := rt.StatusWith("item", walked(), true); err != nil || calls != 0 {
		t.Errorf("recompute: err %v, %d reads; the state's timeline is ignored, so no replies", err, calls)
	}
	if _, err := rt.StatusWith("item", walked(), false); err == nil || err.Error() != "offline" {
		t.Errorf("got %v, want the source's error", err)
	}
}

// A reply edited after its gate moved on is not the reply the gate read:
// a gate the item has left is not handed it, whatever it says now; the
// gate the item stands at reads an edit as it stands.
func TestALeftGateIsNotHandedAReplyEditedAfterItMoved(t *testing.T) {
	st := walked()
	st.CurrentNode = "build"
	st.Record("review").ExitedAt = Timestamp(at(11, 0))
	st.Record("build").EnteredAt = Timestamp(at(11, 0))
	edited := func(body string, when time.Time) Reply {
		r := reply(body, at(10, 20))
		r.Edited = when
		return r
	}
	rep, _ := statusWithReplies(t, st, edited("approved", at(10, 30)))
	if n := nodeReport(rep, "review"); n.Outcome != "approved" {
		t.Errorf("edited while open: %+v, want read", n)
	}
	rep, _ = statusWithReplies(t, st, edited("changes-requested", at(11, 5)))
	if n := nodeReport(rep, "review"); n.Status != "wait" {
		t.Errorf("edited after the gate moved: %+v, want not read", n)
	}
	st.CurrentNode = "review"
	st.Record("review").ExitedAt = ""
	rep, _ = statusWithReplies(t, st, edited("approved", at(11, 5)))
	if n := nodeReport(rep, "review"); n.Outcome != "approved" {
		t.Errorf("edited at the gate the item stands at: %+v, want read", n)
	}
}

// approvedReview is walked() moved on from review, which the state says
// alice approved at 10:30.
func approvedReview() *State {
	st := walked()
	st.CurrentNode = "build"
	st.Record("review").ExitedAt = Timestamp(at(10, 30))
	st.Record("review").Outcome = "approved"
	st.Record("review").By = "alice"
	return st
}

func TestAGateThatReadNoRepliesIsHandedTheApprovalTheStateRecords(t *testing.T) {
	const recorded = `recorded approved by "alice" at 2026-03-09T10:30:00Z`
	cases := []struct {
		name    string
		replies ReplySource
		want    string
	}{
		{"no reply source", nil, recorded},
		{"the source did not read them", func(WorkItem) ([]Reply, error) { return nil, ErrRepliesUnread }, recorded},
		{"the source read none", func(WorkItem) ([]Reply, error) { return nil, nil }, "no authorized feedback yet"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rt, _ := newRuntime(t)
			rt.Replies = c.replies
			rep, err := rt.StatusWith("item", approvedReview(), false)
			if err != nil {
				t.Fatal(err)
			}
			if n := nodeReport(rep, "review"); n.Status != "wait" || len(n.Messages) == 0 || n.Messages[0] != c.want {
				t.Errorf("review: %+v, want a wait saying %q", n, c.want)
			}
		})
	}
}

func TestARecordedApprovalIsNotHandedToTheGateTheItemIsAt(t *testing.T) {
	rt, _ := newRuntime(t)
	st := approvedReview()
	st.CurrentNode = "review" // sent back and entered again: the approval was an earlier visit's
	rep, err := rt.StatusWith("item", st, false)
	if err != nil {
		t.Fatal(err)
	}
	if n := nodeReport(rep, "review"); n.Messages[0] != "no authorized feedback yet" {
		t.Errorf("review: %+v, want no recorded approval at the gate the item is at", n)
	}
	rep, err = rt.StatusWith("item", approvedReview(), true)
	if err != nil {
		t.Fatal(err)
	}
	if n := nodeReport(rep, "review"); n.Messages[0] != "no authorized feedback yet" {
		t.Errorf("review under recompute: %+v, want the state ignored", n)
	}
}

func TestAdvanceRecordsWhoAnsweredAHumanGate(t *testing.T) {
	rt, _ := newRuntime(t)
	if _, err := rt.Start("item"); err != nil {
		t.Fatal(err)
	}
	if s, err := rt.Advance("item", &Event{Comments: []Comment{{Author: "@Alice", Body: "selected"}}}); err != nil || s.To != "draft" {
		t.Fatalf("selected: %+v, %v", s, err)
	}
	st, err := LoadState(rt.Checkout, "docs/specs/item", "item")
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Nodes["select"].By; got != "Alice" {
		t.Errorf("select by %q, want Alice", got)
	}
	if got := st.Nodes["draft"].By; got != "" {
		t.Errorf("draft, an agent's node, by %q, want none", got)
	}
}
