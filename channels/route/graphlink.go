package route

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/the-loop/the-loop/builtins"
	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/bindings"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/policy"
)

// The seam between the ingress and the process graph, as the original's
// GraphLink. Only the gate's own exit chain moves an item, on the comment
// it is handed; every refusal on the way there (held, foreign, no spec
// folder, not at a gate) leaves the graph exactly where it was.
// Advancement fails closed: every fault leaves the state as it was (the
// runtime writes under the item's lock, atomically) and is an error, so
// that the delivery is released and can be tried again. Acknowledging
// fails open: a reaction that cannot be posted is logged, never a fault.

// loopOf is the outer loop an arming command selects for a work item that
// has not begun one.
func loopOf(command string) string {
	switch command {
	case channels.CommandContribute:
		return graph.ContributionLoop
	case channels.CommandDo:
		return graph.AdhocLoop
	}
	return ""
}

// held says why t's graph must not be driven now, "" when it may be: its
// last control command paused or stopped it, or it was never started and
// routing.control.requireStartCommand says it must be. With control
// keywords off there is no way to start, stop or pause an item, and
// nothing holds it.
func (l *Link) held(b bindings.Binding) string {
	if !l.cli.ControlEnabled() {
		return ""
	}
	switch b.Command() {
	case channels.CommandPause:
		return DropPaused
	case channels.CommandStop, channels.CommandCleanup:
		return DropStopped
	}
	if l.cli.RequireStartCommand() && !b.Started() {
		return DropAwaitingStart
	}
	return ""
}

// owned is the ownership proof: the bound checkout's origin remote is the
// work item's repository, on the operator's GitHub host (github.com, or a
// GitHub Enterprise Server: policy.CLIConfig.GitHubHost). A
// work item's number names a spec folder, not a project, so without it any
// repository's issue #12 would drive the issue-12 of whatever checkout is
// bound. It runs before anything reads the checkout, and fails closed: no
// checkout, no origin, an origin on another host are all "not proved".
func (l *Link) owned(t *target) (origin string, ok bool) {
	if fi, err := os.Stat(t.binding.Repo); err != nil || !fi.IsDir() {
		return "", false
	}
	origin, ok = policy.CheckoutOrigin(t.binding.Repo, l.host)
	return origin, ok && strings.EqualFold(origin, t.work.Repository())
}

func (l *Link) foreign(t *target, origin, action string) {
	if origin == "" {
		origin = "no origin remote on " + l.host
	}
	l.log.Warn("the bound checkout is not a checkout of the work item's repository; not driving a graph in it",
		"work_item", t.work, "checkout", t.binding.Repo, "origin", origin, "action", action)
}

// stale says why the comment cannot answer the item where it stands, ""
// when it can: it was written before the control command last applied (a
// start, a resume: an answer dropped while the item was held stays
// dropped), or before the item entered its gate. A gate whose entry the
// state does not date reads every comment as stale: fail closed.
func stale(in *inbound, t *target, pos policy.Position) string {
	if t.binding.Control.Precedes(in.comment.CreatedAt, in.comment.ID) {
		return "written before the control command last applied"
	}
	switch {
	case !pos.Entered:
	case pos.EnteredAt.IsZero():
		return "the state does not say when the item entered " + pos.Node
	case in.comment.CreatedAt.Before(pos.EnteredAt.Add(-clockSkew)):
		return "written before the item entered " + pos.Node
	}
	return ""
}

// clockSkew is how far GitHub's clock (a comment's created_at) and this
// machine's (when the state says the item entered its gate) may disagree
// before a comment counts as written before the gate: a replay within it
// of a comment never acted on is the price of not refusing a prompt reply.
const clockSkew = 2 * time.Minute

// checkoutThere is an error when the bound checkout is not there (moved,
// deleted, not mounted yet): a fault, so the delivery is tried again once
// it is, not an answer lost.
func checkoutThere(t *target) error {
	fi, err := os.Stat(t.binding.Repo)
	switch {
	case err != nil:
		return fmt.Errorf("the checkout %s bound to %s: %w", t.binding.Repo, t.work, err)
	case !fi.IsDir():
		return fmt.Errorf("the checkout %s bound to %s is not a directory", t.binding.Repo, t.work)
	}
	// An unmounted volume reads as an empty directory: not there yet. One
	// that holds files is judged by its origin, as foreign when it has none.
	if f, err := os.Open(t.binding.Repo); err == nil {
		names, _ := f.Readdirnames(1)
		f.Close()
		if len(names) == 0 {
			return fmt.Errorf("the checkout %s bound to %s is empty: not there yet (an unmounted volume?)", t.binding.Repo, t.work)
		}
	}
	return nil
}

// lockTimeout is how long a delivery waits for a work item's lock held by
// another writer (a session's graph complete) before it fails busy, and is
// released to be tried again.
const lockTimeout = 5 * time.Second

// open opens the bound checkout, which must be proved first. The engine
// never adopts by itself: adoption is adopt's, after the proof.
func (l *Link) open(t *target) (*policy.Engine, error) {
	return policy.Open(policy.Options{Repo: t.binding.Repo, CLI: l.cli, NoAdopt: true, Moves: true, ReloadHooks: true,
		Log: l.log, Events: l.events, Integration: l.integration, LockTimeout: lockTimeout})
}

// adopt is seed 002's second call site: the checkout proved the work item's
// own, an unadopted repository gets the built-in harness config naming the
// work item's repository, even when its graph is then skipped for want of a
// spec folder (a brand-new work item has none yet, and whoever works it
// needs the config). Never for a contribution: one the item was armed as
// (here), or one its state walks (AdoptAs).
func (r *Router) adopt(e *policy.Engine, t *target, command string) {
	if command == channels.CommandContribute {
		return
	}
	e.AdoptAs(t.work.ItemID(), t.work.String(), t.work.Owner, t.work.Repo)
}

// control applies a control command an authorized person wrote. Arming
// commands are recorded only when they can act now, so that a refused
// start leaves nothing standing; disarming ones always are.
func (r *Router) control(ctx context.Context, in *inbound, t *target, command string) (channels.Outcome, error) {
	// A command changes what the-loop does, so it needs a named person on
	// the allowlist whatever the guards before let through.
	if in.actor == "" || !builtins.IsAuthorized(in.actor, r.cli.AuthorizedUsers()) {
		return r.reject(in, t, command, channels.DropUnauthorizedActor), nil
	}
	if t.binding.Control.Precedes(in.comment.CreatedAt, in.comment.ID) {
		return dropped(DropStale, t.fields(in, "control", command, "why", "written before the last command applied")), nil
	}
	record := func() error {
		_, err := r.bindings.Record(t.work, bindings.Control{Command: command, Actor: in.actor, Delivery: in.d.ID,
			CommentAt: in.comment.CreatedAt.UTC().Format(time.RFC3339), CommentID: in.comment.ID})
		return err
	}
	applied := func(effect string, kv ...any) (channels.Outcome, error) {
		r.emit("control.command", "info", map[string]any{"work_item": t.work.String(), "command": command,
			"actor": in.actor, "via": "comment", "effect": effect, "delivery_id": in.d.ID})
		r.log.Info("control command applied", "work_item", t.work, "command", command, "actor", in.actor, "effect", effect)
		return routed(t.fields(in, append([]any{"control", command, "effect", effect}, kv...)...)), nil
	}
	switch command {
	case channels.CommandStart, channels.CommandContribute, channels.CommandDo:
		return r.start(ctx, in, t, command, record, applied)
	case channels.CommandResume:
		if t.binding.Command() != channels.CommandPause {
			return r.reject(in, t, command, "nothing-to-resume"), nil
		}
		r.react(in, policy.ReactionStarted)
		if err := record(); err != nil {
			return r.fault(in, t, "control", err)
		}
		return applied("resumed")
	default: // stop, pause, cleanup
		r.react(in, policy.ReactionStarted)
		if err := record(); err != nil {
			return r.fault(in, t, "control", err)
		}
		// cleanup releases a work item's local resources in the original
		// (its sessions and checkout); the-loop spawns none, so it is
		// recorded, disarms the item like stop, and touches no file.
		effect := map[string]string{channels.CommandStop: "stopped", channels.CommandPause: "paused", channels.CommandCleanup: "recorded"}[command]
		return applied(effect)
	}
}

// start arms the work item and enters its loop (the original spawns a
// session here, whose spawn enters the graph; the-loop spawns nothing), on
// the loop the command selects: start keeps the loop the item's state
// records, contribute selects the contribution loop, do the ad-hoc loop.
// The bound checkout must be proved the work item's own first: a start
// that cannot act is refused and remembers nothing.
func (r *Router) start(ctx context.Context, in *inbound, t *target, command string, record func() error, applied func(string, ...any) (channels.Outcome, error)) (channels.Outcome, error) {
	if !r.cli.GraphEnabled() {
		r.react(in, policy.ReactionStarted)
		if err := record(); err != nil {
			return r.fault(in, t, "start", err)
		}
		return applied("started", "graph", DropGraphDisabled)
	}
	if !t.binding.HasCheckout() {
		// Bound to a thread alone: the start is the work item's, wherever
		// it is worked; there is no graph here to enter.
		r.react(in, policy.ReactionStarted)
		if err := record(); err != nil {
			return r.fault(in, t, "start", err)
		}
		return applied("started", "graph", DropNoCheckout)
	}
	if err := checkoutThere(t); err != nil {
		return r.fault(in, t, "start", err)
	}
	origin, ok := r.owned(t)
	if !ok {
		r.foreign(t, origin, "start")
		return r.reject(in, t, command, DropForeignCheckout), nil
	}
	if err := ctx.Err(); err != nil {
		return channels.Outcome{}, err
	}
	r.react(in, policy.ReactionStarted)
	if err := record(); err != nil {
		return r.fault(in, t, "start", err)
	}
	e, err := r.open(t)
	if err != nil {
		return r.fault(in, t, "start", err)
	}
	r.adopt(e, t, command)
	item, sel := t.work.ItemID(), policy.Selector{Ref: t.work.String()}
	step, err := e.Start(item, sel, loopOf(command))
	if errors.Is(err, fs.ErrNotExist) {
		r.noSpecDir(e, t, "start")
		return applied("started", "graph", DropNoSpecDir)
	}
	if err != nil {
		return r.fault(in, t, "start", err)
	}
	kv := []any{}
	if step != nil {
		kv = append(kv, "entered", step.To)
		r.react(in, policy.ReactionCompleted)
		// The comment that starts an item is often the one that answers
		// the gate it lands on (a contribution states its goal in it): a
		// freshly entered human gate is evaluated once with it.
		next, err := r.evaluate(e, in, t, item, sel)
		if err != nil {
			return r.fault(in, t, "start", err)
		}
		kv = append(kv, next...)
	}
	return applied("started", kv...)
}

// answer hands a comment to the gate the work item waits at.
func (r *Router) answer(ctx context.Context, in *inbound, t *target) (channels.Outcome, error) {
	if !r.cli.GraphEnabled() {
		return dropped(DropGraphDisabled, t.fields(in)), nil
	}
	if why := r.held(t.binding); why != "" {
		r.log.Info("not driving a held work item", "work_item", t.work, "why", why)
		return dropped(why, t.fields(in)), nil
	}
	if !t.binding.HasCheckout() {
		return dropped(DropNoCheckout, t.fields(in)), nil
	}
	if err := checkoutThere(t); err != nil {
		return r.fault(in, t, "advance", err)
	}
	origin, ok := r.owned(t)
	if !ok {
		r.foreign(t, origin, "advance")
		return dropped(DropForeignCheckout, t.fields(in, "checkout", t.binding.Repo)), nil
	}
	if err := ctx.Err(); err != nil {
		return channels.Outcome{}, err
	}
	e, err := r.open(t)
	if err != nil {
		return r.fault(in, t, "advance", err)
	}
	r.adopt(e, t, t.binding.Command())
	item, sel := t.work.ItemID(), t.selector()
	pos, err := e.Position(item, sel)
	if errors.Is(err, fs.ErrNotExist) {
		r.noSpecDir(e, t, "advance")
		return dropped(DropNoSpecDir, t.fields(in)), nil
	}
	if err != nil {
		return r.fault(in, t, "advance", err)
	}
	if why := stale(in, t, pos); why != "" {
		return dropped(DropStale, t.fields(in, "node", pos.Node, "why", why)), nil
	}
	var kv []any
	if !pos.Entered {
		// Started before its spec folder existed, or driven without a
		// start (requireStartCommand false): entering is the ingress's
		// job, so the first comment enters it.
		r.react(in, policy.ReactionStarted)
		step, err := e.Start(item, sel, loopOf(t.binding.Command()))
		if err != nil {
			return r.fault(in, t, "advance", err)
		}
		if step != nil {
			kv = append(kv, "entered", step.To)
			r.react(in, policy.ReactionCompleted)
		}
	}
	next, err := r.evaluate(e, in, t, item, sel)
	if err != nil {
		return r.fault(in, t, "advance", err)
	}
	if next == nil {
		// Not at a human gate: an ordinary comment for whoever works
		// the node.
		return r.atWork(ctx, e, in, t, item, sel, pos, kv)
	}
	return routed(t.fields(in, append(kv, next...)...)), nil
}

// evaluate advances the item with the comment when it stands at a human
// gate, and says what happened; nil when it is not at one.
func (r *Router) evaluate(e *policy.Engine, in *inbound, t *target, item string, sel policy.Selector) ([]any, error) {
	pos, err := e.Position(item, sel)
	if err != nil {
		return nil, err
	}
	if !pos.Human {
		return nil, nil
	}
	ev, err := channels.ParseEvent("delivery "+in.d.ID, in.d.Body)
	if err != nil {
		return nil, err
	}
	r.react(in, policy.ReactionStarted)
	step, err := e.Advance(item, sel, ev)
	if err != nil {
		return nil, err
	}
	if step.To != "" {
		r.react(in, policy.ReactionCompleted)
	}
	kv := []any{"node", step.Node, "status", step.Status}
	if step.Outcome != "" && step.Outcome != step.Status {
		kv = append(kv, "outcome", step.Outcome)
	}
	if step.To != "" {
		kv = append(kv, "to", step.To)
	}
	return kv, nil
}

// noSpecDir records a work item whose graph was left alone because it has
// no spec folder in its checkout.
func (r *Router) noSpecDir(e *policy.Engine, t *target, action string) {
	r.log.Info("the work item has no spec folder; its graph is left alone", "work_item", t.work, "spec_dir", e.SpecDirRel())
	r.emit("graph.skipped", "info", map[string]any{"work_item": t.work.String(), "action": action,
		"reason": DropNoSpecDir, "spec_dir": e.SpecDirRel()})
}

// reject refuses a recognised control command: nothing is applied or
// recorded.
func (r *Router) reject(in *inbound, t *target, command, reason string) channels.Outcome {
	r.log.Warn("refusing a control command", "work_item", t.work, "command", command, "actor", in.actor, "reason", reason)
	r.emit("control.rejected", "warning", map[string]any{"work_item": t.work.String(), "command": command,
		"actor": in.actor, "via": "comment", "reason": reason, "delivery_id": in.d.ID})
	r.react(in, policy.ReactionError)
	return dropped(DropControlRejected, t.fields(in, "control", command, "why", reason))
}

// fault is processing that failed: logged, recorded as graph.link_failed,
// acknowledged as refused, and returned so the delivery can be tried
// again. The state is as it was: the runtime changes it atomically or not
// at all.
func (r *Router) fault(in *inbound, t *target, action string, err error) (channels.Outcome, error) {
	r.log.Error("could not process a delivery; the graph was left as it was", "work_item", t.work, "action", action, "err", err)
	r.emit("graph.link_failed", "error", map[string]any{"work_item": t.work.String(), "action": action,
		"error": err.Error(), "delivery_id": in.d.ID})
	r.react(in, policy.ReactionError)
	return channels.Outcome{}, fmt.Errorf("%s: %s: %w", t.work, action, err)
}
