package policy

import (
	"fmt"
	"path"
	"time"

	"github.com/the-loop/the-loop/graph"
)

// What the ingress (package channels) asks of a repository beyond the
// verbs: whose checkout it is, adopting it under the work item's name, and
// where an item stands before a reply is handed to it.

// CheckoutOrigin is owner/name of the GitHub repository the checkout at
// root names as its origin remote, read from its git config without
// running git; ok is false when root is no checkout, has no origin, or the
// origin is not a repository on host (the operator's GitHub host,
// CLIConfig.GitHubHost) in GitHub's charset. It is the ownership proof the
// ingress makes before it reads or writes a bound checkout: a work item's
// number names a spec folder, not a project. The checkout names its
// origin; only the operator names the host it must be on.
func CheckoutOrigin(root, host string) (slug string, ok bool) {
	co, err := openCheckout(root)
	if err != nil {
		return "", false
	}
	defer co.Close()
	owner, name, ok := checkoutOrigin(co, host)
	if !ok {
		return "", false
	}
	return owner + "/" + name, true
}

// AdoptAs is seed 002's second call site: the ingress adopts an unadopted
// repository when an authorized person starts (or drives) one of its work
// items, after proving the checkout is owner/name's own, and names owner/name
// in ticketing.github. It writes nothing when the repository is adopted
// already, or when item's state records the contribution loop (a guest
// does not install itself; a caller that knows an item is a contribution
// by other means must not call it). ref names the item in the event.
//
// It reports ScaffoldWritten, ScaffoldPresent or ScaffoldFailed, and never
// fails: a repository that could not be adopted is worked as it is, on the
// per-key defaults, with a warning logged, a note and the
// harness.config_scaffold_failed event.
func (e *Engine) AdoptAs(item, ref, owner, name string) string {
	if e.Harness.Initialized() {
		return ScaffoldPresent
	}
	if _, recorded, _, err := e.itemState(item, Selector{}); err == nil && recorded == graph.ContributionLoop {
		return ScaffoldFailed
	}
	outcome, err := scaffold(e.Checkout, e.builtinDefault(), owner, name, false)
	switch {
	case err != nil:
		e.adoptFailed(ref, err)
		return ScaffoldFailed
	case outcome != ScaffoldWritten:
		return outcome
	}
	e.emit("harness.config_scaffolded", "info", map[string]any{"work_item": ref, "path": scaffoldedFile, "repo": e.originFor(owner, name)})
	if err := e.loadHarness(); err != nil {
		// The file just written is the built-in default: reading it back
		// cannot fail unless the checkout changed under us.
		e.log.Warn("could not read the harness config just written", "root", e.Root, "err", err)
	}
	return ScaffoldWritten
}

func (e *Engine) originFor(owner, name string) string {
	if validOrigin(owner, name) {
		return owner + "/" + name
	}
	return ""
}

// Start enters item's loop at its start node and runs the start node's entry
// chain, as the ingress does when an authorized person starts a work item.
// loop chooses the outer loop for an item whose state records none yet:
// "" for the work-item loop, graph.ContributionLoop or graph.AdhocLoop; an
// item already walking a loop keeps it, since a later command cannot
// re-shape a walk in progress. It is idempotent: an item already entered is
// left as it is and Start returns nil. Start never adopts the repository
// (see AdoptAs).
func (e *Engine) Start(item string, sel Selector, loop string) (*graph.Step, error) {
	if loop != "" && graph.OuterLoop(loop) != loop {
		return nil, fmt.Errorf("start %s: got loop %q, want %s or %s", item, loop, graph.ContributionLoop, graph.AdhocLoop)
	}
	st, recorded, _, err := e.itemState(item, sel)
	if err != nil {
		return nil, err
	}
	if st.Loop == "" && sel.PR == 0 {
		recorded = loop
	}
	rt, err := e.runtime(recorded, sel, true)
	if err != nil {
		return nil, err
	}
	return rt.Start(item)
}

// Position is where a work item stands, as the ingress reads it before it
// hands a reply to the item.
type Position struct {
	// Loop is the loop the item walks.
	Loop string
	// Node is the node an advance would evaluate: the current node, or the
	// loop's start node when the item has not entered it.
	Node string
	// Entered is false when the item has no pointer yet.
	Entered bool
	// Human is set when Node is answered by a person: a reply goes to it.
	Human bool
	// Terminal is set when Node is its loop's last: an item there has
	// nothing left to advance to.
	Terminal bool
	// EnteredAt is when the item last entered Node, as its state records
	// it; zero when it does not, or not in a form that reads.
	EnteredAt time.Time
}

// Position reads where item stands on sel's loop, from its state alone: it
// runs no hook and loads no repository module.
func (e *Engine) Position(item string, sel Selector) (Position, error) {
	st, recorded, dir, err := e.itemState(item, sel)
	if err != nil {
		return Position{}, err
	}
	name := sel.Loop()
	if sel.PR == 0 && recorded != "" {
		name = recorded
	}
	g, err := Loop(name)
	if err != nil {
		return Position{}, err
	}
	p := Position{Loop: name, Node: st.CurrentNode, Entered: st.CurrentNode != ""}
	if !p.Entered {
		p.Node = g.Start
	}
	n, err := g.Node(p.Node)
	if err != nil {
		return Position{}, &graph.StateError{Path: path.Join(dir, graph.StateFile), Msg: fmt.Sprintf("currentNode %q is not a node of %s", p.Node, name)}
	}
	p.Human, p.Terminal = n.Actor == graph.ActorHuman, n.Terminal
	if rec := st.Nodes[p.Node]; rec != nil && p.Entered {
		p.EnteredAt, _ = time.Parse(time.RFC3339Nano, rec.EnteredAt)
	}
	return p, nil
}
