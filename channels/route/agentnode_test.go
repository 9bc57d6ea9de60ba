package route

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/the-loop/the-loop/builtins"
	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/bindings"
	"github.com/the-loop/the-loop/channels/deliver"
	"github.com/the-loop/the-loop/policy"
)

// designDone is a design.md that meets the design node's exit chain on
// the gate fixture's issue-12.
const designDone = `---
status: approved
---
# Design: rate limits on link creation

## Architecture

A token bucket per caller in front of the create handler.

## Security design

The create endpoint is the trust boundary; the abuse case is link spam
from one caller, answered with 429 and Retry-After.

## Testing strategy

One handler test per requirement, R1 and R2.
`

// atDesign is an env whose github:acme/shop#12 was started and approved
// at requirements-approval: it stands at design, an agent's node.
func atDesign(t *testing.T, cfg Config) *env {
	t.Helper()
	e := newEnv(t, "")
	if cfg.Deliver != nil {
		var err error
		e.router, err = New(Config{CLI: e.router.cli, Integration: e.in, Events: e.events, Deliver: cfg.Deliver})
		if err != nil {
			t.Fatal(err)
		}
	}
	e.bind("github:acme/shop#12", channels.CommandStart)
	out, err := e.process(newComment("d0", "acme/shop", 12, "alice", "Approved").build())
	if f := wantRouted(t, out, err); f["to"] != "design" {
		t.Fatalf("the approval did not reach design: %v", f)
	}
	e.events.records, e.in.calls = nil, nil
	return e
}

func inbox(t *testing.T, e *env, ref string) []deliver.Message {
	t.Helper()
	r, _ := channels.ParseRef(ref)
	msgs, err := deliver.ReadInbox(e.router.cli.StateRoot(), r)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// The original's graph_drive_integration::an_ordinary_event_is_delivered_
// then_advanced: at an agent's node, a comment is delivered first, then
// the node advanced, and it moves when its work is met.
func TestAnOrdinaryCommentIsDeliveredThenTheNodeAdvanced(t *testing.T) {
	var order []string
	var e *env
	e = atDesign(t, Config{Deliver: func(ctx context.Context, b bindings.Binding, m deliver.Message) (deliver.Result, error) {
		order = append(order, "deliver at "+e.state("docs/specs/issue-12/graph-state.json").CurrentNode)
		return deliver.Deliver(ctx, e.router.cli.StateRoot(), b, m)
	}})
	writeFile(t, filepath.Join(e.checkout, "docs/specs/issue-12/design.md"), designDone)
	d := newComment("d1", "acme/shop", 12, "alice", "The design is written up.")
	out, err := e.process(d.build())
	f := wantRouted(t, out, err)
	if f["delivery"] != deliver.TargetInbox || f["node"] != "design" || f["status"] != "pass" || f["to"] == nil || f["to"] == "design" {
		t.Errorf("fields = %v", f)
	}
	if got := e.state("docs/specs/issue-12/graph-state.json").CurrentNode; got != f["to"] {
		t.Errorf("currentNode = %s, want %v", got, f["to"])
	}
	if !slices.Equal(order, []string{"deliver at design"}) {
		t.Errorf("order = %v, want the delivery before the advance", order)
	}
	msgs := inbox(t, e, "github:acme/shop#12")
	id := strconv.FormatInt(int64(d.p["comment"].(map[string]any)["id"].(int64)), 10)
	if len(msgs) != 1 || msgs[0].Text != "The design is written up." || msgs[0].Channel != policy.ChannelGitHub ||
		msgs[0].Author != "alice" || msgs[0].TS != id || msgs[0].Thread != "github:acme/shop#12" {
		t.Errorf("inbox = %+v", msgs)
	}
	if rec, ok := e.events.find("channel.delivered"); !ok || rec.Fields["target"] != deliver.TargetInbox || rec.Fields["channel"] != "github" {
		t.Errorf("channel.delivered = %+v", rec)
	}
	if got := e.in.reactions(); !slices.Equal(got, []string{"eyes", "hooray"}) {
		t.Errorf("reactions = %v", got)
	}
	// a replay of it is refused: it was acted on
	out, err = e.process(d.build())
	wantDropped(t, out, err, DropReplayed)
	if len(inbox(t, e, "github:acme/shop#12")) != 1 {
		t.Error("a replay was delivered again")
	}
}

func TestAnOrdinaryCommentWhoseWorkIsNotMetLeavesTheNode(t *testing.T) {
	e := atDesign(t, Config{})
	out, err := e.process(newComment("d1", "acme/shop", 12, "alice", "How is the design going?").build())
	f := wantRouted(t, out, err)
	if f["delivery"] != deliver.TargetInbox || f["node"] != "design" || f["status"] != "block" || f["to"] != nil {
		t.Errorf("fields = %v", f)
	}
	st := e.state("docs/specs/issue-12/graph-state.json")
	if st.CurrentNode != "design" || st.Nodes["design"].LastBlock == "" {
		t.Errorf("state: at %s, lastBlock %q", st.CurrentNode, st.Nodes["design"].LastBlock)
	}
	if len(inbox(t, e, "github:acme/shop#12")) != 1 {
		t.Error("the comment was not delivered")
	}
	if got := e.in.reactions(); !slices.Equal(got, []string{"eyes"}) {
		t.Errorf("reactions = %v", got)
	}
}

// As the original's runtime has it: each comment at an agent's node whose
// work is unmet runs its exit chain, and the second with the same finding
// escalates; the pointer stays and both comments are delivered.
func TestASecondCommentWithTheSameFindingEscalatesAndMovesNothing(t *testing.T) {
	e := atDesign(t, Config{})
	before := e.state("docs/specs/issue-12/graph-state.json")
	out, err := e.process(newComment("d1", "acme/shop", 12, "alice", "How is the design going?").build())
	if f := wantRouted(t, out, err); f["status"] != "block" {
		t.Fatalf("first comment: fields = %v, want a block", f)
	}
	first := e.state("docs/specs/issue-12/graph-state.json").Nodes["design"].LastBlock
	out, err = e.process(newComment("d2", "acme/shop", 12, "alice", "Any news on the design?").build())
	f := wantRouted(t, out, err)
	if f["status"] != "escalated" || f["node"] != "design" || f["to"] != nil {
		t.Errorf("second comment: fields = %v, want escalated at design", f)
	}
	st := e.state("docs/specs/issue-12/graph-state.json")
	if st.CurrentNode != "design" || st.CurrentNode != before.CurrentNode {
		t.Errorf("currentNode = %s, want design", st.CurrentNode)
	}
	if st.Nodes["design"].LastBlock != first {
		t.Errorf("lastBlock = %q, want the first finding %q", st.Nodes["design"].LastBlock, first)
	}
	if n := len(inbox(t, e, "github:acme/shop#12")); n != 2 {
		t.Errorf("%d comments delivered, want 2", n)
	}
}

// Delivery fails open: a target that cannot be reached is logged and
// recorded, and the node is advanced all the same.
func TestADeliveryThatFailsDoesNotStopTheAdvance(t *testing.T) {
	e := atDesign(t, Config{Deliver: func(context.Context, bindings.Binding, deliver.Message) (deliver.Result, error) {
		return deliver.Result{}, &deliver.StatusError{URL: "https://hooks.example", Code: 502, Status: "502 Bad Gateway"}
	}})
	writeFile(t, filepath.Join(e.checkout, "docs/specs/issue-12/design.md"), designDone)
	out, err := e.process(newComment("d1", "acme/shop", 12, "alice", "Done.").build())
	f := wantRouted(t, out, err)
	if f["delivery"] != DeliveryFailed || f["delivery_error"] == nil || f["to"] == nil {
		t.Errorf("fields = %v", f)
	}
	if got := e.state("docs/specs/issue-12/graph-state.json").CurrentNode; got == "design" {
		t.Error("a failed delivery stopped the advance")
	}
	if rec, ok := e.events.find("channel.dropped"); !ok || rec.Fields["reason"] != "undeliverable" || rec.Fields["channel"] != "github" {
		t.Errorf("channel.dropped = %+v", rec)
	}
	if got := e.in.reactions(); !slices.Contains(got, "confused") || !slices.Contains(got, "hooray") {
		t.Errorf("reactions = %v", got)
	}
}

// Advancement fails closed: a fault after the delivery leaves the state
// as it was, is logged and recorded, and is an error, so that the delivery
// is tried again; tried again, it is delivered again and advances.
func TestAnAdvanceThatFaultsFailsClosedAfterTheDelivery(t *testing.T) {
	const broken = `{"version": 1, "currentNode": 12}`
	var e *env
	var good string
	faulty := true
	e = atDesign(t, Config{Deliver: func(ctx context.Context, b bindings.Binding, m deliver.Message) (deliver.Result, error) {
		if faulty {
			// the state is damaged between the delivery and the advance
			good = e.read("docs/specs/issue-12/graph-state.json")
			writeFile(t, filepath.Join(e.checkout, "docs/specs/issue-12/graph-state.json"), broken)
		}
		return deliver.Deliver(ctx, e.router.cli.StateRoot(), b, m)
	}})
	writeFile(t, filepath.Join(e.checkout, "docs/specs/issue-12/design.md"), designDone)
	d := newComment("d1", "acme/shop", 12, "alice", "Done.")
	out, err := e.process(d.build())
	if err == nil {
		t.Fatalf("a fault on the advance was not an error: %+v", out)
	}
	if e.read("docs/specs/issue-12/graph-state.json") != broken {
		t.Error("the damaged state was rewritten")
	}
	if rec, ok := e.events.find("graph.link_failed"); !ok || rec.Fields["action"] != "advance" {
		t.Errorf("graph.link_failed = %+v", rec)
	}
	if e.binding("github:acme/shop#12").HasActed(d.p["comment"].(map[string]any)["id"].(int64)) {
		t.Error("a comment whose advance failed was recorded as acted on: its retry would be refused")
	}
	// the retry, the state repaired
	faulty = false
	writeFile(t, filepath.Join(e.checkout, "docs/specs/issue-12/graph-state.json"), good)
	out, err = e.process(d.build())
	if f := wantRouted(t, out, err); f["to"] == nil {
		t.Errorf("retry: fields = %v", f)
	}
	if n := len(inbox(t, e, "github:acme/shop#12")); n != 2 {
		t.Errorf("inbox holds %d messages, want the comment twice (at least once)", n)
	}
}

// A chat reply the ledger recorded on the issue was delivered by its
// channel when it was recorded: its echo is not delivered again, though
// the node is advanced with it.
func TestALedgerRecordOfAChatReplyIsNotDeliveredTwice(t *testing.T) {
	e := atDesign(t, Config{})
	record := builtins.StampEnvelope("💬 **the-loop** recorded a reply from `slack:U1`:\n\n> how is it going?",
		builtins.Envelope{Type: channels.EventReply, Source: "slack", Actor: map[string]string{"slack": "U1"}})
	out, err := e.process(newComment("d1", "acme/shop", 12, "alice", record).build())
	f := wantRouted(t, out, err)
	if f["delivery"] != DeliveryRelayed || f["status"] != "block" {
		t.Errorf("fields = %v", f)
	}
	if n := len(inbox(t, e, "github:acme/shop#12")); n != 0 {
		t.Errorf("inbox holds %d messages", n)
	}
	// a relayed gate answer that arrives after the gate moved is the
	// person's words, delivered as such
	answer := builtins.StampEnvelope("💬 **the-loop** recorded an answer to the open gate from `slack:U1`:\n\n> approved",
		builtins.Envelope{Type: channels.EventGateFeedback, Source: "slack", Actor: map[string]string{"slack": "U1"}})
	out, err = e.process(newComment("d2", "acme/shop", 12, "alice", answer).build())
	wantRouted(t, out, err)
	if msgs := inbox(t, e, "github:acme/shop#12"); len(msgs) != 1 || msgs[0].Text != "approved" {
		t.Errorf("inbox = %+v", msgs)
	}
}

// The comment that enters a loop at an agent's node is delivered, and the
// node just entered is not judged on it.
func TestTheCommentThatEntersAnAgentsNodeIsDeliveredNotJudged(t *testing.T) {
	e := newEnv(t, "routing:\n  authorizedUsers: [alice]\n  control:\n    requireStartCommand: false\n")
	e.bind("github:acme/shop#7", "")
	writeFile(t, filepath.Join(e.checkout, "docs/specs/issue-7/graph-state.json"),
		`{"version": 1, "workItem": "issue-7", "currentNode": "", "loop": "pdlc-adhoc-loop"}`)
	out, err := e.process(newComment("d1", "acme/shop", 7, "alice", "Please rename the flag.").build())
	f := wantRouted(t, out, err)
	if f["entered"] == nil || f["delivery"] != deliver.TargetInbox || f["status"] != nil {
		t.Errorf("fields = %v", f)
	}
	st := e.state("docs/specs/issue-7/graph-state.json")
	if rec := st.Nodes[st.CurrentNode]; rec == nil || rec.LastBlock != "" {
		t.Errorf("the node just entered was judged: %+v", rec)
	}
}

func TestACommentOnAFinishedLoopIsDeliveredOnly(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", channels.CommandStart)
	const last = "complete" // the agent's terminal node
	if g, err := policy.Loop("pdlc-work-item-loop"); err != nil {
		t.Fatal(err)
	} else if n, err := g.Node(last); err != nil || !n.Terminal {
		t.Fatalf("%s: %+v %v", last, n, err)
	}
	writeFile(t, filepath.Join(e.checkout, "docs/specs/issue-12/graph-state.json"),
		`{"version": 1, "workItem": "issue-12", "currentNode": "`+last+`", "nodes": {"`+last+`": {"enteredAt": "2026-05-01T09:00:00+00:00"}}, "loop": "pdlc-work-item-loop"}`)
	before := e.read("docs/specs/issue-12/graph-state.json")
	out, err := e.process(newComment("d1", "acme/shop", 12, "alice", "Thanks all.").build())
	f := wantRouted(t, out, err)
	if f["delivery"] != deliver.TargetInbox || f["node"] != last || f["status"] != "done" {
		t.Errorf("fields = %v", f)
	}
	if e.read("docs/specs/issue-12/graph-state.json") != before {
		t.Error("a finished loop was advanced")
	}
}

// Nothing on the way to an agent's node is weakened: a held, foreign or
// stale item is dropped before anything is delivered.
func TestAnAgentsNodeHearsOnlyWhatTheGuardsLetThrough(t *testing.T) {
	e := atDesign(t, Config{Deliver: func(context.Context, bindings.Binding, deliver.Message) (deliver.Result, error) {
		return deliver.Result{}, errors.New("must not be called")
	}})
	if _, err := e.bindings.Record(mustRef(t, "github:acme/shop#12"), bindings.Control{Command: channels.CommandPause, Actor: "alice"}); err != nil {
		t.Fatal(err)
	}
	out, err := e.process(newComment("d1", "acme/shop", 12, "alice", "hello").build())
	wantDropped(t, out, err, DropPaused)
	if _, ok := e.events.find("channel.dropped"); ok {
		t.Error("a held item's comment was delivered")
	}
}

func mustRef(t *testing.T, s string) channels.Ref {
	t.Helper()
	r, err := channels.ParseRef(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A comment on a pull request that delivers the work item, at its inner
// loop's agent node, is delivered as the work item's message (its thread
// the pull request) and advances that inner loop, never the outer one.
func TestAPullRequestCommentAtItsInnerAgentNodeIsDeliveredThenAdvancesThatLoop(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", channels.CommandStart)
	out, err := e.process(newComment("d1", "acme/shop", 30, "alice", "first look").onPR("Closes #12").build())
	if f := wantRouted(t, out, err); f["entered"] != "implementation" || f["delivery"] != deliver.TargetInbox || f["status"] != nil {
		t.Fatalf("entering: fields = %v", f)
	}
	out, err = e.process(newComment("d2", "acme/shop", 30, "alice", "any progress?").onPR("Closes #12").build())
	f := wantRouted(t, out, err)
	if f["pull_request"] != "github:acme/shop#30" || f["node"] != "implementation" || f["status"] == nil || f["delivery"] != deliver.TargetInbox {
		t.Errorf("fields = %v", f)
	}
	if st := e.state("docs/specs/issue-12/graph-state.json"); st.CurrentNode != "requirements-approval" {
		t.Errorf("the outer loop moved to %s", st.CurrentNode)
	}
	msgs := inbox(t, e, "github:acme/shop#12")
	if len(msgs) != 2 || msgs[1].Thread != "github:acme/shop#30" || msgs[1].Ref != "github:acme/shop#12" || msgs[1].Text != "any progress?" {
		t.Errorf("inbox = %+v", msgs)
	}
}

// A delivery cut short because the server is stopping is not the target's
// failure: nothing is advanced, and the delivery is kept for a retry.
func TestADeliveryCutShortByShutdownAdvancesNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	e := atDesign(t, Config{Deliver: func(ctx context.Context, b bindings.Binding, m deliver.Message) (deliver.Result, error) {
		cancel()
		return deliver.Result{}, ctx.Err()
	}})
	writeFile(t, filepath.Join(e.checkout, "docs/specs/issue-12/design.md"), designDone)
	before := e.read("docs/specs/issue-12/graph-state.json")
	d := newComment("d1", "acme/shop", 12, "alice", "Done.")
	_, err := e.router.Process(ctx, d.build())
	e.router.WaitReactions(time.Minute)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want the context's error", err)
	}
	if e.read("docs/specs/issue-12/graph-state.json") != before {
		t.Error("the node was advanced")
	}
	if e.binding("github:acme/shop#12").HasActed(d.p["comment"].(map[string]any)["id"].(int64)) {
		t.Error("the comment was recorded as acted on")
	}
}
