package graph

import (
	"errors"
	"fmt"
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
			// The state is written before the entry chain runs, so a
			// crash mid-chain leaves the pointer where the side effects
			// say it is.
			step, err = tx.apply(rt.machine(tx.item).start(tx.st, rt.now()))
		}
		return err
	})
	return step, err
}

// runEntry runs node's entry chain after the pointer moved there. Entry
// chains do not gate (as in the original): what they find is surfaced,
// never silently dropped, and never moves the pointer back.
func (rt *Runtime) runEntry(tx *txn, step *Step, node string) {
	n, _ := rt.Graph.Node(node)
	out := RunChain(n.Entry, rt.actingContext(tx.item, n, Entry, tx.st, nil))
	msgs, events := rt.machine(tx.item).degradations(node, out)
	step.Messages = append(step.Messages, msgs...)
	tx.pending = append(tx.pending, events...)
	if out.Status == StatusPass || out.Blocking == nil {
		return
	}
	b := out.Blocking
	var found []string
	for _, m := range b.Messages {
		found = append(found, m.Render())
	}
	text := fmt.Sprintf("warning: %s returned %s at the entry of %s", b.Hook, b.Status, node)
	if len(found) > 0 {
		text += ": " + strings.Join(found, "; ")
	}
	text += "; entry chains do not gate (exit chains do), so the item entered " + node + " all the same"
	step.Messages = append(step.Messages, text)
	tx.emit("graph.entry_unmet", "warning", map[string]any{"work_item": tx.item.Ref, "node": node,
		"hook": b.Hook, "status": string(b.Status), "messages": found})
}

// Advance evaluates the current node's exit chain under the item's lock and
// acts on it: wait parks, block records lastBlock and escalates after
// maxAttempts or a repeated message, pass follows the edge for the outcome,
// routing around declared skips, and runs the next node's entry chain.
// event carries the inbound comments a human gate classifies.
//
// An item with no spec folder is a new one: its folder is created, and it
// is evaluated at the loop's start, as the original does.
func (rt *Runtime) Advance(id string, event *Event) (*Step, error) {
	var step *Step
	err := rt.lockedCreating(id, func(tx *txn) (err error) {
		step, err = rt.advanceLocked(tx, event)
		return err
	})
	return step, err
}

func (rt *Runtime) advanceLocked(tx *txn, event *Event) (*Step, error) {
	evaluate := func(n *Node) ChainOutcome {
		return RunChain(n.Exit, rt.actingContext(tx.item, n, Exit, tx.st, event))
	}
	return rt.advance(rt.machine(tx.item), tx.st, evaluate, tx.apply)
}

// advance is the one advance, for a run and a dry run alike: it evaluates
// the exit chain of the node st points at, decides the transition, and
// hands it to apply. Only evaluate (acting, or read-only) and apply (the
// executor, or a dry run's scratch copy) differ between the two.
func (rt *Runtime) advance(m machine, st *State, evaluate func(*Node) ChainOutcome, apply func(*transition) (*Step, error)) (*Step, error) {
	n, err := m.at(st)
	if err != nil {
		return nil, err
	}
	tr, err := m.advance(st, evaluate(n), rt.now())
	if err != nil {
		return nil, err
	}
	return apply(tr)
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
	if err := checkLength("--actor", actor, MaxActor); err != nil {
		return nil, fmt.Errorf("complete: %w", err)
	}
	item, create, err := rt.creating(id)
	if err != nil {
		return nil, err
	}
	if create != nil {
		// A new item has not entered the loop: the claim is refused, and
		// nothing is written.
		// Departure from the original (docs/compatibility.md#a-mutating-verb-on-an-item-with-no-spec-folder): the refusal creates no folder.
		res, _, err := rt.machine(item).claim(NewState(id), node, actor, rt.now())
		return res, err
	}
	var res *Completion
	err = rt.lockedItem(item, func(tx *txn) (err error) {
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
	answer, claim, err := rt.machine(tx.item).claim(tx.st, node, actor, rt.now())
	if answer != nil || err != nil {
		return answer, err
	}
	current := tx.st.CurrentNode
	// The claim is recorded before the chain runs: a chain can take long
	// (verify-tests), and a crash in it must not lose the claim.
	if _, err := tx.apply(claim); err != nil {
		return nil, err
	}
	step, err := rt.advanceLocked(tx, event)
	if err != nil {
		return nil, err
	}
	return &Completion{Node: current, Status: step.Status, Outcome: step.Outcome, Moved: tx.st.CurrentNode != current,
		CurrentNode: tx.st.CurrentNode, Messages: step.Messages}, nil
}
