package starlark

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	sl "go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/the-loop/the-loop/graph"
)

// Hook is one repository hook: a Starlark function a module registered
// under an x- name. It implements graph.Hook; Run is safe for concurrent
// use, each call getting its own thread, limits and ctx.
type Hook struct {
	name   string
	module string
	pos    syntax.Position
	impl   sl.Callable
	host   *host
}

var _ graph.Hook = (*Hook)(nil)

// Name is the x- name the hook was registered under.
func (h *Hook) Name() string { return h.name }

// Module names the declared module that registered the hook.
func (h *Hook) Module() string { return h.module }

// Position is where hook() was called.
func (h *Hook) Position() syntax.Position { return h.pos }

// HookError is a Starlark error raised by a running hook. Err is usually a
// *starlark.EvalError (reachable with errors.As), whose backtrace the
// message carries after its first line.
type HookError struct {
	Hook   string
	Module string
	Err    error
}

// Error is one line, the hook's name then the Starlark error as
// describeEval words it.
func (e *HookError) Error() string { return e.Hook + ": " + quote(e.Err) }

func (e *HookError) Unwrap() error { return e.Err }

// Run calls the hook's function with a frozen ctx under the limits, and
// converts what it returns: a result from ok(), block(), wait() or skip()
// becomes the graph.Result; anything else is a non-retriable block naming
// what was returned. Exceeding a limit is a non-retriable block naming the
// hook and the limit. Any other Starlark error is returned as a
// *HookError, which RunChain turns into a non-retriable block.
func (h *Hook) Run(gctx *graph.Context) (graph.Result, error) {
	if gctx == nil {
		return graph.Result{}, &HookError{Hook: h.name, Module: h.module, Err: errors.New("no context")}
	}
	log := h.host.log
	if !h.host.logGiven && gctx.Log != nil {
		log = gctx.Log
	}
	// ctx.repo is the checkout the chain runs over: the one the hooks were
	// loaded from, or the same repository opened again by a later verb.
	repo := h.host.repo
	if gctx.Checkout != nil {
		repo = &tree{co: gctx.Checkout, src: gctx.Checkout, what: repo.what}
	}
	st, v, err, abandoned := h.call(gctx, repo, log, shared)
	if !abandoned && st.mustBeJudgedAlone() {
		// Its memory verdict may be its neighbours' (see heapGate).
		st, v, err, abandoned = h.call(gctx, repo, log, alone)
	}
	if gctx.Trace != nil && !abandoned {
		st.prints.fill(gctx.Trace, st, err)
	}
	if abandoned || (err != nil && st.trippedLimit() != limitNone) {
		return h.limitBlock(st, err, abandoned), nil
	}
	if err != nil {
		var ee *sl.EvalError
		if errors.As(err, &ee) {
			log.Debug("starlark hook failed", "hook", h.name, "backtrace", ee.Backtrace())
		}
		// What a Python habit caused at run time is said by the message
		// alone (recursion, re flags); no source is needed.
		return graph.Result{}, &HookError{Hook: h.name, Module: h.module, Err: withHint(err, nil)}
	}
	r := h.result(v)
	if _, isResult := v.(*hookResult); !isResult && gctx.Trace != nil {
		// A hook that returns no result is as broken as one that fails:
		// its author hears so, though check only blocks.
		gctx.Trace.Err = r.Messages[0].Text
	}
	return r, nil
}

// call runs the hook once, with a fresh thread, ctx and limits, in the
// given mode.
func (h *Hook) call(gctx *graph.Context, repo *tree, log *slog.Logger, mode runMode) (st *callState, v sl.Value, err error, abandoned bool) {
	st = newCallState(h.name, h.host.limits, log)
	st.budget = gctx.Budget
	if gctx.Trace != nil {
		st.prints = &printLog{}
	}
	thread := st.newThread("hook "+h.name, h.host.threadInit)
	rv := newRepoValue(repo, gctx.Files.Cached(), st)
	// Reading ahead ends with the call, even one abandoned still running.
	defer rv.stop()
	ctx := newContext(h.name, gctx, rv)
	v, err, abandoned = st.run(func() (sl.Value, error) {
		defer rv.closeReader()
		return sl.Call(thread, h.impl, sl.Tuple{ctx}, nil)
	}, mode)
	return st, v, err, abandoned
}

func (h *Hook) limitBlock(st *callState, err error, abandoned bool) graph.Result {
	text := st.exceeded()
	if st.trippedLimit() == limitSteps {
		if pos, ok := deepestPos(err); ok {
			text += fmt.Sprintf(" (stopped at %s)", pos)
		}
	}
	if abandoned {
		text += "; it did not stop when cancelled and was abandoned"
	}
	if err != nil {
		st.log.Warn("repository hook stopped by a limit", "hook", h.name, "err", err)
	}
	return graph.Result{Status: graph.StatusBlock, Hook: h.name, Retriable: false,
		Messages: []graph.Message{{Text: text, Severity: graph.SeverityError}}}
}

func typeName(v sl.Value) string {
	if v == sl.None {
		return "None"
	}
	return v.Type()
}

func (h *Hook) result(v sl.Value) graph.Result {
	r, ok := v.(*hookResult)
	if !ok {
		return graph.Result{Status: graph.StatusBlock, Hook: h.name, Retriable: false,
			Messages: []graph.Message{graph.Errorf("%s returned %s, not a result; a hook must return ok(), block(), wait() or skip()", h.name, typeName(v))}}
	}
	out := r.r
	out.Hook = h.name
	out.Messages = slices.Clone(out.Messages)
	out.Data = maps.Clone(out.Data)
	if out.Status == graph.StatusBlock && len(out.Messages) == 0 {
		out.Messages = []graph.Message{graph.Errorf("%s blocked without saying why", h.name)}
	}
	return out
}
