package graph

import (
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
)

// ChainOutcome is what a whole chain decided.
type ChainOutcome struct {
	Status  Status
	Results []Result
	// Blocking is the result that stopped the chain (a block or a wait),
	// nil when the chain passed.
	Blocking *Result
	// Warnings are things the chain noticed that change no verdict, such as
	// an x- hook's dropped outcome. Degraded hooks are in Degradations.
	Warnings []Finding
}

// Satisfied reports whether the chain passed.
func (o ChainOutcome) Satisfied() bool { return o.Status == StatusPass }

// Outcome is the value edges route on: the blocking hook's outcome, else the
// last explicit Data["outcome"], else "pass". The last declaration wins
// because a later hook has seen the earlier results.
func (o ChainOutcome) Outcome() string {
	if o.Blocking != nil {
		return o.Blocking.Outcome()
	}
	for i := len(o.Results) - 1; i >= 0; i-- {
		if d := o.Results[i].DeclaredOutcome(); d != "" {
			return d
		}
	}
	return OutcomePass
}

// Messages are the blocking result's messages.
func (o ChainOutcome) Messages() []Message {
	if o.Blocking == nil {
		return nil
	}
	return o.Blocking.Messages
}

// Render is the feedback for whoever must act: the-loop's own text only.
func (o ChainOutcome) Render() string {
	if o.Blocking == nil {
		return ""
	}
	return fmt.Sprintf("`%s` did not pass:\n%s", o.Blocking.Hook, o.Blocking.Render())
}

// Degradations lists (hook, error) for each hook that passed while recording
// a failure in Data["error"]: best-effort stays best-effort, never silent.
func (o ChainOutcome) Degradations() [][2]string {
	var out [][2]string
	for _, r := range o.Results {
		if e, ok := r.Data["error"].(string); ok && e != "" {
			out = append(out, [2]string{r.Hook, e})
		}
	}
	return out
}

// RunChain runs entries in order against base and stops at the first hook
// that neither passes nor skips. A skip is not a verdict, so the chain runs
// on past it. A hook that errors, panics, returns an unknown status or cannot
// be resolved becomes a non-retriable block: a broken check is never a pass.
// An x- hook's declared outcome is dropped: repository hooks may stop the
// loop, never steer it.
//
// base is copied per hook; the caller's Context is not modified.
func RunChain(entries []ChainEntry, base *Context) ChainOutcome {
	var out ChainOutcome
	if len(entries) > 1 {
		out.Results = make([]Result, 0, len(entries))
	}
	for _, e := range entries {
		r := out.run(e, base)
		if r.Status != StatusPass && r.Status != StatusSkip {
			out.Status = r.Status
			out.Blocking = &out.Results[len(out.Results)-1]
			return out
		}
	}
	out.Status = StatusPass
	return out
}

// run runs one chain entry after the results out holds, and appends its
// result, which it returns.
func (out *ChainOutcome) run(e ChainEntry, base *Context) Result {
	log := base.Log
	if log == nil {
		log = slog.Default()
	}
	ctx := base.reuse
	if ctx == nil || IsExtension(e.Hook) {
		ctx = new(Context)
	}
	*ctx = *base
	ctx.reuse = nil // a chain the hook runs itself copies afresh
	ctx.Log = logWith(log, "hook", e.Hook)
	ctx.Params, ctx.Prepared = e.Params, e.Prepared
	if ctx.Params == nil {
		ctx.Params = map[string]any{}
	}
	ctx.Results = out.Results[:len(out.Results):len(out.Results)]
	r := runOne(e.Hook, ctx)
	if IsExtension(e.Hook) {
		if d, ok := r.Data["outcome"]; ok {
			r.Data = maps.Clone(r.Data)
			delete(r.Data, "outcome")
			w := fmt.Sprintf("%s declared outcome %v; repository hooks do not route, so it was ignored", e.Hook, d)
			log.Warn(w, "node", nodeID(base.Node))
			out.Warnings = append(out.Warnings, Finding{Hook: e.Hook, Node: nodeID(base.Node), Severity: SeverityWarning, Text: w})
		}
	}
	out.Results = append(out.Results, r)
	return r
}

func runOne(name string, ctx *Context) (r Result) {
	broken := func(format string, args ...any) Result {
		return Result{Status: StatusBlock, Hook: name, Retriable: false,
			Messages: []Message{{Text: fmt.Sprintf("the %s hook failed to run: ", name) + fmt.Sprintf(format, args...), Severity: SeverityError}}}
	}
	var h Hook
	var ok bool
	if ctx.Graph != nil {
		h, ok = ctx.Graph.Hook(name)
	}
	if !ok {
		return broken("no hook is registered under that name")
	}
	defer func() {
		if p := recover(); p != nil {
			stack := string(debug.Stack())
			ctx.Log.Error("hook panicked", "panic", p, "stack", stack)
			r = broken("panic: %v", p)
			if ctx.Trace != nil {
				ctx.Trace.Err, ctx.Trace.Backtrace = fmt.Sprintf("panic: %v", p), stack
			}
		}
	}()
	res, err := h.Run(ctx)
	if err != nil {
		ctx.Log.Warn("hook failed", "err", err)
		if ctx.Trace != nil {
			ctx.Trace.Err = err.Error()
		}
		return broken("%v", err)
	}
	if !res.Status.Valid() {
		return broken("returned unknown status %q; want pass, block, wait or skip", res.Status)
	}
	if res.Hook == "" {
		res.Hook = name
	}
	return res
}

func nodeID(n *Node) string {
	if n == nil {
		return ""
	}
	return n.ID
}

// renderMessages joins rendered messages one per line.
func renderMessages(msgs []Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Render()
	}
	return out
}
