package ingress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/eventlog"
)

// Defaults of the Options a zero value leaves unset.
const (
	// DefaultPath is where GitHub posts deliveries.
	DefaultPath = "/gh-webhook"
	// DefaultWorkers bounds how many deliveries are processed at once
	// (routing.maxConcurrentDispatches).
	DefaultWorkers = 4
	// DefaultKeep is how many processed delivery ids the de-duplication
	// store remembers (routing.dedupCacheSize).
	DefaultKeep = 100_000
	// DefaultMaxQueued bounds the deliveries accepted and not yet processed.
	DefaultMaxQueued = 100_000
	// DefaultDrainTimeout is how long a shutdown lets a delivery being
	// processed finish before its context is cancelled.
	DefaultDrainTimeout = 30 * time.Second
	// MaxBody is GitHub's own limit on a delivery's payload.
	MaxBody = 25 << 20
	// DefaultRetryBase is the pause before a delivery whose processing
	// failed is processed again; it doubles with each failure.
	DefaultRetryBase = time.Second
	// DefaultRetryMax caps that pause.
	DefaultRetryMax = 10 * time.Minute
	// DefaultMaxTries bounds how many times one run processes a delivery
	// that keeps failing: about half an hour of pauses in all.
	DefaultMaxTries = 12
)

// DropFailed is routing.dropped's reason for a queued delivery that could
// not be read back from the queue file: there is nothing to process, and
// its id is released, so a redelivery of it is processed.
const DropFailed = "processing-failed"

// Errors Accept and Serve return.
var (
	// ErrClosed is an Accept on a queue that is closing.
	ErrClosed = errors.New("the queue is closed")
	// ErrQueueFull is an Accept while MaxQueued deliveries wait.
	ErrQueueFull = errors.New("the queue is full")
	// ErrNoSecret is a handler asked for without a secret and without
	// Insecure: deliveries could not be verified.
	ErrNoSecret = errors.New("no webhook secret: deliveries could not be verified")
	// ErrLocked is a queue file another process holds open.
	ErrLocked = errors.New("the queue file is in use by another process")
)

// EventLog is where the ingress records what it did: an *eventlog.Log.
// Path is the file it appends to ("" when it writes nothing); the queue
// reads it back after a crash to learn which outcome events were written.
type EventLog interface {
	Emit(event, level string, fields map[string]any) error
	Path() string
}

var _ EventLog = (*eventlog.Log)(nil)

// Options configure a Queue, a handler and Serve. The zero value is
// usable: every unset field takes its default, except Secret (see
// Insecure).
type Options struct {
	// Path is the URL path deliveries are posted to; default DefaultPath.
	Path string
	// Secret is the webhook's HMAC secret. Empty refuses to build a
	// handler unless Insecure is set.
	Secret []byte
	// Insecure accepts deliveries without verifying their signature, when
	// Secret is empty.
	Insecure bool
	// Events lists the event types processed (webhooks.ghWebhook.events);
	// any other is answered 202 and dropped as disabled-event. Nil enables
	// every type.
	Events []string
	// Workers bounds the deliveries processed at once; default
	// DefaultWorkers.
	Workers int
	// Keep is how many processed delivery ids are remembered; default
	// DefaultKeep.
	Keep int
	// MaxQueued bounds the deliveries waiting; default DefaultMaxQueued.
	MaxQueued int
	// DrainTimeout bounds how long shutdown waits for a delivery being
	// processed before cancelling its context; default DefaultDrainTimeout.
	DrainTimeout time.Duration
	// Log receives the ingress's events; nil discards them.
	Log EventLog
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// ItemOf names the work item a payload concerns, which deliveries are
	// processed in order by; nil is channels.ItemOf, the issue or pull
	// request itself. The router names the work item a pull request
	// delivers, so that its comments and the keep one order.
	ItemOf func(body []byte) string
	// Routes are further endpoints Serve answers beside the webhook path,
	// each built on the queue: another channel's, such as Slack's Events
	// API, whose deliveries share the queue's guarantee.
	Routes []Route
	// RetryBase is the pause before a delivery whose processing failed is
	// processed again, doubled with each failure up to RetryMax; defaults
	// DefaultRetryBase and DefaultRetryMax.
	RetryBase, RetryMax time.Duration
	// MaxTries bounds how many times one run processes a delivery that
	// keeps failing; then it is parked until the next run. Default
	// DefaultMaxTries.
	MaxTries int
	// MaxQueueFile bounds the queue file's size in bytes; default
	// DefaultMaxQueueFile. Accept answers ErrQueueFull before the file
	// would pass it, and a larger file is moved aside on open.
	MaxQueueFile int64
	// Limits bound what callers may hold of the server; zero fields take
	// their defaults (see Limits).
	Limits Limits
}

// Route is an endpoint served beside the webhook path.
type Route struct {
	// Path is its URL path, matched exactly.
	Path string
	// Handler builds it on the queue Serve opened.
	Handler func(q *Queue) (http.Handler, error)
}

func (o Options) withDefaults() Options {
	if o.ItemOf == nil {
		o.ItemOf = channels.ItemOf
	}
	if o.Path == "" {
		o.Path = DefaultPath
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.Keep <= 0 {
		o.Keep = DefaultKeep
	}
	if o.MaxQueued <= 0 {
		o.MaxQueued = DefaultMaxQueued
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = DefaultDrainTimeout
	}
	if o.RetryBase <= 0 {
		o.RetryBase = DefaultRetryBase
	}
	if o.RetryMax <= 0 {
		o.RetryMax = DefaultRetryMax
	}
	if o.MaxTries <= 0 {
		o.MaxTries = DefaultMaxTries
	}
	if o.MaxQueueFile <= 0 {
		o.MaxQueueFile = DefaultMaxQueueFile
	}
	o.Limits = o.Limits.withDefaults()
	if o.Log == nil {
		o.Log = eventlog.Discard
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Queue is the durable queue of accepted deliveries and the store of the
// ids already seen, in one bbolt file. Accept records a delivery before it
// returns; Run processes what is queued, one delivery at a time per work
// item and in acceptance order, several items at once.
//
// A Queue is safe for concurrent use. Only one process may have a queue
// file open.
type Queue struct {
	db     *bolt.DB
	opts   Options
	events map[string]bool // nil: every event
	sched  *scheduler

	writes        chan *write
	committerDone chan struct{}
	emittedMu     sync.Mutex
	emitted       [][]byte      // outbox keys whose line is in the log
	emittedSignal chan struct{} // an emitted key is waiting to be deleted

	closeMu   sync.RWMutex // held for reading by every write; Close takes it
	closed    bool
	running   atomic.Bool
	faulted   atomic.Bool   // the file faulted: see guard
	faultedCh chan struct{} // closed when faulted
	runWG     sync.WaitGroup
	settling  sync.WaitGroup // settle writes not yet done
}

// OpenQueue opens the queue file at path, creating it and its directory
// (mode 0700) when missing. Before it returns, it writes any outcome event
// a crash kept out of the event log, and queues again, in acceptance order,
// every delivery that was accepted and not processed.
//
// The file is checked first: a damaged one (truncated, empty, a page past
// its end, unreadable meta pages, failing bbolt's consistency check, over
// Options.MaxQueueFile, or not a regular file at all) is renamed to
// path.corrupt-<UTC time> with an error in the log and a
// server.queue_quarantined event, and the queue starts empty.
func OpenQueue(path string, opts Options) (*Queue, error) {
	opts = opts.withDefaults()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("queue %s: %w", path, err)
	}
	db, err := openDB(path, opts)
	if err != nil {
		return nil, fmt.Errorf("queue %s: %w", path, err)
	}
	q := &Queue{
		db:            db,
		opts:          opts,
		sched:         newScheduler(),
		writes:        make(chan *write, 64),
		committerDone: make(chan struct{}),
		emittedSignal: make(chan struct{}, 1),
		faultedCh:     make(chan struct{}),
	}
	if opts.Events != nil {
		q.events = map[string]bool{}
		for _, e := range opts.Events {
			q.events[e] = true
		}
	}
	if err := q.recover(); err != nil {
		if !q.faulted.Load() {
			db.Close()
		}
		return nil, fmt.Errorf("queue %s: %w", path, err)
	}
	go q.committer()
	return q, nil
}

// recover prepares the file and the scheduler from what a previous run
// left: outcome events to write, deliveries to process.
func (q *Queue) recover() error {
	if err := q.updateDB(initStore); err != nil {
		return err
	}
	if err := q.replayOutbox(); err != nil {
		return err
	}
	var backlog int
	err := q.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketQueue).ForEach(func(k, v []byte) error {
			// An entry that cannot be read is queued on a lane of its own;
			// the worker that meets it settles it as failed.
			s, _ := decodeDelivery(v)
			q.sched.add(job{seq: keySeq(k), id: s.ID, lane: laneOf(s.Item, keySeq(k)), resumed: true})
			backlog++
			return nil
		})
	})
	if backlog > 0 {
		q.opts.Logger.Info("queued deliveries from the last run will be processed", "count", backlog)
	}
	return err
}

// Len is the number of deliveries accepted and not yet processed, those
// waiting to be processed again included, those parked until the next run
// not.
func (q *Queue) Len() int { return q.sched.len() }

// Receipt says what Accept did with a delivery.
type Receipt struct {
	// Dropped is "" when the delivery was queued, else why it was not:
	// channels.DropDisabledEvent or channels.DropDuplicateDelivery.
	Dropped string
}

// Accept takes a delivery in. An event type not enabled is dropped
// (disabled-event); an id the store knows, queued or processed, is a
// duplicate (duplicate-delivery); anything else is queued, durably, before
// Accept returns. Each is logged as webhook.received, and a drop as
// routing.dropped.
//
// An error means the delivery was not recorded: ErrClosed, ErrQueueFull,
// or the file could not be written.
//
// webhook.received says verified false: Accept is given no signature. The
// handler's deliveries say whether theirs was checked.
func (q *Queue) Accept(d channels.Delivery) (Receipt, error) { return q.accept(d, false) }

// AcceptSigned is Accept for a delivery whose signature its handler has
// verified, so that webhook.received says verified true: how a channel
// other than GitHub (Slack's Events API endpoint) takes its deliveries in.
func (q *Queue) AcceptSigned(d channels.Delivery) (Receipt, error) { return q.accept(d, true) }

func (q *Queue) accept(d channels.Delivery, verified bool) (Receipt, error) {
	s := stored{Delivery: d, Action: actionOf(d.Body)}
	if d.Received.IsZero() {
		s.Received = time.Now().UTC()
	}
	received := baseFields(s)
	received["verified"] = verified
	// The event filter is GitHub's (webhooks.ghWebhook.events): another
	// channel's events are enabled by that channel's own config.
	if q.events != nil && d.Channel == "" && !q.events[d.Event] {
		q.emit("webhook.received", "", received)
		q.emit("routing.dropped", eventlog.LevelDebug, withReason(baseFields(s), channels.DropDisabledEvent))
		return Receipt{Dropped: channels.DropDisabledEvent}, nil
	}
	if q.Len() >= q.opts.MaxQueued {
		return Receipt{}, ErrQueueFull
	}
	data, err := encodeDelivery(s)
	if err != nil {
		return Receipt{}, err
	}
	var (
		seq  uint64
		prev record
		dup  bool
	)
	err = q.update(func(tx *bolt.Tx) error {
		seq, dup = 0, false
		ids := tx.Bucket(bucketIDs)
		r, ok, err := getRecord(ids, d.ID)
		if err != nil {
			return err
		}
		if ok {
			prev, dup = r, true
			return nil
		}
		// bbolt grows its file ahead of what it uses (by up to its
		// allocation step), and a value may take twice its size while
		// pages split: what is left under the bound must cover both.
		if tx.Size()+2*int64(len(data))+allocSlack > q.opts.MaxQueueFile {
			return ErrQueueFull
		}
		qb := tx.Bucket(bucketQueue)
		if seq, err = qb.NextSequence(); err != nil {
			return err
		}
		if err := qb.Put(seqKey(seq), data); err != nil {
			return err
		}
		return putRecord(ids, d.ID, record{State: stateQueued, Seq: seq})
	}, func() {
		// Run by the committer in commit order, so that deliveries of one
		// item reach the scheduler in the order they were accepted, and
		// each is logged received before a worker can log its outcome.
		q.emit("webhook.received", "", received)
		if dup {
			f := withReason(baseFields(s), channels.DropDuplicateDelivery)
			f["previous"] = prev.State
			q.emit("routing.dropped", eventlog.LevelInfo, f)
			return
		}
		q.sched.add(job{seq: seq, id: d.ID, lane: laneOf(d.Item, seq)})
	})
	if err != nil {
		return Receipt{}, err
	}
	if dup {
		return Receipt{Dropped: channels.DropDuplicateDelivery}, nil
	}
	return Receipt{}, nil
}

// Run processes queued deliveries with p until ctx is done or the queue is
// closed: at most Options.Workers at once, one at a time per work item, in
// acceptance order. When ctx is done no delivery is started; those being
// processed are given Options.DrainTimeout to finish (then their context
// is cancelled), and Run returns when they have. What was not started stays
// queued for the next run.
//
// Each delivery processed is settled in one transaction: its outcome
// recorded against its id, its entry removed, its outcome event put in the
// outbox. Then the event is written: routing.routed, or routing.dropped
// with the Outcome's reason.
//
// A Processor error (or panic) settles nothing: the delivery stays queued,
// its id still known, its work item's later deliveries behind it, and it
// is processed again after a pause (Options.RetryBase, doubled with each
// failure up to Options.RetryMax), each failure counted in the queue file
// and logged as routing.retrying. After Options.MaxTries failures in one
// run it is parked (routing.parked): it stays in the queue file, to be
// processed again when the queue is next opened, and its work item's
// later deliveries go on without it. An error while shutting down leaves
// the delivery queued, uncounted.
//
// Departure from the original (docs/compatibility.md#ingress-a-delivery-whose-processing-fails-is-kept-and-retried): a failed delivery stays queued and is retried, not released.
func (q *Queue) Run(ctx context.Context, p channels.Processor) error {
	if !q.running.CompareAndSwap(false, true) {
		return errors.New("the queue is already running")
	}
	q.runWG.Add(1)
	defer q.runWG.Done()
	procCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	var drain *time.Timer
	var drainMu sync.Mutex
	stop := context.AfterFunc(ctx, func() {
		q.sched.stop()
		drainMu.Lock()
		drain = time.AfterFunc(q.opts.DrainTimeout, cancel)
		drainMu.Unlock()
	})
	defer func() {
		stop()
		drainMu.Lock()
		if drain != nil {
			drain.Stop()
		}
		drainMu.Unlock()
	}()
	var wg sync.WaitGroup
	for range q.opts.Workers {
		wg.Go(func() { q.work(ctx, procCtx, p) })
	}
	wg.Wait()
	q.settling.Wait()
	return nil
}

// work processes jobs until the scheduler stops, or until run (the
// caller's context) is done: the scheduler is stopped from another
// goroutine, so a worker that comes back from a delivery asks run itself
// before it takes another. ctx is what processing runs under, cancelled
// only once draining has taken too long.
func (q *Queue) work(run, ctx context.Context, p channels.Processor) {
	for {
		if run.Err() != nil {
			return
		}
		j, ok := q.sched.take()
		if !ok {
			return
		}
		var out channels.Outcome
		s, perr := q.load(j.seq)
		if perr != nil {
			// Nothing a processor could be handed: settled as failed,
			// which takes it out of the queue.
			s = stored{Delivery: channels.Delivery{ID: j.id}}
			q.settle(j, s, out, fmt.Errorf("read the queued delivery: %w", perr))
			continue
		}
		s.Resumed = j.resumed
		out, perr = process(ctx, p, s.Delivery)
		switch {
		case perr != nil && ctx.Err() != nil:
			q.opts.Logger.Warn("processing interrupted by shutdown; the delivery stays queued", "delivery_id", j.id, "err", perr)
		case perr != nil:
			q.retry(j, s, perr)
		default:
			q.settle(j, s, out, nil)
		}
	}
}

// process calls p, turning a panic into an error.
func process(ctx context.Context, p channels.Processor, d channels.Delivery) (out channels.Outcome, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("processor panicked: %v\n%s", r, debug.Stack())
		}
	}()
	return p.Process(ctx, d)
}

// load reads a queued delivery.
func (q *Queue) load(seq uint64) (stored, error) {
	var s stored
	err := q.view(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketQueue).Get(seqKey(seq))
		if v == nil {
			return fmt.Errorf("delivery %d is not queued", seq)
		}
		var err error
		s, err = decodeDelivery(v)
		return err
	})
	return s, err
}

// settle records what processing decided, without waiting for the
// commit: the worker goes on with another item while this one's lane stays
// busy until its outcome is durable, so its next delivery cannot overtake
// it. A write that fails is tried again, with a growing pause, until the
// queue stops; then the delivery stays queued, to be processed again on the
// next start.
func (q *Queue) settle(j job, s stored, out channels.Outcome, perr error) {
	ev := q.outcomeEvent(s, out, perr)
	ev.Offset = q.logSize()
	evData, err := json.Marshal(ev)
	if err != nil {
		// Processor fields JSON cannot encode: keep the line, lose them.
		ev.Fields = withReason(baseFields(s), ev.reason())
		ev.Fields["fields_error"] = err.Error()
		evData, _ = json.Marshal(ev)
	}
	key := seqKey(j.seq)
	apply := func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketQueue).Delete(key); err != nil {
			return err
		}
		ids := tx.Bucket(bucketIDs)
		if perr != nil {
			if r, ok, _ := getRecord(ids, s.ID); ok && r.Seq == j.seq {
				if err := ids.Delete([]byte(s.ID)); err != nil {
					return err
				}
			}
		} else {
			r := record{State: stateDropped, Seq: j.seq, Reason: out.Reason}
			if out.Routed {
				r.State = stateRouted
			}
			if err := remember(tx, s.ID, r, q.opts.Keep); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketOutbox).Put(key, evData)
	}
	after := func() {
		if q.emitEvent(ev) {
			q.markEmitted(key)
		}
		if perr != nil {
			q.opts.Logger.Error("a queued delivery cannot be read; its id is released for a redelivery", "delivery_id", s.ID, "err", perr)
		}
		q.sched.finish(j)
	}
	q.settling.Add(1)
	wait := 10 * time.Millisecond
	var try func()
	try = func() {
		q.submit(&write{fn: apply, after: after, done: func(err error) {
			if err == nil {
				q.settling.Done()
				return
			}
			q.opts.Logger.Error("cannot record a processed delivery", "delivery_id", s.ID, "err", err)
			if errors.Is(err, ErrClosed) || errors.Is(err, ErrFaulted) || q.sched.isStopped() {
				q.settling.Done()
				return
			}
			time.AfterFunc(wait, try)
			wait = min(2*wait, 5*time.Second)
		}})
	}
	try()
}

// retry keeps a delivery whose processing failed queued: the failure is
// counted in its entry, and it is processed again after a pause, or parked
// until the next run once this run has tried it Options.MaxTries times.
// The lane stays busy meanwhile, so its work item's later deliveries wait
// behind it, until it is parked.
func (q *Queue) retry(j job, s stored, perr error) {
	j.tries++
	s.Retries++
	parked := j.tries >= q.opts.MaxTries
	wait := min(q.opts.RetryBase<<min(j.tries-1, 30), q.opts.RetryMax)
	f := baseFields(s)
	f["attempt"], f["error"] = s.Retries, perr.Error()
	key := seqKey(j.seq)
	data, err := encodeDelivery(s)
	q.settling.Add(1)
	q.submit(&write{fn: func(tx *bolt.Tx) error {
		if err != nil {
			return err
		}
		qb := tx.Bucket(bucketQueue)
		if qb.Get(key) == nil {
			return fmt.Errorf("delivery %d is not queued", j.seq)
		}
		return qb.Put(key, data)
	}, done: func(werr error) {
		defer q.settling.Done()
		if werr != nil {
			// Counted in memory only: the next run counts from what the
			// file says.
			q.opts.Logger.Error("cannot count a failed delivery in the queue file", "delivery_id", s.ID, "err", werr)
		}
		if parked {
			q.opts.Logger.Error("processing keeps failing; the delivery is parked in the queue until the next start", "delivery_id", s.ID, "tries", j.tries, "err", perr)
			q.emit("routing.parked", eventlog.LevelError, f)
			q.sched.finish(j)
			return
		}
		f["retry_in"] = wait.String()
		q.opts.Logger.Warn("processing failed; the delivery stays queued and is processed again after a pause", "delivery_id", s.ID, "attempt", s.Retries, "retry_in", wait, "err", perr)
		q.emit("routing.retrying", eventlog.LevelWarning, f)
		q.sched.later(j, wait)
	}})
}

// Close stops the queue: Run returns once its deliveries in flight are
// done, then the file is closed. Deliveries not processed stay in it.
func (q *Queue) Close() error {
	q.sched.stop()
	q.runWG.Wait()
	q.closeMu.Lock()
	if q.closed {
		q.closeMu.Unlock()
		return nil
	}
	q.closed = true
	close(q.writes)
	q.closeMu.Unlock()
	<-q.committerDone
	if q.faulted.Load() {
		// bbolt's locks may be held by the transaction that faulted:
		// its file is left to the process's exit.
		return ErrFaulted
	}
	return q.db.Close()
}

// A write is a change to the file, what to do once it is durable, and
// who to tell how it went.
type write struct {
	fn    func(*bolt.Tx) error
	after func()          // on success, before done; may be nil
	done  func(err error) // always, last
}

// update commits fn, grouped with whatever other writes are waiting, and
// runs after once it is durable.
func (q *Queue) update(fn func(*bolt.Tx) error, after func()) error {
	errc := make(chan error, 1)
	q.submit(&write{fn: fn, after: after, done: func(err error) { errc <- err }})
	return <-errc
}

// submit hands w to the committer.
func (q *Queue) submit(w *write) {
	q.closeMu.RLock()
	if q.closed {
		q.closeMu.RUnlock()
		w.done(ErrClosed)
		return
	}
	q.writes <- w
	q.closeMu.RUnlock()
}

// maxGroup bounds the writes one transaction commits.
const maxGroup = 256

// flushDelay is how long an outbox entry whose line is written may wait
// for a transaction to delete it.
const flushDelay = 50 * time.Millisecond

// committer is the file's only writer. It commits the writes waiting
// together, so that one fsync serves every request that arrived while the
// last one ran, and deletes the outbox entries whose events are written.
func (q *Queue) committer() {
	defer close(q.committerDone)
	var flush <-chan time.Time
	for {
		select {
		case w, ok := <-q.writes:
			if !ok {
				q.commit(nil)
				return
			}
			group := []*write{w}
		more:
			for len(group) < maxGroup {
				select {
				case w, ok := <-q.writes:
					if !ok {
						break more
					}
					group = append(group, w)
				default:
					break more
				}
			}
			q.commit(group)
		case <-q.emittedSignal:
			if flush == nil {
				flush = time.After(flushDelay)
			}
		case <-flush:
			flush = nil
			q.commit(nil)
		}
	}
}

// commit runs a group of writes in one transaction. When it fails, each
// write is tried alone, so that one bad write fails only itself.
func (q *Queue) commit(group []*write) {
	done := q.takeEmitted()
	if len(group) == 0 && len(done) == 0 {
		return
	}
	err := q.updateDB(func(tx *bolt.Tx) error {
		for _, w := range group {
			if err := w.fn(tx); err != nil {
				return err
			}
		}
		ob := tx.Bucket(bucketOutbox)
		for _, k := range done {
			if err := ob.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		for _, w := range group {
			if w.after != nil {
				w.after()
			}
			w.done(nil)
		}
		return
	}
	q.opts.Logger.Error("queue write failed", "err", err)
	q.giveBackEmitted(done)
	for _, w := range group {
		err := q.updateDB(w.fn)
		if err == nil && w.after != nil {
			w.after()
		}
		w.done(err)
	}
}

func (q *Queue) markEmitted(key []byte) {
	q.emittedMu.Lock()
	q.emitted = append(q.emitted, key)
	q.emittedMu.Unlock()
	select {
	case q.emittedSignal <- struct{}{}:
	default:
	}
}

func (q *Queue) takeEmitted() [][]byte {
	q.emittedMu.Lock()
	defer q.emittedMu.Unlock()
	done := q.emitted
	q.emitted = nil
	return done
}

func (q *Queue) giveBackEmitted(keys [][]byte) {
	if len(keys) == 0 {
		return
	}
	q.emittedMu.Lock()
	q.emitted = append(q.emitted, keys...)
	q.emittedMu.Unlock()
}

// actionOf is a payload's action, "" when it has none.
func actionOf(body []byte) string {
	var p struct {
		Action string `json:"action"`
	}
	if json.Unmarshal(body, &p) != nil {
		return ""
	}
	return p.Action
}
