package graph

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Step is what one advance did.
type Step struct {
	// Node is the node whose exit chain was evaluated.
	Node string `json:"node"`
	// Status is pass, wait, block or escalated.
	Status   string   `json:"status"`
	Outcome  string   `json:"outcome"`
	Messages []string `json:"messages"`
	Attempts int      `json:"attempts"`
	// To is the node entered, "" when the pointer did not move.
	To string `json:"to,omitempty"`
	// Terminal is set when the item is at a terminal node.
	Terminal bool `json:"terminal,omitempty"`
}

// Fails reports whether the step leaves the item worse than it found
// it: anything but a pass or a wait at a human gate.
func (s *Step) Fails() bool {
	return s.Status != string(StatusPass) && s.Status != string(StatusWait)
}

// Statuses a Step reports beyond the hook statuses.
const StatusEscalated = "escalated"

// Start enters the start node (routing around declared skips) and runs its
// entry chain. It is idempotent: an item that already has a pointer is left
// untouched and Start returns nil.
func (rt *Runtime) Start(id string) (*Step, error) {
	var step *Step
	err := rt.locked(id, func(tx *txn) (err error) {
		if tx.st.CurrentNode == "" {
			step, err = rt.startLocked(tx)
		}
		return err
	})
	return step, err
}

func (rt *Runtime) startLocked(tx *txn) (*Step, error) {
	node := rt.routeSkips(tx, rt.Graph.Start, rt.DeclaredSkips(tx.st))
	tx.st.enter(node, rt.now())
	tx.emit("graph.started", "info", map[string]any{"work_item": tx.item.Ref, "node": node})
	// Persist before any side effect, so a crash mid-chain leaves the
	// pointer where the side effects say it is.
	if err := tx.commit(); err != nil {
		return nil, err
	}
	step := &Step{Node: node, Status: string(StatusPass), Outcome: OutcomePass, Attempts: tx.st.Record(node).Attempts, To: node}
	rt.runEntry(tx, step, node)
	return step, nil
}

// runEntry runs node's entry chain after the pointer moved there. Entry
// chains do not gate (as in the original): what they find is surfaced,
// never silently dropped, and never moves the pointer back.
func (rt *Runtime) runEntry(tx *txn, step *Step, node string) {
	n, _ := rt.Graph.Node(node)
	out := RunChain(n.Entry, rt.actingContext(tx.item, n, Entry, tx.st, nil))
	rt.noteDegradations(tx, step, node, out)
	if out.Status == StatusPass || out.Blocking == nil {
		return
	}
	b := out.Blocking
	var msgs []string
	for _, m := range b.Messages {
		msgs = append(msgs, m.Render())
	}
	text := fmt.Sprintf("warning: %s returned %s at the entry of %s", b.Hook, b.Status, node)
	if len(msgs) > 0 {
		text += ": " + strings.Join(msgs, "; ")
	}
	text += "; entry chains do not gate (exit chains do), so the item entered " + node + " all the same"
	step.Messages = append(step.Messages, text)
	tx.emit("graph.entry_unmet", "warning", map[string]any{"work_item": tx.item.Ref, "node": node,
		"hook": b.Hook, "status": string(b.Status), "messages": msgs})
}

// noteDegradations surfaces best-effort hooks that did not do their job: an
// event each, and one warning per distinct cause, so a machine with no
// integration reads one line rather than one per outbound hook.
func (rt *Runtime) noteDegradations(tx *txn, step *Step, node string, out ChainOutcome) {
	var causes []string
	hooks := map[string][]string{}
	for _, d := range out.Degradations() {
		tx.emit("graph.hook_degraded", "warning", map[string]any{"work_item": tx.item.Ref, "node": node, "hook": d[0], "error": d[1]})
		if _, seen := hooks[d[1]]; !seen {
			causes = append(causes, d[1])
		}
		hooks[d[1]] = append(hooks[d[1]], d[0])
	}
	for _, c := range causes {
		step.Messages = append(step.Messages, fmt.Sprintf("warning: %s did not complete: %s", strings.Join(hooks[c], ", "), c))
	}
}

// Advance evaluates the current node's exit chain under the item's lock and
// acts on it: wait parks, block records lastBlock and escalates after
// maxAttempts or a repeated message, pass follows the edge for the outcome,
// routing around declared skips, and runs the next node's entry chain.
// event carries the inbound comments a human gate classifies.
func (rt *Runtime) Advance(id string, event *Event) (*Step, error) {
	var step *Step
	err := rt.locked(id, func(tx *txn) (err error) {
		step, err = rt.advanceLocked(tx, event)
		return err
	})
	return step, err
}

func (rt *Runtime) advanceLocked(tx *txn, event *Event) (*Step, error) {
	item, st := tx.item, tx.st
	skips := rt.DeclaredSkips(st)
	id := st.CurrentNode
	if id == "" {
		id = rt.routeSkips(tx, rt.Graph.Start, skips)
	}
	n, err := rt.Graph.Node(id)
	if err != nil {
		return nil, rt.unknownCurrent(item, st)
	}
	out := RunChain(n.Exit, rt.actingContext(item, n, Exit, st, event))
	step := &Step{Node: id, Status: string(out.Status), Outcome: out.Outcome(),
		Messages: renderMessages(out.Messages()), Attempts: st.Record(id).Attempts, Terminal: n.Terminal}
	for _, w := range out.Warnings {
		step.Messages = append(step.Messages, "warning: "+w.Text)
	}
	rt.noteDegradations(tx, step, id, out)
	root := rt.Checkout.Root()

	switch out.Status {
	case StatusWait:
		reason := out.Render()
		if reason == "" {
			reason = "awaiting a human"
		}
		st.park(id, storedText(reason, root), rt.now())
		tx.emit("graph.parked", "info", map[string]any{"work_item": item.Ref, "node": id})
		return step, tx.commit()
	case StatusBlock:
		repeated := st.noteBlock(id, storedText(out.Render(), root))
		rec := st.Record(id)
		if repeated || rec.Attempts >= n.MaxAttempts {
			tx.emit("graph.escalated", "warning", map[string]any{"work_item": item.Ref, "node": id,
				"attempts": rec.Attempts, "repeated": repeated, "hook": out.Blocking.Hook})
			step.Status = StatusEscalated
			switch {
			case repeated:
				step.Messages = append(step.Messages, "escalated for a human to look at: the same finding was reported twice in a row; the pointer has not moved, so fix it and advance again")
			default:
				step.Messages = append(step.Messages, fmt.Sprintf("escalated for a human to look at: %d attempts reached maxAttempts %d; the pointer has not moved", rec.Attempts, n.MaxAttempts))
			}
		} else {
			tx.emit("graph.blocked", "info", map[string]any{"work_item": item.Ref, "node": id, "hook": out.Blocking.Hook})
		}
		return step, tx.commit()
	}

	if rt.recordSelection(tx, out) {
		skips = rt.DeclaredSkips(st)
	}
	st.exit(id, out.Outcome(), rt.now())
	target, ok := rt.Graph.Next(id, out.Outcome())
	if !ok {
		if n.Terminal {
			st.CurrentNode = id
			tx.emit("graph.completed", "info", map[string]any{"work_item": item.Ref, "node": id})
			return step, tx.commit()
		}
		msg := fmt.Sprintf("no declared edge from %s on outcome %q", id, out.Outcome())
		st.park(id, msg, rt.now())
		tx.emit("graph.no_edge", "warning", map[string]any{"work_item": item.Ref, "node": id, "outcome": out.Outcome()})
		step.Status = StatusEscalated
		step.Messages = append(step.Messages, msg)
		return step, tx.commit()
	}
	target = rt.routeSkips(tx, target, skips)
	st.enter(target, rt.now())
	next, _ := rt.Graph.Node(target)
	tx.emit("graph.advanced", "info", map[string]any{"work_item": item.Ref, "node": id, "to": target, "outcome": out.Outcome()})
	if next.Actor == ActorHuman {
		how := "new"
		if next.Session == "inherit" {
			how = "fresh-with-artifacts"
			if alive, ok := st.Session["alive"].(bool); len(st.Session) > 0 && (!ok || alive) {
				how = "inherited"
			}
		}
		tx.emit("graph.gate_session", "info", map[string]any{"work_item": item.Ref, "node": target, "resolution": how})
	}
	if err := tx.commit(); err != nil {
		return nil, err
	}
	step.To = target
	step.Terminal = next.Terminal
	step.Messages = append(step.Messages, "advanced to "+target)
	rt.runEntry(tx, step, target)
	return step, nil
}

// recordSelection writes what a passing gate decided: a durable decision
// (and the frozen graph, surface, goal it carries), declared skips and
// opt-ins, each only for nodes the graph permits and the pointer has not yet
// reached. It reports whether the skip vocabulary changed.
func (rt *Runtime) recordSelection(tx *txn, out ChainOutcome) bool {
	st := tx.st
	now := Timestamp(rt.now())
	changed := false
	for _, r := range out.Results {
		marker, _ := r.Data["decision"].(string)
		if marker == "" {
			continue
		}
		rec := map[string]any{"at": now}
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
				n, ok := rt.Graph.byID[id]
				if !ok || !admit(n) {
					continue
				}
				if rec := st.Nodes[id]; rec != nil && rec.EnteredAt != "" {
					continue
				}
				decl := map[string]any{}
				if m, ok := decls[id].(map[string]any); ok {
					maps.Copy(decl, m)
				}
				decl["at"] = now
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
		tx.emit("graph.skips_declared", "info", map[string]any{"work_item": tx.item.Ref, "via": "selection", "nodes": ids})
		changed = true
	}
	if ids := pick("optIns", st.OptIns, func(n *Node) bool { return n.OptIn }); len(ids) > 0 {
		tx.emit("graph.opt_ins_selected", "info", map[string]any{"work_item": tx.item.Ref, "via": "selection", "nodes": ids})
		changed = true
	}
	return changed
}

// Completion answers a completion claim. Its JSON keys are the original's.
type Completion struct {
	Node        string   `json:"node"`
	Status      string   `json:"status"`
	Outcome     string   `json:"outcome"`
	Moved       bool     `json:"moved"`
	CurrentNode string   `json:"currentNode"`
	Messages    []string `json:"messages"`
	Reason      string   `json:"reason"`
}

// Complete is a completion claim: the caller says node's work is done (node
// "" means the current one). The claim carries no verdict: it runs the
// current node's exit chain, under the item's lock. A claim for a node the
// pointer already left is a recorded no-op; one for a node ahead of it is
// refused naming the current node; a held lock answers busy.
func (rt *Runtime) Complete(id, node, actor string, event *Event) (*Completion, error) {
	if err := rt.CheckComplete(node); err != nil {
		return nil, err
	}
	var res *Completion
	err := rt.locked(id, func(tx *txn) (err error) {
		res, err = rt.completeLocked(tx, node, actor, event)
		return err
	})
	if errors.Is(err, ErrBusy) {
		return &Completion{Node: node, Status: "busy", Messages: []string{"another the-loop process holds the graph-state lock"}, Reason: "busy"}, nil
	}
	return res, err
}

// CheckComplete refuses a claim for a node the loop does not have, before
// anything is read or written.
func (rt *Runtime) CheckComplete(node string) error {
	if node == "" {
		return nil
	}
	_, err := rt.Graph.Node(node)
	return err
}

func (rt *Runtime) completeLocked(tx *txn, node, actor string, event *Event) (*Completion, error) {
	st := tx.st
	current := st.CurrentNode
	if current == "" {
		return &Completion{Node: node, Status: "refused", Reason: "not-started",
			Messages: []string{"this work item has not entered the graph; nothing to complete (run `the-loop graph advance` first)"}}, nil
	}
	claimed := cmp.Or(node, current)
	if claimed != current {
		if !rt.Graph.Has(claimed) {
			_, err := rt.Graph.Node(claimed)
			return nil, err
		}
		past := rt.Graph.Index(claimed) < rt.Graph.Index(current)
		c := &Completion{Node: claimed, Status: "refused", CurrentNode: current, Reason: "not-current",
			Messages: []string{fmt.Sprintf("the current node is %q", current)}}
		if past {
			c.Status, c.Reason = "noop", "already-past"
			c.Messages[0] += " and the claimed node is behind it"
		}
		return c, nil
	}
	if actor == "" {
		actor = "cli"
	}
	st.Completions[claimed] = map[string]any{"at": Timestamp(rt.now()), "by": actor}
	st.noteKey("completions", claimed)
	if err := tx.commit(); err != nil {
		return nil, err
	}
	step, err := rt.advanceLocked(tx, event)
	if err != nil {
		return nil, err
	}
	return &Completion{Node: claimed, Status: step.Status, Outcome: step.Outcome, Moved: st.CurrentNode != current,
		CurrentNode: st.CurrentNode, Messages: step.Messages}, nil
}
