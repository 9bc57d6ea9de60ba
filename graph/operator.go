package graph

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
)

// ErrReasonRequired refuses an unexplained skip or force.
var ErrReasonRequired = errors.New("--reason is required: record why")

// Rejection is a skip token the runtime refused, and why.
type Rejection struct {
	Token string `json:"token"`
	Why   string `json:"why"`
}

// SkipDeclaration is what DeclareSkips did.
type SkipDeclaration struct {
	WorkItem string      `json:"workItem"`
	Declared []string    `json:"declared"`
	Rejected []Rejection `json:"rejected"`
	Reason   string      `json:"reason"`
	Warnings []string    `json:"warnings"`
}

// DeclareSkips records skips for id: human-attributed, a reason required,
// never a forged verdict. A token must name a skippable node or a shipped
// skip set, and its nodes must lie ahead of the pointer: a skip is a plan,
// not an amnesty.
func (rt *Runtime) DeclareSkips(id string, tokens []string, reason, actor string) (*SkipDeclaration, error) {
	if err := CheckSkips(tokens, reason); err != nil {
		return nil, err
	}
	reason = strings.TrimSpace(reason)
	item, err := rt.WorkItem(id)
	if err != nil {
		return nil, err
	}
	res := &SkipDeclaration{WorkItem: item.Ref, Reason: reason, Declared: []string{}, Rejected: []Rejection{}, Warnings: []string{}}
	if actor == "" {
		actor = "(shell)"
	}
	err = rt.lockedItem(item, func(tx *txn) error {
		st := tx.st
		order, accepted, bad := rt.Graph.ExpandSkipTokens(tokens)
		for _, t := range bad {
			res.Rejected = append(res.Rejected, Rejection{Token: t, Why: "not a skippable node or shipped skip set; " + rt.skipVocabulary()})
		}
		at := Timestamp(rt.now())
		cur := rt.Graph.Index(st.CurrentNode)
		for _, node := range order {
			rec := st.Nodes[node]
			if node == st.CurrentNode || (rec != nil && rec.EnteredAt != "") || (cur >= 0 && rt.Graph.Index(node) < cur) {
				res.Rejected = append(res.Rejected, Rejection{Token: node, Why: "already entered or behind the pointer; a skip is a plan, not an amnesty"})
				continue
			}
			if _, exists := st.Skips[node]; !exists {
				st.Skips[node] = map[string]any{"via": "cli", "token": accepted[node], "by": actor, "reason": reason, "at": at}
				st.noteKey("skips", node)
			}
			res.Declared = append(res.Declared, node)
		}
		for _, r := range res.Rejected {
			tx.emit("graph.skips_rejected", "warning", map[string]any{"work_item": item.Ref, "token": r.Token, "via": "cli", "why": r.Why})
		}
		if len(res.Declared) == 0 {
			return nil
		}
		tx.emit("graph.skips_declared", "info", map[string]any{"work_item": item.Ref, "via": "cli", "actor": actor, "reason": reason, "nodes": res.Declared})
		return tx.commit()
	})
	if err != nil {
		return nil, err
	}
	if len(res.Declared) > 0 {
		if w := rt.announce(item, fmt.Sprintf("declared skips: %s by %s. Reason: %s. These are declarations, not verdicts.", strings.Join(res.Declared, ", "), actor, reason)); w != "" {
			res.Warnings = append(res.Warnings, w)
		}
	}
	return res, nil
}

// CheckSkips refuses a skip declaration that cannot be made at all,
// before anything is read or written.
func CheckSkips(tokens []string, reason string) error {
	if strings.TrimSpace(reason) == "" {
		return fmt.Errorf("skip: %w: an unexplained skip is refused", ErrReasonRequired)
	}
	if len(tokens) == 0 {
		return errors.New("skip: name at least one node or skip set")
	}
	return nil
}

// skipVocabulary lists what may be declared skipped, for a rejection.
func (rt *Runtime) skipVocabulary() string {
	var nodes, sets []string
	for _, n := range rt.Graph.Nodes {
		if n.Skippable && !n.OptIn {
			nodes = append(nodes, n.ID)
		}
	}
	for _, s := range rt.Graph.SkipSets {
		sets = append(sets, s.Name)
	}
	out := "skippable nodes: " + orNone(nodes)
	if len(sets) > 0 {
		out += "; skip sets: " + strings.Join(sets, ", ")
	}
	return out
}

// announce posts an audit comment for an operator act; best effort. It
// returns a warning when the comment did not go up.
func (rt *Runtime) announce(item WorkItem, body string) string {
	_, err := rt.integration().Call("add-comment", map[string]any{"ref": item.Ref, "body": body})
	if err != nil {
		return "could not post the audit comment: " + err.Error()
	}
	return ""
}

// Forcing is what Force did.
type Forcing struct {
	WorkItem string   `json:"workItem"`
	FromNode string   `json:"fromNode"`
	ToNode   string   `json:"toNode"`
	Reason   string   `json:"reason"`
	Warnings []string `json:"warnings"`
}

// Force moves the pointer to to, regardless of gates. It never forges a
// verdict: the move is recorded as forced and the bypassed gate keeps its
// real verdict, so check --recompute still reports it. It warns when the
// move is off the declared edges or bypasses a required node.
func (rt *Runtime) Force(id, to, reason, actor string) (*Forcing, error) {
	if err := rt.CheckForce(to, reason); err != nil {
		return nil, err
	}
	reason = strings.TrimSpace(reason)
	target, _ := rt.Graph.Node(to)
	item, err := rt.WorkItem(id)
	if err != nil {
		return nil, err
	}
	if actor == "" {
		actor = "(shell)"
	}
	res := &Forcing{WorkItem: item.Ref, ToNode: to, Reason: reason, Warnings: []string{}}
	err = rt.lockedItem(item, func(tx *txn) error {
		st := tx.st
		from := cmp.Or(st.CurrentNode, rt.Graph.Start)
		fromNode, err := rt.Graph.Node(from)
		if err != nil {
			return err
		}
		res.FromNode = from
		onEdge := false
		for _, e := range rt.Graph.EdgesFrom(from) {
			onEdge = onEdge || e.To == to
		}
		if !onEdge {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s -> %s is not a declared edge; you are deliberately outside the model", from, to))
		}
		if fromNode.Required || target.Required {
			bypassed := to
			if fromNode.Required {
				bypassed = from
			}
			res.Warnings = append(res.Warnings, fmt.Sprintf("node %q is marked required; this force bypasses a guarantee the process treats as mandatory", bypassed))
		}
		warnings := make([]any, len(res.Warnings))
		for i, w := range res.Warnings {
			warnings[i] = w
		}
		st.Forced = append(st.Forced, map[string]any{"from": from, "to": to, "reason": reason, "actor": actor,
			"at": Timestamp(rt.now()), "warnings": warnings})
		st.enter(to, rt.now())
		st.Record(to).Forced = true
		tx.emit("graph.forced", "warning", map[string]any{"work_item": item.Ref, "from": res.FromNode, "to": to, "actor": actor, "reason": reason})
		return tx.commit()
	})
	if err != nil {
		return nil, err
	}
	if w := rt.announce(item, fmt.Sprintf("forced transition %s -> %s by %s. Reason: %s. This moved the pointer only; the bypassed gate keeps its real verdict.", res.FromNode, to, actor, reason)); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	return res, nil
}

// CheckForce refuses a force that cannot be made at all (no reason, a
// node the loop does not have), before anything is read or written.
func (rt *Runtime) CheckForce(to, reason string) error {
	if strings.TrimSpace(reason) == "" {
		return fmt.Errorf("force: %w: an unexplained override is refused", ErrReasonRequired)
	}
	_, err := rt.Graph.Node(to)
	return err
}

// RunReport is what Run did, step by step.
// Why a run ended, besides a step's own status.
const (
	StoppedTerminal = "terminal"
	StoppedLooping  = "looping"
	StoppedMaxNodes = "max-nodes"
)

// Fails reports whether the run ended short of where it could go: it
// waits at a human gate and ends at a terminal node alike without failing.
func (r *RunReport) Fails() bool {
	return r.Stopped != string(StatusWait) && r.Stopped != StoppedTerminal
}

type RunReport struct {
	WorkItem string `json:"workItem"`
	Steps    []Step `json:"steps"`
	// Stopped says why the run ended: wait, block, escalated
	// (a step's status), or StoppedTerminal, StoppedLooping,
	// StoppedMaxNodes.
	Stopped string `json:"stopped"`
	// At is the node the run stopped at.
	At     string `json:"at"`
	DryRun bool   `json:"dryRun"`
}

// Run advances id until it waits, blocks, escalates or reaches a terminal
// node, at most maxNodes times; a node evaluated three times stops the run
// as looping. With dryRun nothing is written, called or spawned: the walk is
// simulated on an in-memory copy of the state with read-only evaluation and
// no entry chains, and reports where a real run would stop first.
func (rt *Runtime) Run(id string, maxNodes int, dryRun bool, event *Event) (*RunReport, error) {
	if maxNodes < 1 {
		maxNodes = 1
	}
	rep := &RunReport{WorkItem: id, DryRun: dryRun, Steps: []Step{}}
	if dryRun {
		return rt.dryRun(id, maxNodes, rep, event)
	}
	seen := map[string]int{}
	for range maxNodes {
		step, err := rt.Advance(id, event)
		if err != nil {
			return rep, err
		}
		event = nil // the inbound comments answer the first gate only
		rep.Steps = append(rep.Steps, *step)
		rep.At = step.Node
		switch {
		case step.Status == string(StatusWait) || step.Status == string(StatusBlock) || step.Status == StatusEscalated:
			rep.Stopped = step.Status
			return rep, nil
		case step.To == "" && step.Terminal:
			rep.Stopped = StoppedTerminal
			return rep, nil
		}
		rep.At = step.To
		if seen[step.Node]++; seen[step.Node] > 2 {
			rep.Stopped = StoppedLooping
			return rep, nil
		}
	}
	rep.Stopped = StoppedMaxNodes
	return rep, nil
}

func (rt *Runtime) dryRun(id string, maxNodes int, rep *RunReport, event *Event) (*RunReport, error) {
	files := NewFiles(rt.Checkout)
	item, st, err := rt.load(id, files)
	if err != nil {
		return nil, err
	}
	skips := rt.DeclaredSkips(st)
	cur := st.CurrentNode
	if cur == "" {
		cur = rt.skipRoute(rt.Graph.Start, skips, nil)
	}
	seen := map[string]int{}
	for range maxNodes {
		n, err := rt.Graph.Node(cur)
		if err != nil {
			return nil, err
		}
		out := RunChain(n.Exit, rt.pureContext(item, n, st, files, event))
		event = nil // the inbound comments answer the first gate only
		step := Step{Node: cur, Status: string(out.Status), Outcome: out.Outcome(), Messages: renderMessages(out.Messages()), Terminal: n.Terminal}
		rep.At = cur
		if out.Status != StatusPass {
			rep.Steps = append(rep.Steps, step)
			rep.Stopped = string(out.Status)
			return rep, nil
		}
		target, ok := rt.Graph.Next(cur, out.Outcome())
		if !ok {
			rep.Steps = append(rep.Steps, step)
			rep.Stopped = StoppedTerminal
			if !n.Terminal {
				rep.Stopped = StatusEscalated
				step.Messages = append(step.Messages, fmt.Sprintf("no declared edge from %s on outcome %q", cur, out.Outcome()))
				rep.Steps[len(rep.Steps)-1] = step
			}
			return rep, nil
		}
		step.To = rt.skipRoute(target, skips, nil)
		rep.Steps = append(rep.Steps, step)
		cur = step.To
		rep.At = cur
		if seen[step.Node]++; seen[step.Node] > 2 {
			rep.Stopped = StoppedLooping
			return rep, nil
		}
	}
	rep.Stopped = StoppedMaxNodes
	return rep, nil
}
