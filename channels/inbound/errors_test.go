package inbound

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/bindings"
	"github.com/the-loop/the-loop/channels/deliver"
	"github.com/the-loop/the-loop/channels/github"
	"github.com/the-loop/the-loop/channels/slack/slacktest"
)

// The seed's error table, row by row, and the drops before
// classification.

// TestALedgerThatRefusesARecordLeavesTheReplyUnmirrored: a record GitHub
// refuses (not "try later") is channel.mirror_failed; a gate answer,
// whose record is its request, is then dropped as unrecorded, and a reply
// is still delivered.
func TestALedgerThatRefusesARecordLeavesTheReplyUnmirrored(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setup   func(w *world)
		kind    string
		outcome string
		deliver bool
	}{
		{"a gate answer", func(w *world) { w.bind(workRef, w.checkout, "") }, channels.EventGateFeedback, DropUnrecorded, false},
		{"a reply", func(w *world) { w.bind(workRef, w.checkout, ""); w.setState("design") }, channels.EventReply, OutcomeProcessed, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, opts{publish: gateGrant})
			tc.setup(w)
			w.ledger.fail = &github.Error{Op: github.OpAddComment, Method: "POST", Status: 404, Msg: "no such issue"}
			res, err := w.say(memberID, "approved")
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != tc.outcome || res.Event != tc.kind || res.Mirrored == nil || *res.Mirrored || !strings.Contains(res.Error, "404") {
				t.Fatalf("got %+v", res)
			}
			if f := w.events.named("channel.mirror_failed"); len(f) != 1 || !strings.Contains(f[0]["error"].(string), "404") || f[0]["retry"] != false {
				t.Errorf("channel.mirror_failed = %v", f)
			}
			if got := len(w.inbox()) == 1; got != tc.deliver {
				t.Errorf("delivered = %v, want %v", got, tc.deliver)
			}
		})
	}
}

// flakyLedger fails with errs, one a call, then records; it keeps every
// entry it was given.
type flakyLedger struct {
	mu      sync.Mutex
	errs    []error
	entries []github.Entry
}

func (f *flakyLedger) Record(_ context.Context, e github.Entry) (github.Recorded, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.entries = append(f.entries, e)
	if len(f.errs) > 0 {
		err := f.errs[0]
		f.errs = f.errs[1:]
		return github.Recorded{}, err
	}
	return github.Recorded{CommentID: 1, Found: e.Retried}, nil
}

// TestALedgerThatFailsForNowLeavesTheDeliveryToBeProcessedAgain: a record
// GitHub failed transiently to take (a 502 the ledger's own retries did
// not outlast) is an error: nothing is delivered or acknowledged as done,
// and the queue processes the event again. Then the ledger is told the
// record may be there already, under the message's id, and the reply goes
// on, acknowledged as received once.
func TestALedgerThatFailsForNowLeavesTheDeliveryToBeProcessedAgain(t *testing.T) {
	for _, tc := range []struct {
		name  string
		state string
		kind  string
		inbox int
	}{
		{"a gate answer", "", channels.EventGateFeedback, 0},
		{"a reply", "design", channels.EventReply, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, opts{publish: gateGrant})
			w.bind(workRef, w.checkout, "")
			if tc.state != "" {
				w.setState(tc.state)
			}
			ledger := &flakyLedger{errs: []error{fmt.Errorf("ledger: %w", &github.Error{Op: github.OpAddComment, Method: "POST", Status: 502})}}
			var acks []string
			p, err := New(Config{Link: w.p.Link(), Channel: Channel{Name: channels.ChannelSlack, Enabled: true, Publish: gateGrant},
				Ledger: ledger, Events: w.events, Ack: func(_ channels.Reply, m string) { acks = append(acks, m) },
				Deliver: func(ctx context.Context, b bindings.Binding, m deliver.Message) (deliver.Result, error) {
					return deliver.Deliver(ctx, w.state, b, m)
				}})
			if err != nil {
				t.Fatal(err)
			}
			proc := Processor{Pipeline: p}
			d := slackDelivery("Ev1", slacktest.Message{Channel: slackChan, User: memberID, Text: "approved", TS: "1712345999.000200", ThreadTS: threadTS})
			if out, err := proc.Process(context.Background(), d); err == nil || !github.Transient(err) {
				t.Fatalf("a record GitHub failed for now: %+v, %v; want a transient error", out, err)
			}
			if f := w.events.named("channel.mirror_failed"); len(f) != 1 || f[0]["retry"] != true {
				t.Errorf("channel.mirror_failed = %v, want one saying it will be retried", f)
			}
			if n := len(w.inbox()); n != 0 || !slices.Equal(acks, []string{AckReceived}) {
				t.Fatalf("after the failure: %d delivered, acknowledged %v; want nothing delivered, received alone", n, acks)
			}
			d.Retries = 1
			out, err := proc.Process(context.Background(), d)
			if err != nil || !out.Routed || out.Fields["kind"] != tc.kind || out.Fields["mirrored"] != true {
				t.Fatalf("processed again: %+v, %v; want routed and mirrored", out, err)
			}
			if len(ledger.entries) != 2 || ledger.entries[0].Retried || !ledger.entries[1].Retried ||
				ledger.entries[0].ID != "slack:"+slackChan+":1712345999.000200" || ledger.entries[1].ID != ledger.entries[0].ID {
				t.Errorf("entries %+v, want the same id twice, the second retried", ledger.entries)
			}
			if m := w.events.named("channel.mirrored"); len(m) != 1 || m[0]["found"] != true {
				t.Errorf("channel.mirrored = %v, want one saying the record was found", m)
			}
			if n := len(w.inbox()); n != tc.inbox || !slices.Equal(acks, []string{AckReceived, AckCompleted}) {
				t.Errorf("%d delivered, acknowledged %v; want %d, received then completed", n, acks, tc.inbox)
			}
		})
	}
}

// TestBindingsThatCannotBeReadStopThePipelineBeforeAnythingIsRecorded:
// the thread is mapped and the graph read through one store, so an
// unreadable one fails the reply (to be tried again) rather than guess;
// the reader alone says unknown.
func TestBindingsThatCannotBeReadStopThePipelineBeforeAnythingIsRecorded(t *testing.T) {
	w := newWorld(t, opts{publish: gateGrant})
	w.bind(workRef, w.checkout, "")
	if err := os.WriteFile(w.store.Path(), []byte(`{"version": 1, "bindings": [{"ref": "github:no such ref", "repo": "/x"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := w.say(memberID, "approved")
	var corrupt *bindings.CorruptError
	if !errors.As(err, &corrupt) {
		t.Fatalf("got %v, want the store's CorruptError", err)
	}
	if len(w.ledger.bodies()) != 0 {
		t.Error("a reply was recorded though its thread could not be mapped")
	}
	if read := w.p.Link().Gate(mustRef(t, workRef)); read.Gate != channels.GateUnknown || !strings.Contains(read.Why, "bindings") {
		t.Errorf("read %+v, want unknown because of the bindings", read)
	}
}

// TestAReplyThatCannotBeDeliveredIsStillRecorded: the record already
// carries it; the delivery's failure is channel.dropped undeliverable.
func TestAReplyThatCannotBeDeliveredIsStillRecorded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	defer srv.Close()
	w := newWorld(t, opts{publish: gateGrant})
	w.bind(workRef, w.checkout, "")
	w.setState("design")
	if _, err := w.store.Set(mustRef(t, workRef), bindings.Options{Deliver: &bindings.Target{URL: srv.URL + "/session"}}); err != nil {
		t.Fatal(err)
	}
	res, err := w.say(memberID, "use option B")
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != OutcomeProcessed || res.Mirrored == nil || !*res.Mirrored || res.Delivered == nil || *res.Delivered || !strings.Contains(res.Error, "deliver") {
		t.Fatalf("got %+v", res)
	}
	if d := w.events.named("channel.dropped"); len(d) != 1 || d[0]["reason"] != DropUndeliverable {
		t.Errorf("channel.dropped = %v", d)
	}
}

// TestAReplyNeitherRecordedNorDeliveredIsNotProcessed: a reply the ledger
// refused and the session could not be handed reached nobody, so it is
// not routed.
func TestAReplyNeitherRecordedNorDeliveredIsNotProcessed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	defer srv.Close()
	w := newWorld(t, opts{publish: gateGrant})
	w.bind(workRef, w.checkout, "")
	w.setState("design")
	if _, err := w.store.Set(mustRef(t, workRef), bindings.Options{Deliver: &bindings.Target{URL: srv.URL + "/session"}}); err != nil {
		t.Fatal(err)
	}
	w.ledger.fail = &github.Error{Op: github.OpAddComment, Method: "POST", Status: 403, Msg: "Resource not accessible"}
	res, err := w.say(memberID, "use option B")
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != DropUndeliverable || *res.Mirrored || *res.Delivered || !strings.Contains(res.Error, "record") || !strings.Contains(res.Error, "deliver") {
		t.Fatalf("got %+v, want undeliverable, neither mirrored nor delivered", res)
	}
}

func TestWhatIsDroppedBeforeClassification(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reply  func(r *channels.Reply)
		grant  []string
		bind   bool
		reason string
	}{
		{"an unbound thread", func(r *channels.Reply) {}, gateGrant, false, DropUnmapped},
		{"another thread", func(r *channels.Reply) { r.Thread = "1712345678.999999" }, gateGrant, true, DropUnmapped},
		{"a bot, the-loop's own included", func(r *channels.Reply) { r.Bot = true }, gateGrant, true, DropSelfAuthored},
		{"a top-level message", func(r *channels.Reply) { r.TopLevel = true }, gateGrant, true, DropUnpublishable},
		{"a top-level message where work items may be opened", func(r *channels.Reply) { r.TopLevel = true },
			[]string{channels.EventCreate}, true, DropKickoffDisabled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, opts{publish: tc.grant})
			if tc.bind {
				w.bind(workRef, w.checkout, "")
			}
			r := channels.Reply{Channel: channels.ChannelSlack, ChannelID: slackChan, Thread: threadTS, TS: "1.2", Author: memberID, Text: "approved"}
			tc.reply(&r)
			res, err := w.p.Process(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != tc.reason {
				t.Fatalf("got %+v, want %s", res, tc.reason)
			}
			if len(w.ledger.bodies()) != 0 || len(w.events.named("channel.reply_received")) != 0 {
				t.Error("a dropped reply was classified or recorded")
			}
			if d := w.events.named("channel.dropped"); len(d) != 1 || d[0]["reason"] != tc.reason {
				t.Errorf("channel.dropped = %v", d)
			}
		})
	}
}

func TestADisabledChannelTakesNothingIn(t *testing.T) {
	w := newWorld(t, opts{publish: gateGrant})
	w.bind(workRef, w.checkout, "")
	w.p.cfg.Channel.Enabled = false
	if res, _ := w.say(memberID, "approved"); res.Outcome != DropChannelDisabled || len(w.ledger.bodies()) != 0 {
		t.Errorf("got %+v", res)
	}
}

// TestAReplyRecordIsDefangedAndTheSessionGetsTheWordsAsWritten: with
// control keywords off, a keyword is prose and the message a reply; its
// record is defanged all the same, so that nothing reading it back, then
// or after the keywords are turned on, executes it. Credentials are
// scrubbed from the record, and the session hears the person.
func TestAReplyRecordIsDefangedAndTheSessionGetsTheWordsAsWritten(t *testing.T) {
	t.Setenv("THE_LOOP_TEST_TOKEN", "ghp_0123456789abcdefghijklmnop")
	w := newWorld(t, opts{publish: replyGrant, routing: "  control:\n    enabled: false\n"})
	w.bind(workRef, w.checkout, "-")
	w.setState("design")
	text := "the-loop stop is what I would say; my token is ghp_0123456789abcdefghijklmnop"
	res, err := w.say(memberID, text)
	if err != nil || res.Event != channels.EventReply || res.Gate != channels.GateNone {
		t.Fatalf("got %+v, %v", res, err)
	}
	body := w.ledger.bodies()[0]
	if strings.Contains(body, "ghp_0123456789abcdefghijklmnop") || !strings.Contains(body, "<redacted:env>") {
		t.Errorf("the record leaks the token:\n%s", body)
	}
	if !marked(body) || !strings.Contains(body, "the-loop ‹defanged› stop") {
		t.Errorf("a reply record must be marked and defanged:\n%s", body)
	}
	on := channels.NewVocabulary(w.cli.ControlKeyword)
	if c := on.Parse(body); len(c.Matched) != 0 {
		t.Errorf("the record still carries %v", c.Matched)
	}
	if got := w.inbox(); len(got) != 1 || got[0].Text != text || got[0].Author != memberID {
		t.Errorf("inbox = %+v", got)
	}
}
