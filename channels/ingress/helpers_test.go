package ingress

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/eventlog"
)

// env is a queue in a temporary state root, logging to its own event log.
type env struct {
	t      *testing.T
	dir    string
	log    *eventlog.Log
	opts   Options
	q      *Queue
	cancel context.CancelFunc
	ran    chan error
}

func newEnv(t *testing.T, opts Options) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{t: t, dir: dir, log: eventlog.OpenFile(filepath.Join(dir, "events.jsonl"), "serve")}
	opts.Log = e.log
	e.opts = opts
	e.open()
	t.Cleanup(func() { e.close() })
	return e
}

func (e *env) dbPath() string { return filepath.Join(e.dir, "queue.db") }

func (e *env) open() {
	e.t.Helper()
	q, err := OpenQueue(e.dbPath(), e.opts)
	if err != nil {
		e.t.Fatal(err)
	}
	e.q = q
}

// run starts processing with p.
func (e *env) run(p channels.Processor) {
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel, e.ran = cancel, make(chan error, 1)
	go func() { e.ran <- e.q.Run(ctx, p) }()
}

// stop ends processing gracefully and closes the queue.
func (e *env) close() {
	if e.q == nil {
		return
	}
	if e.cancel != nil {
		e.cancel()
		<-e.ran
		e.cancel = nil
	}
	if err := e.q.Close(); err != nil {
		e.t.Error(err)
	}
	e.q = nil
}

// accept takes a delivery in and fails the test on an error.
func (e *env) accept(id, item string) Receipt {
	e.t.Helper()
	rc, err := e.q.Accept(delivery(id, "issue_comment", item))
	if err != nil {
		e.t.Fatal(err)
	}
	return rc
}

func delivery(id, event, item string) channels.Delivery {
	return channels.Delivery{ID: id, Event: event, Item: item, Body: []byte(`{"action":"created","n":"` + id + `"}`)}
}

// waitIdle waits until nothing is queued and every settle is logged.
func (e *env) waitIdle() {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for e.q.Len() > 0 {
		if time.Now().After(deadline) {
			e.t.Fatalf("still %d queued", e.q.Len())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// logged is one record of the event log.
type logged map[string]any

func (l logged) str(k string) string { s, _ := l[k].(string); return s }

func (e *env) events() []logged {
	out, _ := e.eventsAndTorn()
	return out
}

// eventsAndTorn reads the log as its readers do: whole records, and a
// count of the torn lines skipped.
func (e *env) eventsAndTorn() ([]logged, int) {
	e.t.Helper()
	f, err := os.Open(e.log.Path())
	if os.IsNotExist(err) {
		return nil, 0
	}
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	var out []logged
	torn, err := eventlog.Read(f, func(rec []byte) error {
		var l logged
		if err := json.Unmarshal(rec, &l); err != nil {
			return fmt.Errorf("event log record %q: %w", rec, err)
		}
		out = append(out, l)
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out, torn
}

// outcomes are the processing outcome events per delivery id: every
// routing.routed and routing.dropped but a duplicate's.
func (e *env) outcomes() map[string][]logged {
	out := map[string][]logged{}
	for _, l := range e.events() {
		ev := l.str("event")
		if ev == "routing.routed" || (ev == "routing.dropped" && l.str("reason") != channels.DropDuplicateDelivery) {
			out[l.str("delivery_id")] = append(out[l.str("delivery_id")], l)
		}
	}
	return out
}

func (e *env) count(event, reason string) int {
	n := 0
	for _, l := range e.events() {
		if l.str("event") == event && (reason == "" || l.str("reason") == reason) {
			n++
		}
	}
	return n
}

// recorder is a fake Processor: it records what it was handed, in order,
// and notes any two deliveries of one item processed at once.
type recorder struct {
	mu       sync.Mutex
	order    []string // ids
	byItem   map[string][]string
	active   map[string]int
	overlap  []string
	inFlight int
	peak     int
	delay    time.Duration
	fail     map[string]bool
	// failTimes makes a delivery fail that many more times.
	failTimes map[string]int
	// handed are the deliveries handed over, bodies aside, in order.
	handed  []channels.Delivery
	outcome channels.Outcome
}

func newRecorder() *recorder {
	return &recorder{byItem: map[string][]string{}, active: map[string]int{}, fail: map[string]bool{}, failTimes: map[string]int{},
		outcome: channels.Outcome{Routed: true}}
}

func (r *recorder) Process(ctx context.Context, d channels.Delivery) (channels.Outcome, error) {
	r.mu.Lock()
	r.active[d.Item]++
	if d.Item != "" && r.active[d.Item] > 1 {
		r.overlap = append(r.overlap, d.ID)
	}
	r.inFlight++
	r.peak = max(r.peak, r.inFlight)
	fail := r.fail[d.ID] || r.failTimes[d.ID] > 0
	r.failTimes[d.ID]--
	d.Body = nil
	r.handed = append(r.handed, d)
	r.mu.Unlock()
	time.Sleep(r.delay)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.active[d.Item]--
	r.inFlight--
	r.order = append(r.order, d.ID)
	r.byItem[d.Item] = append(r.byItem[d.Item], d.ID)
	if fail {
		return channels.Outcome{}, errTest
	}
	return r.outcome, nil
}

func (r *recorder) processed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.order)
}

type testError string

func (e testError) Error() string { return string(e) }

const errTest = testError("the processor failed")
