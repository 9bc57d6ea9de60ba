package ingress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/the-loop/the-loop/channels"
)

func TestAnAcceptedDeliveryIsProcessedOnceWithOneOutcome(t *testing.T) {
	e := newEnv(t, Options{})
	p := newRecorder()
	p.outcome = channels.Outcome{Routed: true, Fields: map[string]any{"work_items": []string{"github:acme/shop#1"}, "delivery_id": "forged", "level": "x"}}
	e.run(p)
	if rc := e.accept("d1", "github:acme/shop#1"); rc.Dropped != "" {
		t.Fatalf("got dropped %q, want queued", rc.Dropped)
	}
	e.waitIdle()
	if got := p.processed(); !slices.Equal(got, []string{"d1"}) {
		t.Fatalf("processed %v, want [d1]", got)
	}
	evs := e.events()
	if len(evs) != 2 || evs[0].str("event") != "webhook.received" || evs[1].str("event") != "routing.routed" {
		t.Fatalf("events %v, want webhook.received then routing.routed", evs)
	}
	for _, l := range evs {
		if l.str("delivery_id") != "d1" || l.str("gh_event") != "issue_comment" || l.str("work_item") != "github:acme/shop#1" || l.str("action") != "created" {
			t.Errorf("event %v lacks the delivery's fields", l)
		}
	}
	if evs[1]["work_items"] == nil {
		t.Errorf("routing.routed %v lacks the processor's fields", evs[1])
	}
}

func TestAProcessorDropIsLoggedWithItsReason(t *testing.T) {
	e := newEnv(t, Options{})
	p := newRecorder()
	p.outcome = channels.Outcome{Reason: channels.DropUnauthorizedActor, Fields: map[string]any{"actor": "mallory"}}
	e.run(p)
	e.accept("d1", "github:acme/shop#1")
	e.waitIdle()
	out := e.outcomes()["d1"]
	if len(out) != 1 || out[0].str("event") != "routing.dropped" || out[0].str("reason") != channels.DropUnauthorizedActor ||
		out[0].str("actor") != "mallory" || out[0].str("level") != "warning" {
		t.Fatalf("outcome %v, want one routing.dropped unauthorized-actor at warning with the actor", out)
	}
}

func TestDeliveriesOfOneItemAreProcessedOneAtATimeInAcceptanceOrder(t *testing.T) {
	e := newEnv(t, Options{Workers: 8})
	p := newRecorder()
	p.delay = time.Millisecond
	var want []string
	for i := range 40 {
		id := fmt.Sprintf("d%02d", i)
		want = append(want, id)
		e.accept(id, "github:acme/shop#1")
	}
	e.run(p)
	e.waitIdle()
	if got := p.byItem["github:acme/shop#1"]; !slices.Equal(got, want) {
		t.Fatalf("processed %v, want %v", got, want)
	}
	if len(p.overlap) > 0 {
		t.Fatalf("processed while another of the item was: %v", p.overlap)
	}
}

// barrier is a Processor that holds each call until n are in at once.
type barrier struct {
	mu      sync.Mutex
	n, in   int
	release chan struct{}
}

func (b *barrier) Process(ctx context.Context, d channels.Delivery) (channels.Outcome, error) {
	b.mu.Lock()
	b.in++
	if b.in == b.n {
		close(b.release)
	}
	b.mu.Unlock()
	select {
	case <-b.release:
		return channels.Outcome{Routed: true}, nil
	case <-time.After(10 * time.Second):
		return channels.Outcome{}, errors.New("the items were not processed in parallel")
	}
}

func TestDeliveriesOfDifferentItemsAreProcessedInParallel(t *testing.T) {
	e := newEnv(t, Options{Workers: 4})
	b := &barrier{n: 4, release: make(chan struct{})}
	e.run(b)
	for i := range 4 {
		e.accept(fmt.Sprintf("d%d", i), fmt.Sprintf("github:acme/shop#%d", i+1))
	}
	e.waitIdle()
	if n := e.count("routing.routed", ""); n != 4 {
		t.Fatalf("got %d routed, want 4 (dropped: %v)", n, e.outcomes())
	}
}

func TestWorkersBoundTheDeliveriesProcessedAtOnce(t *testing.T) {
	e := newEnv(t, Options{Workers: 3})
	p := newRecorder()
	p.delay = 5 * time.Millisecond
	for i := range 30 {
		e.accept(fmt.Sprintf("d%d", i), fmt.Sprintf("github:acme/shop#%d", i))
	}
	e.run(p)
	e.waitIdle()
	if p.peak > 3 {
		t.Fatalf("%d processed at once, want at most 3", p.peak)
	}
}

func TestADuplicateIsDroppedWhileQueuedAndAfterProcessing(t *testing.T) {
	e := newEnv(t, Options{})
	e.accept("d1", "github:acme/shop#1")
	if rc := e.accept("d1", "github:acme/shop#1"); rc.Dropped != channels.DropDuplicateDelivery {
		t.Fatalf("while queued: got %q, want duplicate-delivery", rc.Dropped)
	}
	p := newRecorder()
	e.run(p)
	e.waitIdle()
	if rc := e.accept("d1", "github:acme/shop#1"); rc.Dropped != channels.DropDuplicateDelivery {
		t.Fatalf("after processing: got %q, want duplicate-delivery", rc.Dropped)
	}
	e.waitIdle()
	if got := p.processed(); !slices.Equal(got, []string{"d1"}) {
		t.Fatalf("processed %v, want d1 once", got)
	}
	if n := e.count("webhook.received", ""); n != 3 {
		t.Errorf("got %d webhook.received, want one per delivery answered: 3", n)
	}
	var prev []string
	for _, l := range e.events() {
		if l.str("reason") == channels.DropDuplicateDelivery {
			prev = append(prev, l.str("previous"))
		}
	}
	if !slices.Equal(prev, []string{"queued", "routed"}) {
		t.Errorf("duplicate drops say previous %v, want [queued routed]", prev)
	}
	if n := len(e.outcomes()["d1"]); n != 1 {
		t.Errorf("got %d outcomes for d1, want 1", n)
	}
}

func TestADisabledEventIsDroppedBeforeDeduplicationAndNotQueued(t *testing.T) {
	e := newEnv(t, Options{Events: []string{"issue_comment"}})
	e.accept("d1", "github:acme/shop#1")
	rc, err := e.q.Accept(delivery("d1", "star", "github:acme/shop#1"))
	if err != nil || rc.Dropped != channels.DropDisabledEvent {
		t.Fatalf("got %q, %v; want disabled-event", rc.Dropped, err)
	}
	if e.q.Len() != 1 {
		t.Fatalf("got %d queued, want 1", e.q.Len())
	}
	if n := e.count("routing.dropped", channels.DropDisabledEvent); n != 1 {
		t.Fatalf("got %d disabled-event drops, want 1", n)
	}
}

// retrying are the routing.retrying and routing.parked events of id, as
// "event attempt retry_in".
func (e *env) retrying(id string) []string {
	var out []string
	for _, l := range e.events() {
		if ev := l.str("event"); (ev == "routing.retrying" || ev == "routing.parked") && l.str("delivery_id") == id {
			out = append(out, fmt.Sprint(ev, " ", l["attempt"], " ", l["retry_in"]))
		}
	}
	return out
}

// TestAFailedDeliveryStaysQueuedAndIsRetriedWithBackoff: processing that
// fails changes nothing and loses nothing: the delivery stays queued, its
// id known (a redelivery is a duplicate), its item's next delivery behind
// it, and it is processed again after a pause that doubles up to the cap,
// each failure logged, until it succeeds; its one outcome says how often
// it failed.
func TestAFailedDeliveryStaysQueuedAndIsRetriedWithBackoff(t *testing.T) {
	e := newEnv(t, Options{RetryBase: 20 * time.Millisecond, RetryMax: 40 * time.Millisecond})
	p := newRecorder()
	p.failTimes["d1"] = 3
	e.run(p)
	e.accept("d1", "github:acme/shop#1")
	e.accept("d2", "github:acme/shop#1")
	if rc := e.accept("d1", "github:acme/shop#1"); rc.Dropped != channels.DropDuplicateDelivery {
		t.Errorf("a redelivery while d1 waits to be retried: dropped %q, want duplicate-delivery", rc.Dropped)
	}
	e.waitIdle()
	if got := p.processed(); !slices.Equal(got, []string{"d1", "d1", "d1", "d1", "d2"}) {
		t.Errorf("processed %v, want d1 four times, then d2 behind it", got)
	}
	want := []string{"routing.retrying 1 20ms", "routing.retrying 2 40ms", "routing.retrying 3 40ms"}
	if got := e.retrying("d1"); !slices.Equal(got, want) {
		t.Errorf("retries logged %q, want %q", got, want)
	}
	out := e.outcomes()["d1"]
	if len(out) != 1 || out[0].str("event") != "routing.routed" || out[0]["retries"] != float64(3) {
		t.Fatalf("outcomes %v, want one routing.routed after 3 retries", out)
	}
	var retries []int
	for _, d := range p.handed {
		if d.ID == "d1" {
			retries = append(retries, d.Retries)
		}
	}
	if !slices.Equal(retries, []int{0, 1, 2, 3}) {
		t.Errorf("d1 was handed over with Retries %v, want 0 1 2 3", retries)
	}
}

// TestADeliveryThatKeepsFailingIsParkedThenProcessedOnTheNextStart: the
// retries of one run are bounded; then the delivery is parked, never
// dropped: it stays in the queue file with its failures counted, its
// item's later deliveries go on, and the next start processes it again,
// resumed.
func TestADeliveryThatKeepsFailingIsParkedThenProcessedOnTheNextStart(t *testing.T) {
	e := newEnv(t, Options{RetryBase: time.Millisecond, MaxTries: 3})
	p := newRecorder()
	p.fail["d1"] = true
	e.run(p)
	e.accept("d1", "github:acme/shop#1")
	e.accept("d2", "github:acme/shop#1")
	e.waitIdle()
	if got := p.processed(); !slices.Equal(got, []string{"d1", "d1", "d1", "d2"}) {
		t.Errorf("processed %v, want d1 three times, then d2", got)
	}
	if got, want := e.retrying("d1"), []string{"routing.retrying 1 1ms", "routing.retrying 2 2ms", "routing.parked 3 <nil>"}; !slices.Equal(got, want) {
		t.Errorf("logged %q, want %q", got, want)
	}
	if out := e.outcomes()["d1"]; len(out) != 0 {
		t.Fatalf("a parked delivery has outcomes %v, want none yet", out)
	}
	if rc := e.accept("d1", "github:acme/shop#1"); rc.Dropped != channels.DropDuplicateDelivery {
		t.Errorf("a redelivery of a parked delivery: dropped %q, want duplicate-delivery", rc.Dropped)
	}
	e.close()
	e.open()
	if e.q.Len() != 1 {
		t.Fatalf("%d queued after the restart, want the parked d1", e.q.Len())
	}
	p2 := newRecorder()
	e.run(p2)
	e.waitIdle()
	if len(p2.handed) != 1 || p2.handed[0].ID != "d1" || p2.handed[0].Retries != 3 || !p2.handed[0].Resumed {
		t.Fatalf("the next start handed over %+v, want d1 resumed after 3 failures", p2.handed)
	}
	if out := e.outcomes()["d1"]; len(out) != 1 || out[0].str("event") != "routing.routed" || out[0]["retries"] != float64(3) {
		t.Fatalf("outcomes %v, want one routing.routed", out)
	}
}

type panicker struct{}

func (panicker) Process(context.Context, channels.Delivery) (channels.Outcome, error) {
	panic("boom")
}

func TestAProcessorPanicIsAFailure(t *testing.T) {
	e := newEnv(t, Options{RetryBase: time.Millisecond, MaxTries: 2})
	e.run(panicker{})
	e.accept("d1", "")
	e.waitIdle()
	if got := e.retrying("d1"); len(got) != 2 || got[1] != "routing.parked 2 <nil>" {
		t.Fatalf("logged %q, want a retry, then parked", got)
	}
	for _, l := range e.events() {
		if l.str("event") == "routing.retrying" && !strings.Contains(l.str("error"), "panicked: boom") {
			t.Errorf("routing.retrying %v does not say the processor panicked", l)
		}
	}
}

func TestARestartProcessesEveryAcceptedDeliveryExactlyOnce(t *testing.T) {
	e := newEnv(t, Options{})
	var want []string
	for i := range 50 {
		id := fmt.Sprintf("d%02d", i)
		want = append(want, id)
		e.accept(id, fmt.Sprintf("github:acme/shop#%d", i%5))
	}
	// Closed without processing: what a crash after the 202s leaves.
	e.close()
	e.open()
	if e.q.Len() != 50 {
		t.Fatalf("got %d queued after reopening, want 50", e.q.Len())
	}
	p := newRecorder()
	e.run(p)
	e.waitIdle()
	got := p.processed()
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("processed %v, want each of %v once", got, want)
	}
	for item, ids := range p.byItem {
		if !slices.IsSorted(ids) {
			t.Errorf("%s processed out of order: %v", item, ids)
		}
	}
	e.close()
	e.open()
	if e.q.Len() != 0 {
		t.Fatalf("got %d queued after a clean run, want none", e.q.Len())
	}
	for _, id := range want {
		if n := len(e.outcomes()[id]); n != 1 {
			t.Errorf("%s: %d outcomes, want 1", id, n)
		}
	}
}

func TestShutdownFinishesWhatIsInFlightAndLeavesTheRestQueued(t *testing.T) {
	e := newEnv(t, Options{Workers: 1})
	started := make(chan struct{})
	release := make(chan struct{})
	var calls int
	p := processorFunc(func(ctx context.Context, d channels.Delivery) (channels.Outcome, error) {
		calls++
		if calls == 1 {
			close(started)
			<-release
		}
		return channels.Outcome{Routed: true}, nil
	})
	e.run(p)
	for i := range 3 {
		e.accept(fmt.Sprintf("d%d", i), "github:acme/shop#1")
	}
	<-started
	e.cancel()
	close(release)
	<-e.ran
	e.cancel = nil
	if e.q.Len() != 2 {
		t.Fatalf("got %d queued after shutdown, want 2", e.q.Len())
	}
	if out := e.outcomes(); len(out["d0"]) != 1 || len(out) != 1 {
		t.Fatalf("outcomes %v, want d0's only", out)
	}
	e.close()
	e.open()
	if e.q.Len() != 2 {
		t.Fatalf("got %d queued on the next start, want 2", e.q.Len())
	}
}

func TestProcessingCutShortByShutdownStaysQueued(t *testing.T) {
	e := newEnv(t, Options{DrainTimeout: 10 * time.Millisecond})
	started := make(chan struct{})
	e.run(processorFunc(func(ctx context.Context, d channels.Delivery) (channels.Outcome, error) {
		close(started)
		<-ctx.Done()
		return channels.Outcome{}, ctx.Err()
	}))
	e.accept("d1", "")
	<-started
	e.close()
	e.open()
	if e.q.Len() != 1 {
		t.Fatalf("got %d queued, want the interrupted delivery", e.q.Len())
	}
	if n := len(e.outcomes()); n != 0 {
		t.Fatalf("got %d outcomes, want none for an interrupted delivery", n)
	}
	p := newRecorder()
	e.run(p)
	e.waitIdle()
	if got := p.processed(); !slices.Equal(got, []string{"d1"}) {
		t.Fatalf("processed %v, want d1", got)
	}
}

type processorFunc func(context.Context, channels.Delivery) (channels.Outcome, error)

func (f processorFunc) Process(ctx context.Context, d channels.Delivery) (channels.Outcome, error) {
	return f(ctx, d)
}

func TestTheDeduplicationStoreForgetsTheOldestProcessedIDsPastItsBound(t *testing.T) {
	e := newEnv(t, Options{Keep: 3})
	e.run(newRecorder())
	for i := range 5 {
		e.accept(fmt.Sprintf("d%d", i), "")
		e.waitIdle()
	}
	// Nothing processed from here on, so nothing more is remembered.
	e.cancel()
	<-e.ran
	e.cancel = nil
	for i, want := range []string{"", "", channels.DropDuplicateDelivery, channels.DropDuplicateDelivery, channels.DropDuplicateDelivery} {
		if rc := e.accept(fmt.Sprintf("d%d", i), ""); rc.Dropped != want {
			t.Errorf("d%d: got %q, want %q", i, rc.Dropped, want)
		}
	}
	err := e.q.db.View(func(tx *bolt.Tx) error {
		if n := tx.Bucket(bucketSeen).Stats().KeyN; n != 3 {
			t.Errorf("seen holds %d ids, want 3", n)
		}
		if n := tx.Bucket(bucketIDs).Stats().KeyN; n != 5 {
			t.Errorf("ids holds %d, want the 3 remembered and the 2 queued again", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestAnOutcomeACrashKeptOutOfTheLogIsWrittenOnceOnRestart(t *testing.T) {
	e := newEnv(t, Options{})
	e.run(newRecorder())
	e.accept("logged", "")
	e.waitIdle()
	e.close()
	// What a crash between a settling commit and its line leaves: outbox
	// entries, one whose line made it to the log and one whose did not.
	db, err := bolt.Open(e.dbPath(), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		ob := tx.Bucket(bucketOutbox)
		for i, id := range []string{"logged", "lost"} {
			o := outcome{Event: "routing.routed", Fields: map[string]any{"delivery_id": id, "gh_event": "issue_comment"}}
			v, _ := json.Marshal(o)
			if err := ob.Put(seqKey(uint64(100+i)), v); err != nil {
				return err
			}
		}
		return nil
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	e.open()
	out := e.outcomes()
	if len(out["logged"]) != 1 || len(out["lost"]) != 1 {
		t.Fatalf("outcomes %v, want one line each", out)
	}
	e.close()
	e.open()
	if n := len(e.outcomes()["lost"]); n != 1 {
		t.Fatalf("after a second restart: %d lines, want 1", n)
	}
}

func TestAnOutcomeWhoseLineWasTornIsWrittenWholeOnRestart(t *testing.T) {
	for _, tail := range []string{
		`{"ts":"2026-07-22T06:31:20.123Z","source":"serve","event":"routing.routed","level":"info","pid":1,"delivery_id":"lost`,
		`{"ts":"2026-07-22T06:31:20.123Z","source":"serve","event":"routing.ro`,
		`{"delivery_id":"lost","event":"routing.routed"`,
	} {
		t.Run(fmt.Sprintf("%.40s", tail[len(tail)-20:]), func(t *testing.T) {
			e := newEnv(t, Options{})
			e.run(newRecorder())
			e.accept("logged", "")
			e.waitIdle()
			e.close()
			// A crash, or a full disk, cut lost's outcome line short after
			// its settling commit.
			f, err := os.OpenFile(e.log.Path(), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(tail)
			f.Close()
			db, err := bolt.Open(e.dbPath(), 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = db.Update(func(tx *bolt.Tx) error {
				o := outcome{Event: "routing.routed", Fields: map[string]any{"delivery_id": "lost", "gh_event": "issue_comment"}}
				v, _ := json.Marshal(o)
				return tx.Bucket(bucketOutbox).Put(seqKey(100), v)
			})
			db.Close()
			if err != nil {
				t.Fatal(err)
			}
			e.open()
			_, torn := e.eventsAndTorn()
			out := e.outcomes()
			if len(out["logged"]) != 1 || len(out["lost"]) != 1 || torn != 1 {
				t.Fatalf("outcomes %v with %d torn lines; want one whole line each, and the torn one skipped", out, torn)
			}
		})
	}
}

func TestAQueueFileIsOpenInOneProcessAtATime(t *testing.T) {
	e := newEnv(t, Options{})
	_, err := OpenQueue(e.dbPath(), Options{})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("got %v, want ErrLocked", err)
	}
}

func TestAcceptRefusesWhenTheQueueIsFull(t *testing.T) {
	e := newEnv(t, Options{MaxQueued: 2})
	e.accept("d1", "")
	e.accept("d2", "")
	if _, err := e.q.Accept(delivery("d3", "issue_comment", "")); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("got %v, want ErrQueueFull", err)
	}
}

func TestTheQueueKeepsTheBodyExactlyAsSigned(t *testing.T) {
	body := []byte("{ \"a\" : \"<&>\" ,\n \"b\":1.50 }")
	in := stored{Delivery: channels.Delivery{ID: "d", Event: "issues", Channel: "slack", Body: body, Item: "x", Received: time.Unix(5, 0).UTC()}, Action: "opened"}
	data, err := encodeDelivery(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := decodeDelivery(data)
	if err != nil {
		t.Fatal(err)
	}
	if string(out.Body) != string(body) || out.ID != "d" || out.Item != "x" || out.Channel != "slack" || out.Action != "opened" || !out.Received.Equal(in.Received) {
		t.Fatalf("got %+v, want %+v", out, in)
	}
}

// A delivery from another channel is handed, once queued, to that
// channel's processor: the queue keeps which channel it came from.
func TestADeliveryFromAChannelIsProcessedAsThatChannels(t *testing.T) {
	e := newEnv(t, Options{})
	github, slack := newRecorder(), newRecorder()
	e.run(channels.ByChannel{"": github, channels.ChannelSlack: slack})
	d := delivery("slack:Ev1", "message", "github:acme/shop#1")
	d.Channel = channels.ChannelSlack
	if _, err := e.q.AcceptSigned(d); err != nil {
		t.Fatal(err)
	}
	e.accept("d1", "github:acme/shop#1")
	e.waitIdle()
	if got, want := slack.processed(), []string{"slack:Ev1"}; !slices.Equal(got, want) {
		t.Errorf("the Slack processor got %v, want %v", got, want)
	}
	if got, want := github.processed(), []string{"d1"}; !slices.Equal(got, want) {
		t.Errorf("the GitHub processor got %v, want %v", got, want)
	}
	out := e.outcomes()["slack:Ev1"]
	if len(out) != 1 || out[0].str("channel") != channels.ChannelSlack || out[0].str("channel_event") != "message" {
		t.Errorf("outcome %v, want one naming channel slack and its event", out)
	}
}

// TestAQueuedEntryThatCannotBeReadIsSettledAsFailed: there is nothing to
// hand a processor, so retrying cannot help: the entry is taken out of the
// queue and logged processing-failed.
func TestAQueuedEntryThatCannotBeReadIsSettledAsFailed(t *testing.T) {
	e := newEnv(t, Options{RetryBase: time.Millisecond})
	e.accept("d1", "github:acme/shop#1")
	e.close()
	db, err := bolt.Open(e.dbPath(), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketQueue).Put(seqKey(1), []byte{0xff, 0xff}) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	e.open()
	p := newRecorder()
	e.run(p)
	e.waitIdle()
	if n := e.count("routing.dropped", DropFailed); n != 1 || len(p.processed()) != 0 || e.count("routing.retrying", "") != 0 {
		t.Errorf("%d processing-failed drops, %d processed, want the unreadable entry settled as failed, unprocessed and unretried", n, len(p.processed()))
	}
}
