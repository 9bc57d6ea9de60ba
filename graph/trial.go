package graph

import (
	"fmt"
	"slices"
	"strings"
)

// Trial is one hook run on its own against a work item, as its author asks
// for it: at a node and boundary of their choosing, whatever the item's
// position and whatever the hooks before it decide, with ctx built as check
// builds it (read-only, every read through one cache, the same limits).
type Trial struct {
	Hook string
	// Node is where to run it: "" for the one node the hook is attached to
	// in this loop, else the item's current node.
	Node string
	// Boundary is "" for the attachment's, else exit.
	Boundary Boundary
	// Params replace the attachment's with: when not nil.
	Params map[string]any
}

// TrialReport is what a Trial did, and whether check would have done it.
type TrialReport struct {
	WorkItem    string   `json:"workItem"`
	Loop        string   `json:"loop"`
	Node        string   `json:"node"`
	Boundary    Boundary `json:"boundary"`
	CurrentNode string   `json:"currentNode"`
	// Attached says whether the hook is in the node's chain at Boundary.
	// When it is not, it ran as if attached at the end of that chain.
	Attached bool           `json:"attached"`
	Params   map[string]any `json:"with"`
	// Before are the results of the hooks ahead of it in that chain, as
	// ctx.results shows them: up to the first that blocked or waited.
	Before []Result `json:"before"`
	Result Result   `json:"result"`
	// Findings are the hook's messages as check would report them, were
	// it the hook that decided the node, and the notices of a hook that
	// passed or skipped, which check keeps off its report.
	Findings []Finding `json:"findings"`
	Trace    HookTrace `json:"trace"`
	// UnderCheck is why check would not run the hook here, or not show
	// what it found; "" when it would.
	UnderCheck string `json:"underCheck,omitempty"`
}

// Ran reports whether the hook ran to a result: false when it failed
// (a Starlark error, a panic), which check reports as a block.
func (r *TrialReport) Ran() bool { return r.Trace.Err == "" }

// Trial runs one hook of the loop against item id. The hooks ahead of it
// in its chain run first, purely, so that ctx.results is what check would
// give it; the hook then runs whatever they decided.
func (rt *Runtime) Trial(id string, t Trial) (*TrialReport, error) {
	if _, ok := rt.Graph.Hook(t.Hook); !ok {
		names := append(rt.Graph.Extensions(), rt.Graph.Registry().Names()...)
		return nil, fmt.Errorf("no hook %q in the %s loop%s; its repository hooks are: %s", t.Hook, rt.Graph.Name, didYouMean(t.Hook, names), orNone(rt.Graph.Extensions()))
	}
	files := NewFiles(rt.Checkout)
	item, st, err := rt.load(id, files)
	if err != nil {
		return nil, err
	}
	current := rt.current(st)
	if !rt.Graph.Has(current) {
		return nil, rt.unknownCurrent(item, st)
	}
	n, b, err := rt.trialPlace(t, current)
	if err != nil {
		return nil, err
	}
	chain := n.Exit
	if b == Entry {
		chain = n.Entry
	}
	at := slices.IndexFunc(chain, func(e ChainEntry) bool { return e.Hook == t.Hook })
	rep := &TrialReport{WorkItem: id, Loop: rt.Graph.Name, Node: n.ID, Boundary: b, CurrentNode: current, Attached: at >= 0}
	entry := ChainEntry{Hook: t.Hook, Params: map[string]any{}}
	before := chain
	if at >= 0 {
		entry, before = chain[at], chain[:at]
	}
	if t.Params != nil {
		entry.Params, entry.Prepared = t.Params, nil
	}
	rep.Params = entry.Params

	base := rt.pureContextAt(item, n, b, st, files, nil)
	prior := RunChain(before, base)
	rest := ChainOutcome{Results: slices.Clip(prior.Results)}
	traced := *base
	traced.Trace = &rep.Trace
	rep.Result = rest.run(entry, &traced)
	rep.Before = prior.Results

	own := ChainOutcome{Status: rep.Result.Status, Results: []Result{rep.Result}, Warnings: rest.Warnings}
	if rep.Result.Status != StatusPass && rep.Result.Status != StatusSkip {
		own.Blocking = &own.Results[0]
	}
	rep.Findings = chainFindings(n.ID, own)
	if own.Blocking == nil {
		// What a hook that let the chain go on said to explain itself is
		// its author's to see, though check keeps it off the report.
		for _, m := range rep.Result.Messages {
			if NormalSeverity(m.Severity, SeverityNotice) == SeverityNotice {
				rep.Findings = append(rep.Findings, Finding{Hook: rep.Result.Hook, Node: n.ID, Severity: SeverityNotice,
					Text: m.Text, Path: m.Path, Line: max(m.Line, 0), Column: max(m.Column, 0)})
			}
		}
	}
	rep.UnderCheck = rt.underCheck(rep, st, prior)
	return rep, nil
}

// trialPlace resolves where a trial runs.
func (rt *Runtime) trialPlace(t Trial, current string) (*Node, Boundary, error) {
	b := t.Boundary
	if b != "" && b != Entry && b != Exit {
		return nil, "", fmt.Errorf("boundary %q: want entry or exit", b)
	}
	id := t.Node
	if id == "" {
		places := rt.Graph.Places(t.Hook)
		if at := slices.DeleteFunc(slices.Clone(places), func(p Place) bool { return p.Boundary != b }); b != "" && len(at) > 0 {
			places = at
		}
		switch len(places) {
		case 0:
			id = current
		case 1:
			// Its node, at the boundary asked for when one is.
			id = places[0].Node
			if b == "" {
				b = places[0].Boundary
			}
		default:
			where := make([]string, len(places))
			for i, p := range places {
				where[i] = p.String()
			}
			return nil, "", fmt.Errorf("%s is attached at %s in the %s loop; name the node to run it at", t.Hook, strings.Join(where, ", "), rt.Graph.Name)
		}
	}
	if b == "" {
		b = Exit
	}
	n, ok := rt.Graph.byID[id]
	if !ok {
		return nil, "", rt.Graph.NoNode(id)
	}
	return n, b, nil
}

// NoNode is the error for a node id the loop does not have, suggesting
// the one likely meant.
func (g *Graph) NoNode(id string) error {
	return fmt.Errorf("the %s loop has no node %q%s; its nodes are: %s", g.Name, id, didYouMean(id, g.NodeIDs()), strings.Join(g.NodeIDs(), ", "))
}

func didYouMean(name string, candidates []string) string {
	if s := Closest(name, candidates); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// underCheck says why check would not run the trial's hook at its place,
// or would not show what it found there: every reason that holds, each of
// which alone would do; "" when none does.
func (rt *Runtime) underCheck(rep *TrialReport, st *State, prior ChainOutcome) string {
	var why []string
	switch {
	case rep.Boundary == Entry:
		why = append(why, NotRunEntry+"; attach it at exit for check to run it")
	case !rep.Attached:
		why = append(why, fmt.Sprintf("it is not attached at %s's exit; check runs it only where graph.hooks.attach puts it", rep.Node))
	}
	if decl, ok := rt.DeclaredSkips(st)[rep.Node]; ok {
		why = append(why, NotRunSkipped+": "+SkipProvenance(decl))
	} else if prior.Blocking != nil {
		why = append(why, fmt.Sprintf("the chain stops before it: %s %s (%s), and check runs a hook only when every hook before it in the chain passed or skipped",
			prior.Blocking.Hook, verbed(prior.Blocking.Status), firstMessage(*prior.Blocking)))
	}
	if at, here := rt.Graph.Index(rep.Node), rt.Graph.Index(rep.CurrentNode); here >= 0 && at > here {
		why = append(why, fmt.Sprintf("the item is at %s, before %s: check evaluates %s but reports only the nodes up to the item's current one", rep.CurrentNode, rep.Node, rep.Node))
	}
	return strings.Join(why, "; and ")
}

// firstMessage is what a result said first, for a one-line mention.
func firstMessage(r Result) string {
	if len(r.Messages) == 0 {
		return "it gave no reason"
	}
	return r.Messages[0].Render()
}

// Place is one attachment of a hook: a node's entry or exit chain.
type Place struct {
	Node     string
	Boundary Boundary
}

func (p Place) String() string { return p.Node + " " + string(p.Boundary) }

// Places lists where the hook name is in the loop's chains, in node order,
// entry before exit.
func (g *Graph) Places(name string) []Place {
	var out []Place
	has := func(chain []ChainEntry) bool {
		return slices.ContainsFunc(chain, func(e ChainEntry) bool { return e.Hook == name })
	}
	for _, n := range g.Nodes {
		if has(n.Entry) {
			out = append(out, Place{n.ID, Entry})
		}
		if has(n.Exit) {
			out = append(out, Place{n.ID, Exit})
		}
	}
	return out
}
