package starlark

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	sl "go.starlark.net/starlark"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/starlark/re"
)

// limit names which bound stopped an execution.
type limit int32

const (
	limitNone limit = iota
	limitSteps
	limitDeadline
	limitMemory
	// limitBudget is the evaluation's budget of rule time for all
	// repository hooks together (graph.Budget), spent.
	limitBudget
	// limitProcess is the memory of the whole process (processHeap): what
	// every call, running or abandoned, holds together.
	limitProcess
)

// stateKey is the thread-local key of the *callState every thread we create
// carries.
const stateKey = "the-loop.call"

// watchEvery is how often the memory watchdog samples the Go heap.
const watchEvery = 2 * time.Millisecond

// smallAlloc is the size below which a guarded operation is allowed without
// sampling the heap: an operation that small cannot bomb, and a loop of
// them is stepped, so the watchdog sees it.
const smallAlloc = 1 << 20

// errLimit is wrapped by every error a guard returns when it refuses an
// operation because a limit is (or would be) exceeded.
var errLimit = errors.New("limit exceeded")

// callState is the per-execution bookkeeping of one module top level or one
// hook call: its limits, what tripped, its heap baseline and its reads. It
// is reached from builtins through the thread-local stateKey.
type callState struct {
	who    string // "x-foo" or "module hooks/a.star"
	limits Limits
	log    *slog.Logger
	thread *sl.Thread
	// budget is the evaluation's rule time, shared by every call; nil is
	// unlimited. notRun is set when it was spent before the call began.
	budget *graph.Budget
	notRun bool
	// endSpan ends the span of rule time the execution is charged in;
	// touched only by the thread's goroutine, which leave may give a new
	// one.
	endSpan func()

	tripped  atomic.Int32
	heapBase atomic.Uint64
	// away is set while the execution waits on another that has limits of
	// its own (a rule test's t.run): the heap that one grows is not this
	// one's.
	away   atomic.Bool
	growth atomic.Uint64
	// reserved is what the call's last guarded operation was allowed to
	// allocate, counted in pendingTotal until the call's next one (by
	// then this one has allocated) or its end.
	reserved atomic.Uint64
	// room is what the process's limit left, as last measured.
	room atomic.Uint64

	// read accounting for ctx.repo; touched only by the thread's goroutine.
	readTotal int64
	// repo is the call's ctx.repo; nil for a module's top level.
	repo *repoValue
	// registrar is set while a declared module's top level runs.
	registrar *registrar
	// allocated is what the whole process allocated while the execution
	// ran: at least what the execution itself did.
	allocated uint64
	// nested remembers the tuples and structs measured (nesting.go);
	// touched only by the thread's goroutine.
	nested map[nestKey]nestMeasure
	// prints keeps print() output for the call's author when the call is
	// traced (graph.Context.Trace); nil sends print to the debug log.
	prints *printLog
}

func newCallState(who string, limits Limits, log *slog.Logger) *callState {
	return &callState{who: who, limits: limits, log: log}
}

// stateOf returns the thread's call state. Every thread this package
// creates has one; a missing one is a programming error and says so.
func stateOf(thread *sl.Thread) (*callState, error) {
	st, ok := thread.Local(stateKey).(*callState)
	if !ok || st == nil {
		return nil, fmt.Errorf("internal error: thread %q carries no call state", thread.Name)
	}
	return st, nil
}

// newThread returns a thread bound to st: its step budget, its cancellation
// and print to the debug log.
func (st *callState) newThread(name string, init func(*sl.Thread)) *sl.Thread {
	t := &sl.Thread{
		Name: name,
		Print: func(thread *sl.Thread, msg string) {
			const max = 4 << 10
			if len(msg) > max {
				msg = msg[:max] + "…(truncated)"
			}
			if st.prints != nil {
				st.prints.add(thread, msg)
				return
			}
			st.log.Debug("starlark print", "from", st.who, "msg", msg)
		},
	}
	t.SetLocal(stateKey, st)
	re.SetBudget(t, st)
	// Departure from the original (docs/compatibility.md#repository-hooks-are-starlark-not-python): a repository's rule runs bounded and sandboxed, not in-process with the daemon's environment.
	t.SetMaxExecutionSteps(st.limits.Steps)
	t.OnMaxSteps = func(*sl.Thread) { st.trip(limitSteps) }
	st.thread = t
	if init != nil {
		init(t)
	}
	return t
}

// trip records the first limit exceeded and cancels the thread. It is safe
// to call from any goroutine.
func (st *callState) trip(l limit) {
	st.tripped.CompareAndSwap(int32(limitNone), int32(l))
	if st.thread != nil {
		st.thread.Cancel(st.describe(limit(st.tripped.Load())))
	}
}

func (st *callState) trippedLimit() limit { return limit(st.tripped.Load()) }

// describe words a limit for messages: "its step budget of 10000000 steps".
func (st *callState) describe(l limit) string {
	switch l {
	case limitSteps:
		return fmt.Sprintf("its step budget of %d steps", st.limits.Steps)
	case limitDeadline:
		return fmt.Sprintf("its deadline of %s", st.limits.Deadline)
	case limitMemory:
		return fmt.Sprintf("its memory limit of %s", formatBytes(st.limits.Heap))
	case limitBudget:
		return fmt.Sprintf("the budget of %s of rule time (all repository hooks together)", st.budget.Total())
	case limitProcess:
		return fmt.Sprintf("the process's memory limit of %s (all hook calls together)", formatBytes(st.processCeiling()))
	}
	return "no limit"
}

// exceeded is the sentence a tripped limit is reported with.
func (st *callState) exceeded() string {
	if st.notRun {
		return fmt.Sprintf("%s was not run: %s is spent", st.who, st.describe(limitBudget))
	}
	return fmt.Sprintf("%s exceeded %s", st.who, st.describe(st.trippedLimit()))
}

// refuse trips l and returns the error a guard fails with.
func (st *callState) refuse(l limit, format string, args ...any) error {
	st.trip(l)
	return fmt.Errorf("%w: %s: %s", errLimit, fmt.Sprintf(format, args...), st.exceeded())
}

// charge adds n steps of work done inside a builtin to the thread's count,
// so that work a builtin does on Starlark's behalf is paid for from the
// same budget. It fails once the budget is spent.
func (st *callState) charge(thread *sl.Thread, n uint64, what string) error {
	return st.chargeFor(thread, n, func() string { return what })
}

// chargeFor is charge for a caller whose description costs something to
// build: what is only called when the charge is refused.
func (st *callState) chargeFor(thread *sl.Thread, n uint64, what func() string) error {
	if n == 0 {
		return nil
	}
	if thread.Steps+n < thread.Steps || thread.Steps+n >= st.limits.Steps {
		thread.Steps = st.limits.Steps
		return st.refuse(limitSteps, "%s would take about %d steps", what(), n)
	}
	thread.Steps += n
	return nil
}

// Charge, Allow and Allowance lend the call's limits to the library
// modules that take a budget (re.Budget).
func (st *callState) Charge(thread *sl.Thread, n uint64, what func() string) error {
	return st.chargeFor(thread, n, what)
}

// Allow is allowFor.
func (st *callState) Allow(est uint64, what func() string) error { return st.allowFor(est, what) }

// Allowance is what the call may still allocate: its memory limit less
// what the heap has grown by since the call began, and no more than the
// room left under the process's limit, as last measured.
func (st *callState) Allowance() uint64 {
	if g := st.growth.Load(); g < st.limits.Heap {
		return min(st.limits.Heap-g, st.room.Load())
	}
	return 0
}

// Refuse trips the memory limit, saying what would have exceeded it.
func (st *callState) Refuse(what func() string) error { return st.refuse(limitMemory, "%s", what()) }

var _ re.Budget = (*callState)(nil)

// allow reports whether an operation about to allocate about est bytes may
// go ahead: not when est alone exceeds the memory limit, nor when the heap
// has already grown so far that est would take it over. It is what keeps a
// single builtin call (which Starlark cannot interrupt) from allocating
// without bound.
func (st *callState) allow(est uint64, what string) error {
	return st.allowFor(est, func() string { return what })
}

// allowFor is allow for a caller whose description costs something to
// build: what is only called when the operation is refused.
func (st *callState) allowFor(est uint64, what func() string) error {
	if st.trippedLimit() != limitNone {
		return fmt.Errorf("%w: %s", errLimit, st.exceeded())
	}
	if est < smallAlloc {
		return nil
	}
	if est >= st.limits.Heap {
		return st.refuse(limitMemory, "%s would allocate about %s", what(), formatBytes(est))
	}
	// Checked and reserved as one: two calls side by side must not both
	// be allowed the same room.
	admitting.Lock()
	over := st.overHeap(est)
	if over == limitNone {
		st.reserve(est)
	}
	admitting.Unlock()
	if over != limitNone {
		return st.refuse(over, "%s would allocate about %s", what(), formatBytes(est))
	}
	return nil
}

// processHeap is the most heap the whole process may hold while hook
// calls run: what every call holds, running or abandoned and not yet
// ended, together. It keeps the process under 600 MB resident with the
// Go runtime's own memory, which softMemoryLimit bounds; a call whose
// own limit is larger (a test's) is given its limit and some room.
const processHeap = 384 << 20

// softMemoryLimit is the Go runtime's memory limit (debug.SetMemoryLimit)
// once a hook call runs, unless the operator set one (GOMEMLIMIT): it has
// the collector work harder near it, so that garbage beside the live heap
// does not take the process past the bound.
const softMemoryLimit = 512 << 20

var setSoftLimit sync.Once

func guardMemory() {
	setSoftLimit.Do(func() {
		if debug.SetMemoryLimit(-1) == math.MaxInt64 {
			debug.SetMemoryLimit(softMemoryLimit)
		}
	})
}

func (st *callState) processCeiling() uint64 {
	return max(processHeap, st.limits.Heap+64<<20)
}

// admitting serialises guarded operations' admission, so that what one
// is allowed is reserved before the next is judged.
var admitting sync.Mutex

// pendingTotal is what running calls' guarded operations were allowed to
// allocate and may not have yet (the sum of their reserved).
var pendingTotal atomic.Uint64

func (st *callState) reserve(est uint64) {
	old := st.reserved.Swap(est)
	pendingTotal.Add(est - old)
}

func (st *callState) release() {
	old := st.reserved.Swap(0)
	pendingTotal.Add(-old)
}

// overHeap reports which memory limit extra more bytes would exceed: the
// call's own (limitMemory), when the heap has grown by more than its
// limit less extra since the execution began, or the process's
// (limitProcess), when the heap, what other calls were allowed and have
// perhaps not allocated yet, and extra come to more than processHeap; or
// limitNone. Growth is measured on the heap's object bytes, which include
// garbage; before concluding, it collects and measures again, so only
// memory actually held counts. The heap holds what abandoned calls still
// hold: their memory counts until it is collectable.
func (st *callState) overHeap(extra uint64) limit {
	over := func() limit {
		h, base := heapObjects(), st.heapBase.Load()
		g := uint64(0)
		if h > base {
			g = h - base
		}
		st.growth.Store(g)
		if g+extra >= st.limits.Heap && g+extra > 0 {
			return limitMemory
		}
		var others uint64
		if total, own := pendingTotal.Load(), st.reserved.Load(); total > own {
			others = total - own
		}
		used, ceiling := h+others, st.processCeiling()
		if used+extra >= ceiling {
			st.room.Store(0)
			return limitProcess
		}
		st.room.Store(ceiling - used)
		return limitNone
	}
	if over() == limitNone {
		return limitNone
	}
	runtime.GC()
	return over()
}

func heapObjects() uint64 {
	s := [1]metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s[:])
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

type outcome struct {
	v   sl.Value
	err error
}

// heapGate orders executions by how their memory is judged. The watchdog
// measures the process's heap, so executions side by side are charged for
// each other's allocations, and credited with each other's frees. They run
// shared (the read lock), and a shared verdict stands only when it cannot
// have been so distorted: when the call did not trip its memory limit and
// the whole process allocated less than the limit while it ran, which
// bounds what the call itself can have grown the heap by. Anything else
// is judged again alone (the write lock, from a collected heap), so that
// the same inputs give the same verdict however many items are
// checked at once and on however many cores. A module's top level runs
// exclusive from the start.
//
// An abandoned execution gives its lock up when it is abandoned, so that
// it cannot hold up the executions after it; until its goroutine ends it
// lingers, and an exclusive execution waits a while for the lingering to
// stop before it measures.
var heapGate sync.RWMutex

// lingering counts abandoned executions whose goroutines have not ended.
var lingering atomic.Int64

// lingerWait bounds how long an exclusive execution waits for abandoned
// ones to stop before it measures all the same.
const lingerWait = 5 * time.Second

// heapSlack is how much garbage may stand in the heap when a module's top
// level starts: were more collected while it ran, its growth would read
// short by as much.
const heapSlack = 16 << 20

// settleHeap collects the heap when more than heapSlack may be garbage
// since the last collection.
func settleHeap() {
	s := [2]metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(s[:])
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 ||
		s[0].Value.Uint64() > s[1].Value.Uint64()+heapSlack {
		runtime.GC()
	}
}

// heapAllocs is how many bytes the process has allocated on the heap since
// it started.
func heapAllocs() uint64 {
	s := [1]metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s[:])
	if s[0].Value.Kind() != metrics.KindUint64 {
		return ^uint64(0) >> 1
	}
	return s[0].Value.Uint64()
}

// runMode is how an execution shares the process with others (see
// heapGate).
type runMode int

const (
	// shared runs beside other shared executions.
	shared runMode = iota
	// exclusive runs with no other, from a settled heap: a module's top
	// level, once per process.
	exclusive
	// alone is exclusive from a collected heap: a call judged again.
	alone
	// ungated takes no part in the heap gate: a rule test, whose hook
	// calls take their own turn, and which would otherwise wait on itself.
	ungated
)

// mustBeJudgedAlone reports whether a shared execution's verdict cannot
// stand: it tripped the memory limit (perhaps for its neighbours), or it
// tripped none and the process allocated enough while it ran that its own
// growth is unknown. A step budget or a deadline spent is its own.
func (st *callState) mustBeJudgedAlone() bool {
	switch st.trippedLimit() {
	case limitMemory, limitProcess:
		return true
	case limitNone:
		return st.allocated >= st.limits.Heap
	}
	return false
}

// run executes fn on its own goroutine under st's limits: the step budget
// (set on the thread), a deadline that cancels the thread, and a watchdog
// that samples the heap every watchEvery and cancels the thread when the
// execution has grown it past the memory limit; mode says beside what
// (see heapGate). Starlark observes a cancellation between two
// instructions; a builtin running when it comes finishes first, and every
// builtin's work is bounded by the step budget, so it ends soon. Should
// the execution still not have stopped a grace period after its deadline,
// run stops waiting for it and reports abandoned: the goroutine is left
// to finish on its own (it is cancelled, so it ends at its next
// instruction) and the caller carries on.
//
// A panic in fn is recovered and returned as an error.
func (st *callState) run(fn func() (sl.Value, error), mode runMode) (v sl.Value, err error, abandoned bool) {
	if st.budget.Out() {
		// Not even waiting for its turn: time spent waiting is no rule's.
		return nil, st.notRunError(), false
	}
	switch mode {
	case ungated:
	case shared:
		heapGate.RLock()
		defer heapGate.RUnlock()
	default:
		heapGate.Lock()
		defer heapGate.Unlock()
		for waited := time.Duration(0); lingering.Load() > 0 && waited < lingerWait; waited += 10 * time.Millisecond {
			time.Sleep(10 * time.Millisecond)
		}
		if mode == alone {
			// From what is live alone: a call judged again is rare, so the
			// collection is cheap in all.
			runtime.GC()
		} else {
			settleHeap()
		}
	}
	// Rule time is counted from here, past the gate, to the end of fn's
	// goroutine: an abandoned call counts for as long as it runs on.
	endSpan, ok := st.budget.Begin(func() { st.trip(limitBudget) })
	if !ok {
		return nil, st.notRunError(), false
	}
	st.endSpan = endSpan
	if mode != ungated {
		guardMemory()
	}
	base := heapObjects()
	st.heapBase.Store(base)
	st.room.Store(st.processCeiling() - min(base, st.processCeiling()))
	allocBase := heapAllocs()
	var ended sync.Mutex // guards done and left
	done, left := false, false
	ch := make(chan outcome, 1)
	stop := make(chan struct{})
	go st.watch(stop)
	deadline := time.AfterFunc(st.limits.Deadline, func() { st.trip(limitDeadline) })
	go func() {
		defer func() { st.endSpan() }()
		defer st.release()
		defer func() {
			ended.Lock()
			done = true
			if left {
				lingering.Add(-1)
			}
			ended.Unlock()
		}()
		defer func() {
			if p := recover(); p != nil {
				st.log.Error("starlark execution panicked", "who", st.who, "panic", p, "stack", string(debug.Stack()))
				ch <- outcome{err: fmt.Errorf("internal error: %s panicked: %v", st.who, p)}
			}
		}()
		v, err := fn()
		ch <- outcome{v, err}
	}()
	grace := max(st.limits.Deadline/2, time.Second)
	hard := time.NewTimer(st.limits.Deadline + grace)
	defer func() {
		hard.Stop()
		deadline.Stop()
		close(stop)
	}()
	select {
	case o := <-ch:
		st.allocated = heapAllocs() - allocBase
		return o.v, o.err, false
	case <-hard.C:
		st.trip(limitDeadline)
		ended.Lock()
		if !done {
			left = true
			lingering.Add(1)
		}
		ended.Unlock()
		st.log.Error("starlark execution did not stop after its deadline; abandoned", "who", st.who)
		return nil, nil, true
	}
}

// notRunError is the error of a call the spent budget did not let begin.
func (st *callState) notRunError() error {
	st.notRun = true
	st.trip(limitBudget)
	return fmt.Errorf("%w: %s", errLimit, st.exceeded())
}

// leave runs fn, which has limits of its own, without charging this
// execution for the heap fn grows: the watchdog looks away, and the
// baseline is taken again after, so what fn left behind is not this
// execution's either.
func (st *callState) leave(fn func()) {
	st.away.Store(true)
	// Nor is its rule time this execution's: fn's calls are charged in
	// spans of their own, so this one pauses while they run.
	if st.endSpan != nil {
		st.endSpan()
	}
	defer func() {
		st.heapBase.Store(heapObjects())
		st.away.Store(false)
		if st.endSpan == nil {
			return
		}
		end, ok := st.budget.Begin(func() { st.trip(limitBudget) })
		if !ok {
			end = func() {}
			st.trip(limitBudget)
		}
		st.endSpan = end
	}()
	fn()
}

func (st *callState) watch(stop <-chan struct{}) {
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if st.away.Load() {
				continue
			}
			if l := st.overHeap(0); l != limitNone {
				st.trip(l)
				return
			}
		}
	}
}

func formatBytes(n uint64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
