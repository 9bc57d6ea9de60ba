package inbound

import (
	"context"
	"fmt"
	"testing"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/github"
)

func TestResultIsDoneOnlyWhenEveryEffectHappened(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		name string
		res  Result
		want bool
	}{
		{"a gate answer recorded", Result{Outcome: OutcomeProcessed, Event: channels.EventGateFeedback, Mirrored: &yes}, true},
		{"a control command recorded", Result{Outcome: OutcomeProcessed, Event: channels.EventControl, Mirrored: &yes}, true},
		{"a reply recorded and delivered", Result{Outcome: OutcomeProcessed, Event: channels.EventReply, Mirrored: &yes, Delivered: &yes}, true},
		{"a gate answer not recorded", Result{Outcome: DropUnrecorded, Event: channels.EventGateFeedback, Mirrored: &no}, false},
		{"a control command not recorded", Result{Outcome: DropUnrecorded, Event: channels.EventControl, Mirrored: &no}, false},
		// Neither outcome makes these; Done does not take the word for it.
		{"processed, said recorded nowhere", Result{Outcome: OutcomeProcessed, Event: channels.EventGateFeedback}, false},
		{"processed, not recorded", Result{Outcome: OutcomeProcessed, Event: channels.EventControl, Mirrored: &no}, false},
		{"a reply delivered, not recorded", Result{Outcome: OutcomeProcessed, Event: channels.EventReply, Mirrored: &no, Delivered: &yes}, false},
		{"a reply recorded, not delivered", Result{Outcome: OutcomeProcessed, Event: channels.EventReply, Mirrored: &yes, Delivered: &no}, false},
		{"a reply recorded, delivery not tried", Result{Outcome: OutcomeProcessed, Event: channels.EventReply, Mirrored: &yes}, false},
		{"a reply neither", Result{Outcome: DropUndeliverable, Event: channels.EventReply, Mirrored: &no, Delivered: &no}, false},
		{"unmapped", Result{Outcome: DropUnmapped}, false},
		{"unauthorized", Result{Outcome: DropUnauthorized, WorkItem: workRef}, false},
		{"the zero result", Result{}, false},
	} {
		if got := tc.res.Done(); got != tc.want {
			t.Errorf("%s: Done() = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestARecordThatFailsForNowSaysHowFarTheReplyGot: the error comes with
// the event, the gate and the work item, and mirrored false, so that
// `the-loop reply` says what it was about; ProcessAgain has the ledger
// look for the record before posting it.
func TestARecordThatFailsForNowSaysHowFarTheReplyGot(t *testing.T) {
	w := newWorld(t, opts{publish: gateGrant})
	w.bind(workRef, w.checkout, "")
	ledger := &flakyLedger{errs: []error{fmt.Errorf("ledger: %w", &github.Error{Op: github.OpAddComment, Method: "POST", Status: 503})}}
	p, err := New(Config{Link: w.p.Link(), Channel: Channel{Name: channels.ChannelSlack, Enabled: true, Publish: gateGrant}, Ledger: ledger})
	if err != nil {
		t.Fatal(err)
	}
	r := channels.Reply{Channel: channels.ChannelSlack, ChannelID: slackChan, Thread: threadTS, TS: "1712345999.000200", Author: memberID, Text: "approved"}
	res, err := p.Process(context.Background(), r)
	if err == nil || !github.Transient(err) {
		t.Fatalf("got %v, want a transient error", err)
	}
	if res.Outcome != "" || res.Event != channels.EventGateFeedback || res.WorkItem != workRef || res.Gate == "" ||
		res.Mirrored == nil || *res.Mirrored || res.Done() {
		t.Errorf("the result beside the error: %+v", res)
	}
	res, err = p.ProcessAgain(context.Background(), r)
	if err != nil || !res.Done() {
		t.Fatalf("again: %+v, %v", res, err)
	}
	if len(ledger.entries) != 2 || ledger.entries[0].Retried || !ledger.entries[1].Retried {
		t.Errorf("the ledger was asked %+v; want the second attempt to look for the first's record", ledger.entries)
	}
}
