package graph

import (
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
	if err := checkLength("--actor", actor, MaxActor); err != nil {
		return nil, fmt.Errorf("skip: %w", err)
	}
	reason = strings.TrimSpace(reason)
	item, create, err := rt.creating(id)
	if err != nil {
		return nil, err
	}
	res := &SkipDeclaration{WorkItem: item.Ref, Reason: reason, Declared: []string{}, Rejected: []Rejection{}, Warnings: []string{}}
	if actor == "" {
		actor = "(shell)"
	}
	if create != nil {
		// A new item: its folder is created only if a skip is declared,
		// as the original writes the state only then.
		declared, rejected, tr, err := rt.machine(item).declareSkips(NewState(id), tokens, reason, actor, rt.now())
		if err != nil {
			return nil, err
		}
		if !tr.effects.write {
			res.Declared, res.Rejected = declared, rejected
			for _, e := range tr.effects.events {
				rt.emit(e.event, e.level, e.fields)
			}
			return res, nil
		}
		if item, err = create(); err != nil {
			return nil, err
		}
	}
	err = rt.lockedItem(item, func(tx *txn) error {
		var tr *transition
		var err error
		res.Declared, res.Rejected, tr, err = rt.machine(item).declareSkips(tx.st, tokens, reason, actor, rt.now())
		if err != nil {
			return err
		}
		_, err = tx.apply(tr)
		return err
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
	if err := checkLength("--reason", reason, MaxReason); err != nil {
		return fmt.Errorf("skip: %w", err)
	}
	if len(tokens) == 0 {
		return errors.New("skip: name at least one node or skip set")
	}
	return nil
}

// skipVocabulary lists what may be declared skipped, for a rejection.
func skipVocabulary(g *Graph) string {
	var nodes, sets []string
	for _, n := range g.Nodes {
		if n.Skippable && !n.OptIn {
			nodes = append(nodes, n.ID)
		}
	}
	for _, s := range g.SkipSets {
		sets = append(sets, s.Name)
	}
	out := "skippable nodes: " + orNone(nodes)
	if len(sets) > 0 {
		out += "; skip sets: " + strings.Join(sets, ", ")
	}
	return out
}

// announce posts an audit comment for an operator act; best effort. It
// returns a warning when the comment did not go up. The integration marks
// what it posts as the-loop's own (the GitHub integration's add-comment
// appends the self-authored marker, which is GitHub markup and so its to
// write): the comment names the operator and the reason, and read back as
// the operator's words it could answer the very gate it reports on.
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
	if err := checkLength("--actor", actor, MaxActor); err != nil {
		return nil, fmt.Errorf("force: %w", err)
	}
	reason = strings.TrimSpace(reason)
	if actor == "" {
		actor = "(shell)"
	}
	res := &Forcing{ToNode: to, Reason: reason, Warnings: []string{}}
	var item WorkItem
	// A new item: the force enters it into the loop at to.
	err := rt.lockedCreating(id, func(tx *txn) error {
		item = tx.item
		from, warnings, tr, err := rt.machine(item).force(tx.st, to, reason, actor, rt.now())
		if err != nil {
			return err
		}
		res.WorkItem, res.FromNode, res.Warnings = item.Ref, from, warnings
		_, err = tx.apply(tr)
		return err
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
	if err := checkLength("--reason", reason, MaxReason); err != nil {
		return fmt.Errorf("force: %w", err)
	}
	_, err := rt.Graph.Node(to)
	return err
}

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

// RunReport is what Run did, step by step.
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
// as looping. Each step is an Advance under the item's lock.
//
// With dryRun nothing is written, called or spawned, and the report is
// what a run would do: each step is the same transition a run makes, from
// the same state, on what the node's exit chain decides when evaluated
// read-only; its state write is applied to an in-memory copy, and nothing
// else is applied. So the steps, the escalations, the selections recorded
// on the way, the loop detection and the stop are a run's; what differs is
// only what acting would have added: an entry chain's warnings are not in
// the steps, and a hook that decides differently when it may not act
// (a test command it may not spawn) is predicted as it decided.
//
// Departure from the original (docs/compatibility.md#graph-run---dry-run-exits-as-graph-run-would): the dry run walks the run's transitions instead of printing check's table.
func (rt *Runtime) Run(id string, maxNodes int, dryRun bool, event *Event) (*RunReport, error) {
	rep := &RunReport{WorkItem: id, DryRun: dryRun, Steps: []Step{}}
	if dryRun {
		if _, err := rt.dryRun(id, maxNodes, rep, event); err != nil {
			return nil, err
		}
		return rep, nil
	}
	err := walk(rep, maxNodes, event, func(event *Event) (*Step, error) { return rt.Advance(id, event) })
	return rep, err
}

// dryRun is Run's dry run, returning the scratch copy it walked: the state
// the run would leave, the bytes it would write and the events it would
// append.
func (rt *Runtime) dryRun(id string, maxNodes int, rep *RunReport, event *Event) (*scratch, error) {
	files := NewFiles(rt.Checkout)
	item, st, err := rt.load(id, files)
	if NoSpecFolder(err) {
		// A run creates a new item's folder and starts it afresh; its
		// preview walks the item as the run will find it, and writes nothing.
		item, _, err = rt.creating(id)
		st = NewState(id)
	}
	if err != nil {
		return nil, err
	}
	m := rt.machine(item)
	sc := &scratch{st: st, path: m.statePath, workItem: item.ID}
	err = walk(rep, maxNodes, event, func(event *Event) (*Step, error) {
		evaluate := func(n *Node) ChainOutcome {
			return RunChain(n.Exit, rt.pureContext(item, n, sc.st, files, event))
		}
		return rt.advance(m, sc.st, evaluate, sc.apply)
	})
	return sc, err
}

// walk advances with advance until a step stops the run, at most maxNodes
// times, and records the steps in rep: the one home of a run's stopping
// rules (wait, block, escalation, a terminal node, a loop, the bound), so
// that a dry run stops where a run does. The inbound event answers the
// first gate only.
func walk(rep *RunReport, maxNodes int, event *Event, advance func(*Event) (*Step, error)) error {
	seen := map[string]int{}
	for range max(maxNodes, 1) {
		step, err := advance(event)
		if err != nil {
			return err
		}
		event = nil
		rep.Steps = append(rep.Steps, *step)
		rep.At = step.Node
		switch {
		case step.Status == string(StatusWait) || step.Status == string(StatusBlock) || step.Status == StatusEscalated:
			rep.Stopped = step.Status
			return nil
		case step.To == "" && step.Terminal:
			rep.Stopped = StoppedTerminal
			return nil
		}
		rep.At = step.To
		if seen[step.Node]++; seen[step.Node] > 2 {
			rep.Stopped = StoppedLooping
			return nil
		}
	}
	rep.Stopped = StoppedMaxNodes
	return nil
}

// scratch is a dry run's executor. It applies a transition's state write
// to memory, reading the state back from the bytes it would have written,
// as the next step of a run reads the file; it keeps the events it would
// have appended, and it runs no entry chain: nothing is written, called or
// spawned.
type scratch struct {
	st             *State
	path, workItem string
	// written is the last state it would have written; events, what it
	// would have appended, in order.
	written []byte
	events  []emission
}

func (sc *scratch) apply(tr *transition) (*Step, error) {
	sc.st = tr.state
	sc.events = append(sc.events, tr.effects.events...)
	if tr.effects.write {
		data, err := tr.state.format()
		if err != nil {
			return nil, fmt.Errorf("encode graph state: %w", err)
		}
		if sc.st, err = ParseState(sc.path, data, sc.workItem); err != nil {
			return nil, err
		}
		sc.written = data
	}
	step := tr.step
	return &step, nil
}
