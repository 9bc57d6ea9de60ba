package graph

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Every verb that moves a work item is one pure transition followed by one
// executor. The transition is (state, what the node's chain decided) →
// (new state, step, effects): it reads no file, calls no hook, keeps no
// clock and writes nothing, so the same inputs always give the same move.
// The executor (txn.apply) is the only thing that makes a move real. A dry
// run evaluates the same chains read-only and hands the same transitions to
// a scratch executor instead, so its prediction is what a run does by
// construction, not by a second implementation kept in step with the first.

// transition is one move of a work item: the state after it, the step that
// reports it, and the effects that make it real. The state is a copy; the
// state the move was decided from is never modified.
type transition struct {
	state   *State
	step    Step
	effects effects
}

// effects are what a transition asks of the world, in the order the
// executor applies them: the events first (appended and made durable), then
// the state that records them, then the entry chain of the node entered.
// That order is the crash guarantee: a crash between any two leaves events
// the next run repeats, never a moved item without its events, and never an
// outbound call or an execution-log line for a move that was not recorded.
type effects struct {
	// events are appended to the event log in order.
	events []emission
	// write says the state must be written; a transition that decides
	// nothing (a skip declaration that declared no skip) leaves it alone.
	write bool
	// enter names the node whose entry chain runs once the state is
	// written: its outbound hooks and its execution-log line. Empty when
	// the pointer did not move, or was forced (a force runs no chain).
	enter string
}

// emit records one event the transition emits.
func (tr *transition) emit(event, level string, fields map[string]any) {
	tr.effects.events = append(tr.effects.events, emission{event, level, fields})
}

// machine is the state machine of one work item on one loop: everything a
// transition depends on besides the state and the chain's outcome. It is a
// plain value with no clock, no files and no log; callers pass the moment
// of the move, so a run and a dry run given the same moment decide alike.
type machine struct {
	g *Graph
	// ref names the item in events.
	ref string
	// root is the checkout's location, dropped from the text the state
	// keeps so that the committed file names no machine's paths.
	root string
	// statePath is the item's graph-state.json, repository-relative, for
	// errors.
	statePath string
}

// machine is the state machine of item on the runtime's loop.
func (rt *Runtime) machine(item WorkItem) machine {
	return machine{g: rt.Graph, ref: item.Ref, root: rt.Checkout.Root(), statePath: rt.statePath(item)}
}

// begin starts a transition from prev, on a copy of it.
func (m machine) begin(prev *State) *transition {
	return &transition{state: prev.clone()}
}

// written marks tr as writing its state, recording the loop the item walks
// the first time it is written (which loop a state belongs to is decided
// by its first writer, and never changed by a later one).
func (m machine) written(tr *transition) *transition {
	tr.effects.write = true
	if tr.state.Loop == "" {
		tr.state.Loop = m.g.Name
	}
	return tr
}

// at is the node whose exit chain an advance evaluates: the pointer, or for
// an item that has not entered the loop, its start routed around declared
// skips (without entering it). A pointer naming no node of the loop is a
// *StateError.
func (m machine) at(st *State) (*Node, error) {
	id := st.CurrentNode
	if id == "" {
		id = m.g.skipRoute(m.g.Start, declaredSkips(m.g, st), nil)
	}
	n, ok := m.g.byID[id]
	if !ok {
		return nil, m.unknownCurrent(st)
	}
	return n, nil
}

// unknownCurrent refuses to move an item whose pointer names no node of
// the loop: where it stands, and so what its next move is, cannot be told.
// Only a force, which names where the item goes, moves it.
func (m machine) unknownCurrent(st *State) error {
	return &StateError{Path: m.statePath,
		Msg: fmt.Sprintf("currentNode %q is not a node of %s; its nodes are: %s. Force the item to one of them to go on", st.CurrentNode, m.g.Name, strings.Join(m.g.NodeIDs(), ", "))}
}

// lost reports whether st's pointer names no node of the loop (an item
// that has not entered it has no pointer, and is not lost).
func (m machine) lost(st *State) bool {
	return st.CurrentNode != "" && !m.g.Has(st.CurrentNode)
}

// start enters the loop's start node, routing around declared skips, and
// asks for its entry chain. The caller decides whether the item has
// already started (Start is idempotent; start is not).
func (m machine) start(prev *State, now time.Time) *transition {
	tr := m.begin(prev)
	st := tr.state
	node := m.routeSkips(tr, m.g.Start, declaredSkips(m.g, st), now)
	st.enter(node, now)
	tr.emit("graph.started", "info", map[string]any{"work_item": m.ref, "node": node})
	tr.step = Step{Node: node, Status: string(StatusPass), Outcome: OutcomePass, Attempts: st.Record(node).Attempts, To: node}
	tr.effects.enter = node
	return m.written(tr)
}

// advance is what the exit chain out of the node at(prev) decided: wait
// parks; block records lastBlock and escalates once the node was entered
// maxAttempts times or the same finding repeats; pass records what a
// selection gate chose, follows the edge for the outcome (routing around
// declared skips) and asks for the next node's entry chain; a pass with no
// edge completes a terminal node and parks any other, escalated.
func (m machine) advance(prev *State, out ChainOutcome, now time.Time) (*transition, error) {
	tr := m.begin(prev)
	st := tr.state
	skips := declaredSkips(m.g, st)
	id := st.CurrentNode
	if id == "" {
		id = m.routeSkips(tr, m.g.Start, skips, now)
	}
	n, ok := m.g.byID[id]
	if !ok {
		return nil, m.unknownCurrent(prev)
	}
	step := Step{Node: id, Status: string(out.Status), Outcome: out.Outcome(),
		Messages: renderMessages(out.Messages()), Attempts: st.Record(id).Attempts, Terminal: n.Terminal}
	for _, w := range out.Warnings {
		step.Messages = append(step.Messages, "warning: "+w.Text)
	}
	msgs, events := m.degradations(id, out)
	step.Messages = append(step.Messages, msgs...)
	tr.effects.events = append(tr.effects.events, events...)
	done := func() (*transition, error) {
		tr.step = step
		return m.written(tr), nil
	}

	switch out.Status {
	case StatusWait:
		reason := out.Render()
		if reason == "" {
			reason = "awaiting a human"
		}
		st.park(id, storedText(reason, m.root), now)
		tr.emit("graph.parked", "info", map[string]any{"work_item": m.ref, "node": id})
		return done()
	case StatusBlock:
		repeated := st.noteBlock(id, storedText(out.Render(), m.root))
		rec := st.Record(id)
		if !repeated && rec.Attempts < n.MaxAttempts {
			tr.emit("graph.blocked", "info", map[string]any{"work_item": m.ref, "node": id, "hook": out.Blocking.Hook})
			return done()
		}
		tr.emit("graph.escalated", "warning", map[string]any{"work_item": m.ref, "node": id,
			"attempts": rec.Attempts, "repeated": repeated, "hook": out.Blocking.Hook})
		step.Status = StatusEscalated
		if repeated {
			step.Messages = append(step.Messages, "escalated for a human to look at: the same finding was reported twice in a row; the pointer has not moved, so fix it and advance again")
		} else {
			step.Messages = append(step.Messages, fmt.Sprintf("escalated for a human to look at: %d attempts reached maxAttempts %d; the pointer has not moved", rec.Attempts, n.MaxAttempts))
		}
		return done()
	}

	if m.recordSelection(tr, out, now) {
		skips = declaredSkips(m.g, st)
	}
	st.exit(id, out.Outcome(), now)
	if n.Actor == ActorHuman {
		// Departure from the original (docs/compatibility.md#who-answered-a-gate-and-an-approval-check-could-not-verify): the state records who answered a gate.
		st.Record(id).By = cutList(answeredBy(out))
	}
	target, ok := m.g.Next(id, out.Outcome())
	if !ok {
		if n.Terminal {
			st.CurrentNode = id
			tr.emit("graph.completed", "info", map[string]any{"work_item": m.ref, "node": id})
			return done()
		}
		msg := fmt.Sprintf("no declared edge from %s on outcome %q", id, out.Outcome())
		st.park(id, msg, now)
		tr.emit("graph.no_edge", "warning", map[string]any{"work_item": m.ref, "node": id, "outcome": out.Outcome()})
		step.Status = StatusEscalated
		step.Messages = append(step.Messages, msg)
		return done()
	}
	target = m.routeSkips(tr, target, skips, now)
	st.enter(target, now)
	next := m.g.byID[target]
	tr.emit("graph.advanced", "info", map[string]any{"work_item": m.ref, "node": id, "to": target, "outcome": out.Outcome()})
	if next.Actor == ActorHuman {
		how := "new"
		if next.Session == "inherit" {
			how = "fresh-with-artifacts"
			if alive, ok := st.Session["alive"].(bool); len(st.Session) > 0 && (!ok || alive) {
				how = "inherited"
			}
		}
		tr.emit("graph.gate_session", "info", map[string]any{"work_item": m.ref, "node": target, "resolution": how})
	}
	step.To = target
	step.Terminal = next.Terminal
	step.Messages = append(step.Messages, "advanced to "+target)
	tr.effects.enter = target
	return done()
}

// degradations surfaces best-effort hooks of a chain at node that did not
// do their job: an event each, and one warning per distinct cause, so a
// machine with no integration reads one line rather than one per outbound
// hook. An exit chain's are part of its transition; an entry chain's are
// what the executor found when it ran it.
func (m machine) degradations(node string, out ChainOutcome) (msgs []string, events []emission) {
	var causes []string
	hooks := map[string][]string{}
	for _, d := range out.Degradations() {
		events = append(events, emission{"graph.hook_degraded", "warning", map[string]any{"work_item": m.ref, "node": node, "hook": d[0], "error": d[1]}})
		if _, seen := hooks[d[1]]; !seen {
			causes = append(causes, d[1])
		}
		hooks[d[1]] = append(hooks[d[1]], d[0])
	}
	for _, c := range causes {
		// Departure from the original (docs/compatibility.md#one-warning-line-per-cause-not-per-hook): one line per cause, naming its hooks.
		msgs = append(msgs, fmt.Sprintf("warning: %s did not complete: %s", strings.Join(hooks[c], ", "), c))
	}
	return msgs, events
}

// routeSkips walks declared-skipped nodes along their on: skipped edges,
// recording each as skipped without running any of its hooks, and returns
// the first node that is not skipped.
func (m machine) routeSkips(tr *transition, id string, skips map[string]map[string]any, now time.Time) string {
	return m.g.skipRoute(id, skips, func(id string, decl map[string]any) {
		at := Timestamp(now)
		rec := tr.state.Record(id)
		if rec.EnteredAt == "" {
			rec.EnteredAt = at
		}
		rec.Outcome = OutcomeSkipped
		rec.ExitedAt = at
		fields := map[string]any{"work_item": m.ref, "node": id}
		for k, v := range decl {
			if v != nil && v != "" {
				fields[k] = v
			}
		}
		tr.emit("graph.node_skipped", "info", fields)
	})
}

// recordSelection writes what a passing gate decided: a durable decision
// (and the frozen graph, surface, goal it carries), declared skips and
// opt-ins, each only for nodes the graph permits and the pointer has not yet
// reached. It reports whether the skip vocabulary changed.
func (m machine) recordSelection(tr *transition, out ChainOutcome, now time.Time) bool {
	st := tr.state
	at := Timestamp(now)
	changed := false
	for _, r := range out.Results {
		marker, _ := r.Data["decision"].(string)
		if marker == "" {
			continue
		}
		rec := map[string]any{"at": at}
		if frozen, ok := r.Data["frozenGraph"]; ok && frozen != nil {
			rec["graph"] = frozen
			rec["via"], _ = r.Data["selectionSource"].(string)
		}
		if s, _ := r.Data["surface"].(string); s != "" {
			rec["surface"] = s
			st.Surface = s
		}
		if s, _ := r.Data["sessionPerPr"].(string); s != "" {
			rec["sessionPerPr"] = s
		}
		if g, ok := r.Data["goal"]; ok && g != nil {
			rec["goal"] = g
		}
		if _, exists := st.Decisions[marker]; !exists {
			st.Decisions[marker] = rec
			st.noteKey("decisions", marker)
		}
		changed = true
	}
	pick := func(key string, target map[string]map[string]any, admit func(*Node) bool) []string {
		var ids []string
		for _, r := range out.Results {
			decls, _ := r.Data[key].(map[string]any)
			for _, id := range slices.Sorted(maps.Keys(decls)) {
				n, ok := m.g.byID[id]
				if !ok || !admit(n) {
					continue
				}
				if rec := st.Nodes[id]; rec != nil && rec.EnteredAt != "" {
					continue
				}
				decl := map[string]any{}
				if d, ok := decls[id].(map[string]any); ok {
					maps.Copy(decl, d)
				}
				decl["at"] = at
				if _, exists := target[id]; !exists {
					target[id] = decl
					st.noteKey(key, id)
					ids = append(ids, id)
				}
			}
		}
		return ids
	}
	if ids := pick("declaredSkips", st.Skips, func(n *Node) bool { return n.Skippable }); len(ids) > 0 {
		tr.emit("graph.skips_declared", "info", map[string]any{"work_item": m.ref, "via": "selection", "nodes": ids})
		changed = true
	}
	if ids := pick("optIns", st.OptIns, func(n *Node) bool { return n.OptIn }); len(ids) > 0 {
		tr.emit("graph.opt_ins_selected", "info", map[string]any{"work_item": m.ref, "via": "selection", "nodes": ids})
		changed = true
	}
	return changed
}

// claim is a completion claim for node ("" is the current one) by actor.
// A claim that cannot be recorded is answered at once, with no transition:
// an item that has not started, a node behind the pointer (a no-op) or
// ahead of it (refused). A claim for the current node is recorded, and the
// caller then advances.
func (m machine) claim(prev *State, node, actor string, now time.Time) (*Completion, *transition, error) {
	current := prev.CurrentNode
	if current == "" {
		return &Completion{Node: node, Status: "refused", Reason: "not-started",
			Messages: []string{"this work item has not entered the graph; nothing to complete (run `the-loop graph advance` first)"}}, nil, nil
	}
	claimed := cmp.Or(node, current)
	if claimed == current && m.lost(prev) {
		// Departure from the original (docs/compatibility.md#graph-complete-on-an-unknown-pointer): refused before the claim is written, not after.
		return nil, nil, m.unknownCurrent(prev)
	}
	if claimed != current {
		if _, err := m.g.Node(claimed); err != nil {
			return nil, nil, err
		}
		c := &Completion{Node: claimed, Status: "refused", CurrentNode: current, Reason: "not-current",
			Messages: []string{fmt.Sprintf("the current node is %q", current)}}
		if m.g.Index(claimed) < m.g.Index(current) {
			c.Status, c.Reason = "noop", "already-past"
			c.Messages[0] += " and the claimed node is behind it"
		}
		return c, nil, nil
	}
	tr := m.begin(prev)
	tr.state.Completions[claimed] = map[string]any{"at": Timestamp(now), "by": cmp.Or(actor, "cli")}
	tr.state.noteKey("completions", claimed)
	return nil, m.written(tr), nil
}

// force moves the pointer to the node to, whatever the gates say, and
// records that it did: who, why, from where, and what the move bypassed.
// It reports the node it moved from and its warnings (the move is off the
// declared edges, or bypasses a required node). It runs no entry chain.
func (m machine) force(prev *State, to, reason, actor string, now time.Time) (from string, warnings []string, tr *transition, err error) {
	target, err := m.g.Node(to)
	if err != nil {
		return "", nil, nil, err
	}
	from = cmp.Or(prev.CurrentNode, m.g.Start)
	warnings = []string{}
	fromNode, known := m.g.byID[from]
	switch {
	case !known:
		// Departure from the original (docs/compatibility.md#graph-force-from-an-unknown-pointer): a force is the way out of a pointer no node answers to.
		fromNode = &Node{ID: from}
		warnings = append(warnings, fmt.Sprintf("currentNode %q is not a node of %s; the force moves the item from it to %s", from, m.g.Name, to))
	case !slices.ContainsFunc(m.g.EdgesFrom(from), func(e Edge) bool { return e.To == to }):
		warnings = append(warnings, fmt.Sprintf("%s -> %s is not a declared edge; you are deliberately outside the model", from, to))
	}
	if fromNode.Required || target.Required {
		bypassed := to
		if fromNode.Required {
			bypassed = from
		}
		warnings = append(warnings, fmt.Sprintf("node %q is marked required; this force bypasses a guarantee the process treats as mandatory", bypassed))
	}
	recorded := make([]any, len(warnings))
	for i, w := range warnings {
		recorded[i] = w
	}
	tr = m.begin(prev)
	st := tr.state
	st.Forced = append(st.Forced, map[string]any{"from": from, "to": to, "reason": reason, "actor": actor,
		"at": Timestamp(now), "warnings": recorded})
	st.Forced = keepRecent(st.Forced, MaxForcedKept)
	st.enter(to, now)
	st.Record(to).Forced = true
	tr.emit("graph.forced", "warning", map[string]any{"work_item": m.ref, "from": from, "to": to, "actor": actor, "reason": reason})
	return from, warnings, m.written(tr), nil
}

// declareSkips records skip declarations by actor for reason. A token must
// name a skippable node or a shipped skip set, and its nodes must lie ahead
// of the pointer: a skip is a plan, not an amnesty. The state is written
// only when something was declared; the rejections are events either way.
// A pointer that names no node of the loop is a *StateError: which nodes
// lie ahead of it cannot be told.
func (m machine) declareSkips(prev *State, tokens []string, reason, actor string, now time.Time) (declared []string, rejected []Rejection, tr *transition, err error) {
	if m.lost(prev) {
		// Departure from the original (docs/compatibility.md#graph-skip-on-an-unknown-pointer): nothing is ahead of a pointer check reports every node as reached from.
		return nil, nil, nil, m.unknownCurrent(prev)
	}
	tr = m.begin(prev)
	st := tr.state
	declared, rejected = []string{}, []Rejection{}
	order, accepted, bad := m.g.ExpandSkipTokens(tokens)
	for _, t := range bad {
		rejected = append(rejected, Rejection{Token: t, Why: "not a skippable node or shipped skip set; " + skipVocabulary(m.g)})
	}
	at := Timestamp(now)
	cur := m.g.Index(st.CurrentNode)
	for _, node := range order {
		rec := st.Nodes[node]
		if node == st.CurrentNode || (rec != nil && rec.EnteredAt != "") || (cur >= 0 && m.g.Index(node) < cur) {
			rejected = append(rejected, Rejection{Token: node, Why: "already entered or behind the pointer; a skip is a plan, not an amnesty"})
			continue
		}
		if _, exists := st.Skips[node]; !exists {
			st.Skips[node] = map[string]any{"via": "cli", "token": accepted[node], "by": actor, "reason": reason, "at": at}
			st.noteKey("skips", node)
		}
		declared = append(declared, node)
	}
	for _, r := range rejected {
		tr.emit("graph.skips_rejected", "warning", map[string]any{"work_item": m.ref, "token": r.Token, "via": "cli", "why": r.Why})
	}
	if len(declared) == 0 {
		return declared, rejected, tr, nil
	}
	tr.emit("graph.skips_declared", "info", map[string]any{"work_item": m.ref, "via": "cli", "actor": actor, "reason": reason, "nodes": declared})
	return declared, rejected, m.written(tr), nil
}
