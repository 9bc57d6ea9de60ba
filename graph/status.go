package graph

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
)

// NodeReport is one node's verdict as check reports it. Its JSON keys are the
// original tool's, so tooling built on that output keeps working.
//
// Messages are the original's one-line strings. The keys after attempts
// are this tool's: Reached is false for a node past the pointer, whose
// verdict is not a finding yet; Findings are the messages with their hook,
// severity and place; Hooks say what each hook of the node did, or why it
// did not run.
type NodeReport struct {
	Node     string    `json:"node"`
	Status   string    `json:"status"`
	Outcome  string    `json:"outcome"`
	Messages []string  `json:"messages"`
	Forced   bool      `json:"forced"`
	Attempts int       `json:"attempts"`
	Reached  bool      `json:"reached"`
	Findings []Finding `json:"findings"`
	Hooks    []HookRun `json:"hooks"`
	// Elapsed is how long the node's exit chain took to evaluate: a
	// measurement, so kept out of the JSON, whose output is stable.
	Elapsed time.Duration `json:"-"`
}

// Satisfied is pass or skip.
func (r NodeReport) Satisfied() bool {
	return r.Status == string(StatusPass) || r.Status == string(StatusSkip)
}

// StatusReport is one work item's verdicts, in declaration order.
type StatusReport struct {
	WorkItem    string         `json:"workItem"`
	CurrentNode string         `json:"currentNode"`
	OK          bool           `json:"ok"`
	Parked      map[string]any `json:"parked"`
	Nodes       []NodeReport   `json:"nodes"`
	// Dir is the item's spec folder, repository-relative: where a report
	// points for a finding that names no file.
	Dir string `json:"-"`
	// Loop is the name of the loop the item was judged against.
	Loop string `json:"-"`
	// Artifact is the item's first artifact on disk, in the loop's
	// order of nodes (requirements.md, say), repository-relative; "" when
	// it has none. A format that must point at a file's line points a
	// finding about the whole item there.
	Artifact string `json:"-"`
	// Elapsed is how long the item's evaluation took; see
	// NodeReport.Elapsed.
	Elapsed time.Duration `json:"-"`
	// reach, when set, is a node past the pointer up to which nodes count
	// as reached all the same (see Reach).
	reach string
	// pending are the stopped chains of nodes not reached, whose
	// repository hooks run report-only if a Reach takes the pointer there
	// (see runReportOnly).
	pending []reportOnly
}

// Reached splits the nodes at the pointer: those up to and including the
// current node are findings, those after it are simply not done yet.
func (s *StatusReport) Reached() (reached, ahead []NodeReport) {
	i := s.pointer()
	return s.Nodes[:i], s.Nodes[i:]
}

// pointer is the index just past the current node, or past reach when
// that lies further on; every node when neither is among them.
func (s *StatusReport) pointer() int {
	at := -1
	for i, n := range s.Nodes {
		if n.Node == s.CurrentNode || n.Node == s.reach {
			at = i
		}
	}
	if at < 0 {
		return len(s.Nodes)
	}
	return at + 1
}

// Reach makes every node up to node count as reached, when node lies past
// the pointer, and reports whether it did. The pointer is the checkout's
// state file, which the change under review may have moved back: a
// pointer a trusted revision recorded is a floor it cannot go below.
func (s *StatusReport) Reach(node string) bool {
	before := s.pointer()
	s.reach = node
	if s.pointer() <= before {
		s.reach = ""
		return false
	}
	s.settle()
	s.runReportOnly()
	return true
}

// settle marks the reached nodes and decides OK: every node up to the
// pointer is satisfied.
func (s *StatusReport) settle() {
	end := s.pointer()
	s.OK = true
	for i := range s.Nodes {
		s.Nodes[i].Reached = i < end
		if i < end && !s.Nodes[i].Satisfied() {
			s.OK = false
		}
	}
}

// What makes a report a failure (check --fail-on).
const (
	// FailOnUnmet fails on any unsatisfied node up to the pointer, a human
	// wait included: what you want when asking where an item stands.
	FailOnUnmet = "unmet"
	// FailOnBlock fails only on a block, something an agent can fix: a pull
	// request waiting on its reviewer is the normal state of an open one,
	// and a gate that is red by construction is one people merge past.
	FailOnBlock = "block"
)

// Fails applies a FailOn rule to the report.
func (s *StatusReport) Fails(failOn string) bool {
	if failOn == FailOnBlock {
		return s.Blocked()
	}
	return !s.OK
}

// Blocked reports whether a node an agent can fix is blocked at or before
// the pointer.
func (s *StatusReport) Blocked() bool {
	reached, _ := s.Reached()
	for _, n := range reached {
		if n.Status == string(StatusBlock) {
			return true
		}
	}
	return false
}

// Status evaluates every node's exit chain in declaration order, purely: no
// write, no subprocess, no outbound call, no event. Human gates read wait,
// because no inbound event is passed, unless the runtime has a Replies
// source to read the item's thread from. recompute ignores the stored pointer
// and derives it from the artifacts alone: stored state is a cache, never an
// authority. Declared skips are honoured in both modes; a declaration the
// graph refuses is honoured in neither and called out on its node.
func (rt *Runtime) Status(id string, recompute bool) (*StatusReport, error) {
	return rt.StatusWith(id, nil, recompute)
}

// StatusWith is Status for a caller that already read the item's state
// (to choose its loop); st nil reads it.
func (rt *Runtime) StatusWith(id string, st *State, recompute bool) (*StatusReport, error) {
	return rt.StatusIn(NewFiles(rt.Checkout), id, st, recompute)
}

// StatusIn is StatusWith reading through files, a read-only evaluation's
// (NewFiles) of the runtime's checkout, that the caller may have read the
// item's state through.
func (rt *Runtime) StatusIn(files *Files, id string, st *State, recompute bool) (*StatusReport, error) {
	item, err := rt.workItem(id, files)
	if err != nil {
		// Departure from the original (docs/compatibility.md#check-on-an-item-with-no-spec-folder): a mistyped id in CI must not pass.
		return nil, err
	}
	if st == nil {
		if st, err = LoadStateIn(files, rt.StateDir(item), item.ID); err != nil {
			return nil, err
		}
	}
	var replies []Reply
	read := false
	if rt.Replies != nil && !recompute {
		replies, err = rt.Replies(item)
		switch {
		case errors.Is(err, ErrRepliesUnread):
			replies = nil
		case err != nil:
			return nil, err
		default:
			read = true
		}
	}
	skips := rt.DeclaredSkips(st)
	refused := rt.refusedSkips(st, skips)
	// A reply answers one gate at most: once a gate has passed on the
	// replies it was handed, no later gate is handed them again, whatever
	// windows the state's times draw (the state is the checkout's).
	consumed := make([]bool, len(replies))
	base := rt.pureItemContext(item, st, skips, files)
	runs := make([]HookRun, 0, rt.Graph.hookCount())
	rep := &StatusReport{WorkItem: id, Dir: item.Dir, Loop: rt.Graph.Name, Nodes: make([]NodeReport, 0, len(rt.Graph.Nodes))}
	for _, n := range rt.Graph.Nodes {
		rec := st.Nodes[n.ID]
		attempts := 0
		if rec != nil {
			attempts = rec.Attempts
		}
		if decl, ok := skips[n.ID]; ok {
			prov := SkipProvenance(decl)
			rep.Nodes = append(rep.Nodes, NodeReport{Node: n.ID, Status: string(StatusSkip), Outcome: OutcomeSkipped,
				Messages: []string{prov}, Attempts: attempts, Findings: []Finding{},
				Hooks: chainRuns(&runs, n, nil, NotRunSkipped+": "+prov)})
			continue
		}
		var event *Event
		var handed []int
		if n.Actor == ActorHuman {
			event, handed = repliesAt(replies, consumed, n, st, rt.Graph.Start)
		}
		nc := base.at(n, Exit, event)
		if n.Actor == ActorHuman && !read && !recompute {
			nc.Recorded = recordedAt(st, n)
		}
		began := time.Now()
		out := RunChain(n.Exit, &nc)
		elapsed := time.Since(began)
		if out.Status == StatusPass {
			for _, i := range handed {
				consumed[i] = true
			}
			if back, ok := rt.sentBack(n, out.Outcome()); ok {
				// An answer that sends the item back (changes requested)
				// is a decision, and the node is not met by it.
				out = sendsBack(n, out, back)
			}
		}
		msgs := renderMessages(out.Messages())
		findings := chainFindings(n.ID, out)
		for _, w := range out.Warnings {
			msgs = append(msgs, w.Text)
		}
		if slices.Contains(refused, n.ID) {
			const refusal = "graph state declares a skip on this node, which is not skippable; the declaration is refused and has no effect"
			msgs = append(msgs, refusal)
			findings = append(findings, Finding{Hook: StateHook, Node: n.ID, Severity: SeverityWarning, Text: refusal,
				Path: path.Join(rt.StateDir(item), StateFile)})
		}
		rep.Nodes = append(rep.Nodes, NodeReport{Node: n.ID, Status: string(out.Status), Outcome: out.Outcome(),
			Messages: msgs, Forced: rec != nil && rec.Forced && !recompute, Attempts: attempts,
			Findings: findings, Hooks: chainRuns(&runs, n, &out, ""), Elapsed: elapsed})
		if rt.AllFindings {
			if p, ok := stoppedRest(len(rep.Nodes)-1, n, &nc, &out); ok {
				rep.pending = append(rep.pending, p)
			}
		}
	}
	rep.Artifact = rt.firstArtifact(item.Dir, files)
	rep.CurrentNode = st.CurrentNode
	switch {
	case recompute || rep.CurrentNode == "":
		rep.CurrentNode = rt.Graph.Start
	case !rt.Graph.Has(rep.CurrentNode):
		// Departure from the original (docs/compatibility.md#a-pointer-that-names-no-node-of-the-loop): the unknown pointer is a finding, so the item is not ok.
		rep.Nodes = append(rep.Nodes, rt.unknownPointer(item, st))
	}
	if recompute {
		rep.CurrentNode = firstUnmet(rep.Nodes, rep.CurrentNode)
	} else {
		rep.Parked = st.Parked
	}
	rep.settle()
	rep.runReportOnly()
	return rep, nil
}

// unknownPointer is the report of a state whose pointer names no node of
// the loop: an older loop's node, or a hand edit's typo. Where the item
// stands cannot be told, so, as the original does, no node is taken to be
// ahead of it: the report's last entry is the pointer itself, after every
// node of the loop, and so every node is reached. The entry is a block
// at the state file saying so: an item whose place is unknown is not ok,
// whatever its nodes say.
func (rt *Runtime) unknownPointer(item WorkItem, st *State) NodeReport {
	msg := fmt.Sprintf("currentNode %q is not a node of %s: where the item stands cannot be told, so every node is reported as reached; force the item to one of the loop's nodes to go on", st.CurrentNode, rt.Graph.Name)
	return NodeReport{Node: st.CurrentNode, Status: string(StatusBlock), Messages: []string{msg},
		Findings: []Finding{{Hook: StateHook, Node: st.CurrentNode, Severity: SeverityError, Text: msg, Path: rt.statePath(item)}},
		Hooks:    []HookRun{{Hook: StateHook, Boundary: string(Exit), Ran: true, Status: string(StatusBlock)}}}
}

// firstArtifact is the first artifact of the loop's nodes that is a
// file in the spec folder dir.
func (rt *Runtime) firstArtifact(dir string, files *Files) string {
	for _, n := range rt.Graph.Nodes {
		for _, entry := range n.Produces {
			for _, name := range ArtifactNames(entry) {
				if p := path.Join(dir, name); files.IsRegular(p) {
					return p
				}
			}
		}
	}
	return ""
}

// sentBack is where outcome's edge takes the item from n, when that is n
// itself or a node before it: a gate answered "changes requested" passes
// its chain under advance, which then routes the item back.
func (rt *Runtime) sentBack(n *Node, outcome string) (string, bool) {
	to, ok := rt.Graph.Next(n.ID, outcome)
	if !ok || rt.Graph.Index(to) > rt.Graph.Index(n.ID) {
		return "", false
	}
	return to, true
}

// sendsBack is out as check reports a gate answered with an outcome that
// sends the item back to node back: a block, saying so, at the hook that
// decided it.
func sendsBack(n *Node, out ChainOutcome, back string) ChainOutcome {
	decider := "the gate"
	for i := len(out.Results) - 1; i >= 0; i-- {
		if out.Results[i].DeclaredOutcome() != "" {
			decider = out.Results[i].Hook
			break
		}
	}
	r := Block(decider, Errorf("%s was answered %s: the item goes back to %s", n.ID, out.Outcome(), back))
	r.Data = map[string]any{"outcome": out.Outcome()}
	out.Results = append(slices.Clip(out.Results), r)
	out.Status, out.Blocking = StatusBlock, &out.Results[len(out.Results)-1]
	return out
}

func firstUnmet(nodes []NodeReport, fallback string) string {
	for _, n := range nodes {
		if !n.Satisfied() {
			return n.Node
		}
	}
	if len(nodes) > 0 {
		return nodes[len(nodes)-1].Node
	}
	return fallback
}

// Detach makes every string of the report that owned says is a view of
// borrowed memory (an Arena's) a copy of its own, so that the memory can
// be used again while the report is still to be written. Node ids, hook
// names and most messages are the graph's or freshly made, and stay as
// they are.
func (s *StatusReport) Detach(owned func(string) bool) {
	own := func(p *string) {
		if owned(*p) {
			*p = strings.Clone(*p)
		}
	}
	own(&s.WorkItem)
	own(&s.CurrentNode)
	own(&s.Dir)
	own(&s.Loop)
	own(&s.Artifact)
	own(&s.reach)
	for i := range s.Nodes {
		n := &s.Nodes[i]
		own(&n.Node)
		own(&n.Status)
		own(&n.Outcome)
		for j := range n.Messages {
			own(&n.Messages[j])
		}
		for j := range n.Findings {
			f := &n.Findings[j]
			own(&f.Hook)
			own(&f.Node)
			own(&f.Severity)
			own(&f.Text)
			own(&f.Path)
		}
		for j := range n.Hooks {
			h := &n.Hooks[j]
			own(&h.Hook)
			own(&h.Boundary)
			own(&h.Status)
			own(&h.Reason)
		}
	}
	// Parked is decoded JSON, whose strings encoding/json made afresh.
}
