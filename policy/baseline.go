package policy

import (
	"cmp"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/the-loop/the-loop/graph"
)

// Under --rules-from the rules are the revision's, but an item's state is
// still the checkout's, and the change under review writes that file too.
// Where it lowers the gate, against what the revision records, the
// revision's state wins:
//
//   - the pointer: nodes up to the revision's pointer count as reached
//     however far back the checkout's state moved it (or whether it
//     deleted the file), so a block there cannot be hidden;
//   - the loop: the revision's, so a change cannot walk its item through
//     a loop of fewer gates;
//   - skips: one the checkout adds on a node the revision's pointer has
//     reached is not honoured (a skip is a plan, not an amnesty), while
//     one ahead of it is the change's to plan.
//
// An item the revision has no state for is the change's own. Which of the
// revision's items an item of the checkout is, whatever its folder is
// called now, is lineage.go's to say.

// baseline is the state the rules' revision holds for one item.
type baseline struct {
	rev  string // the revision's name, for what is said
	from string // the revision's item the state is of
	st   *graph.State
}

// baselinesOf are the states the rules' revision holds for item, whose
// state directory in the checkout is dir: its own, and those of the
// revision's items the checkout carries on as item (lineage.go); none
// when the rules come from the checkout.
func (e *Engine) baselinesOf(item, dir string, sel Selector) []*baseline {
	if e.rules == nil {
		return nil
	}
	// An unusable PR repository is refused where item's own state is read.
	sub, err := e.stateSubpath(sel)
	if err != nil {
		return nil
	}
	var out []*baseline
	for _, id := range e.floorsOf(item) {
		at := dir
		if id != item {
			at = graph.StateDirOf(path.Join(e.SpecDirRel(), id), sub)
		}
		if b := e.baselineOf(id, at); b != nil {
			out = append(out, b)
		}
	}
	return out
}

// baselineOf reads item's state at the rules' revision; nil when there is
// none, or when the rules come from the checkout.
func (e *Engine) baselineOf(item, dir string) *baseline {
	if e.rules == nil {
		return nil
	}
	rel := path.Join(dir, graph.StateFile)
	data, ok, err := e.rules.state(rel)
	switch {
	case err != nil:
		e.note(fmt.Sprintf("%s: its state in %s cannot be read (%v); the checkout's is used alone", item, e.rules.rev.Name(), err))
		return nil
	case !ok:
		return nil
	}
	st, err := graph.ParseState(e.rules.rev.Abs(rel), data, item)
	if err != nil {
		e.note(fmt.Sprintf("%s: %v; the checkout's state is used alone", item, err))
		return nil
	}
	return &baseline{rev: e.rules.rev.Name(), from: item, st: st}
}

// loop is the outer loop to walk: the revision's.
func (b *baseline) loop(recorded string) (string, string) {
	base := graph.OuterLoop(b.st.Loop)
	if base == recorded {
		return recorded, ""
	}
	return base, fmt.Sprintf("changes its loop from %s to %s", loopName(base), loopName(recorded))
}

func loopName(recorded string) string {
	if recorded == "" {
		return graph.WorkItemLoop
	}
	return recorded
}

// restrict is st as the revision allows it on the nodes its pointer has
// reached: without the skips the checkout added there, and with the
// optional nodes the revision had selected there; it says what it undid.
func (b *baseline) restrict(g *graph.Graph, st *graph.State) (*graph.State, []string) {
	floor := g.Index(b.st.CurrentNode)
	behind := func(id string) bool { i := g.Index(id); return i >= 0 && i <= floor }
	var skipped, unselected []string
	for _, id := range slices.Sorted(maps.Keys(st.Skips)) {
		if _, had := b.st.Skips[id]; !had && behind(id) {
			skipped = append(skipped, id)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(b.st.OptIns)) {
		if _, kept := st.OptIns[id]; !kept && behind(id) {
			unselected = append(unselected, id)
		}
	}
	if len(skipped)+len(unselected) == 0 {
		return st, nil
	}
	fixed := *st
	fixed.Skips, fixed.OptIns = maps.Clone(st.Skips), maps.Clone(st.OptIns)
	if fixed.OptIns == nil {
		fixed.OptIns = map[string]map[string]any{}
	}
	var said []string
	for _, id := range skipped {
		delete(fixed.Skips, id)
	}
	if len(skipped) > 0 {
		said = append(said, fmt.Sprintf("declares %s skipped, which %s had already reached: not honoured", strings.Join(skipped, ", "), b.rev))
	}
	for _, id := range unselected {
		fixed.OptIns[id] = b.st.OptIns[id]
	}
	if len(unselected) > 0 {
		said = append(said, fmt.Sprintf("unselects %s, which %s had selected and reached: still judged", strings.Join(unselected, ", "), b.rev))
	}
	return &fixed, said
}

// floor makes the revision's pointer the least the report counts as
// reached.
func (b *baseline) floor(rep *graph.StatusReport) []string {
	if !rep.Reach(b.st.CurrentNode) {
		return nil
	}
	from := rep.CurrentNode
	if from == "" {
		from = "the start"
	}
	return []string{fmt.Sprintf("moves its pointer back from %s to %s; the nodes up to %s are judged", b.st.CurrentNode, from, b.st.CurrentNode)}
}

// noteBaseline says what an item's state tried, once per item, and whose
// state in the revision judged it when that is another item's.
func (e *Engine) noteBaseline(item string, b *baseline, said []string) {
	if b.from != item {
		e.note(fmt.Sprintf("%s: judged with %s's state of %s (at %s), which this change carries on as %s", item, b.rev, b.from, cmp.Or(b.st.CurrentNode, "the start"), item))
	}
	if len(said) == 0 {
		return
	}
	e.note(fmt.Sprintf("%s: this change's graph-state.json %s (%s's state wins where the change's would lower the gate)", item, strings.Join(said, "; "), e.rules.rev.Name()))
}
