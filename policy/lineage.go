package policy

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/repo"
)

// The floor (baseline.go) is the revision's state for an item, and the
// item is a folder's name: a change that renames a blocked item's folder
// and rewinds its state would make a new item, with no floor, that waits
// and passes. So the revision's items are matched to the checkout's three
// ways, and an item of the revision the change does not carry on is
// judged by the revision's state all the same:
//
//   - by name: the same folder;
//   - by a normalised name: the same after Unicode NFC and case folding,
//     so that "Issue-2", or "café" spelt with a combining accent, is the
//     folder it looks like;
//   - by git's rename detection, between the merge base of the revision
//     and HEAD: a folder whose files moved (and were edited, up to git's
//     similarity) into another, two folders that traded contents, one
//     split in two.
//
// A checkout item with more than one match is judged against each, and
// the report that fails most is the one given: no choice of match is the
// change's to make. A revision's item with a state that matches nothing in
// the checkout (deleted, or renamed past what git recognises, or moved in
// the work tree only) is "removed": a block at the node the revision's
// state has reached, unless that node ends its loop. An item the revision
// added after the merge base is not the change's to carry: it is left out.

// lineage is how the revision's work items continue in the checkout.
type lineage struct {
	base     []string            // the revision's spec folders, sorted
	byFold   map[string][]string // foldName -> the revision's folders of that name, sorted
	bySource map[string][]string // a revision's folder -> the checkout folders its files moved to
	byTarget map[string][]string // a checkout folder -> the revision's folders whose files moved to it
	newer    map[string]bool     // folders whose state the revision added after the merge base
	known    bool                // whether newer (and the renames) could be found out
	checkout []string            // the checkout's items
	removed  []removedItem       // the revision's items with a state the checkout does not carry on
}

// removedItem is an item of the rules' revision that the change removed.
type removedItem struct {
	id   string
	base *baseline
}

// foldName is an item id compared as it looks: NFC, then each rune as the
// least of its simple case folds (so K, k and the Kelvin sign are one).
func foldName(id string) string {
	return strings.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, norm.NFC.String(id))
}

// lineageOf works out, once, how the revision's items continue in the
// checkout; what it could not find out is said in a note, and leaves every
// revision's item the checkout has not under its own name removed.
func (e *Engine) lineageOf() *lineage {
	r := e.rules
	r.lineageOnce.Do(func() { r.lineage = e.traceLineage() })
	return r.lineage
}

func (e *Engine) traceLineage() *lineage {
	r := e.rules
	spec := e.SpecDirRel()
	l := &lineage{bySource: map[string][]string{}, byTarget: map[string][]string{}, newer: map[string]bool{}}
	var err error
	if l.checkout, err = e.Checkout.Items(); err != nil && !errors.Is(err, fs.ErrNotExist) {
		e.note(fmt.Sprintf("the checkout's work items cannot be listed (%v): the items of %s are matched to none", err, r.rev.Name()))
	}
	if l.base, err = r.rev.Dirs(spec); err != nil {
		e.note(fmt.Sprintf("the work items of %s cannot be listed (%v): only an item's own name carries its state", r.rev.Name(), err))
		return l
	}
	l.byFold = map[string][]string{}
	for _, id := range l.base {
		k := foldName(id)
		l.byFold[k] = append(l.byFold[k], id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	if why := e.traceRenames(ctx, l, spec); why != "" {
		e.note(fmt.Sprintf("which work items this change renames cannot be told (%s): an item %s has a state for and the checkout has not under its name is judged removed", why, r.rev.Name()))
	}
	l.removed = e.findRemoved(l, spec)
	return l
}

// traceRenames fills l's renames and newer from git, or says why not.
//
// Departure from the original (docs/compatibility.md#the-pull-request-gate-and-adoption): under --rules-from an item keeps the base's state through a rename.
func (e *Engine) traceRenames(ctx context.Context, l *lineage, spec string) string {
	r := e.rules
	fork, err := e.Checkout.MergeBase(ctx, r.rev.Commit())
	switch {
	case err != nil:
		return err.Error()
	case fork == "":
		return fmt.Sprintf("%s and HEAD have no merge base", r.rev.Name())
	}
	renames, err := e.Checkout.Renames(ctx, fork, spec)
	if err != nil {
		return err.Error()
	}
	added, err := e.Checkout.Added(ctx, fork, r.rev.Commit(), spec)
	if err != nil {
		return err.Error()
	}
	for _, mv := range renames {
		from, to := itemOf(spec, mv.From), itemOf(spec, mv.To)
		if from == "" || to == "" || from == to {
			continue
		}
		l.bySource[from] = appendNew(l.bySource[from], to)
		l.byTarget[to] = appendNew(l.byTarget[to], from)
	}
	for _, p := range added {
		if id := itemOf(spec, p); id != "" && p == path.Join(spec, id, graph.StateFile) {
			l.newer[id] = true
		}
	}
	l.known = true
	return ""
}

// findRemoved is the revision's items with a state that nothing in the
// checkout carries on.
func (e *Engine) findRemoved(l *lineage, spec string) []removedItem {
	have := map[string]bool{}
	for _, id := range l.checkout {
		have[id], have[foldName(id)] = true, true
	}
	var removed []removedItem
	for _, id := range l.base {
		if have[id] || have[foldName(id)] || l.newer[id] || slices.ContainsFunc(l.bySource[id], func(to string) bool { return have[to] }) {
			continue
		}
		b := e.baselineOf(id, path.Join(spec, id))
		if b == nil {
			continue
		}
		if g, err := Loop(graph.OuterLoop(b.st.Loop)); err == nil {
			if n, err := g.Node(b.st.CurrentNode); err == nil && n.Terminal {
				// Finished: removing it hides nothing.
				e.note(fmt.Sprintf("%s: this change removes its spec folder %s; %s has it at %s, where its loop ends", id, path.Join(spec, id), b.rev, b.st.CurrentNode))
				continue
			}
		}
		removed = append(removed, removedItem{id: id, base: b})
	}
	return removed
}

// floorsOf are the revision's items whose state is item's floor: its own
// name first, then any that looks the same, then any git saw move into it.
func (e *Engine) floorsOf(item string) []string {
	l := e.lineageOf()
	ids := []string{item}
	for _, id := range l.byFold[foldName(item)] {
		if id != item {
			ids = append(ids, id)
		}
	}
	for _, id := range l.byTarget[item] {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// removedItems are the ids of the revision's items the change removed.
func (e *Engine) removedItems() []string {
	if e.rules == nil {
		return nil
	}
	var ids []string
	for _, r := range e.lineageOf().removed {
		ids = append(ids, r.id)
	}
	return ids
}

// removedReport is the report for item when it is one the change removed:
// a block at the node the revision's state has it at, naming the state.
func (e *Engine) removedReport(item string, sel Selector) (*graph.StatusReport, bool, error) {
	if e.rules == nil {
		return nil, false, nil
	}
	i := slices.IndexFunc(e.lineageOf().removed, func(r removedItem) bool { return r.id == item })
	if i < 0 {
		return nil, false, nil
	}
	b := e.lineageOf().removed[i].base
	recorded := graph.OuterLoop(b.st.Loop)
	rt, err := e.runtime(recorded, sel, false)
	if err != nil {
		return nil, true, err
	}
	dir := path.Join(e.SpecDirRel(), item)
	at := b.st.CurrentNode
	rep := &graph.StatusReport{WorkItem: item, CurrentNode: at, Parked: map[string]any{}, Dir: dir, Loop: rt.Graph.Name}
	where := at
	if where == "" {
		where = "the start of " + loopName(recorded)
	}
	msg := fmt.Sprintf("%s has this work item at %s, and this change removes its spec folder %s (or renames it past what git recognises): %s's state still judges it. Restore the folder, or finish the item first",
		b.rev, where, dir, b.rev)
	node := at
	if node == "" && len(rt.Graph.NodeIDs()) > 0 {
		node = rt.Graph.NodeIDs()[0]
		rep.CurrentNode = node
	}
	rep.Nodes = []graph.NodeReport{{
		Node: node, Status: string(graph.StatusBlock), Messages: []string{msg}, Reached: true,
		Findings: []graph.Finding{{Hook: graph.StateHook, Node: node, Severity: graph.SeverityError, Text: msg, Path: dir}},
		Hooks:    []graph.HookRun{},
	}}
	return rep, true, nil
}

// itemOf is the item folder the path p (from the checkout root) is in, ""
// when it is not in one under spec.
func itemOf(spec, p string) string {
	rest, ok := strings.CutPrefix(p, spec+"/")
	if spec == "." {
		rest, ok = p, true
	}
	id, _, inFolder := strings.Cut(rest, "/")
	if !ok || !inFolder || !repo.ValidID(id) {
		return ""
	}
	return id
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// withRemoved is items and the removed ones, sorted and unique.
func withRemoved(items, removed []string) []string {
	out := append(slices.Clone(items), removed...)
	slices.Sort(out)
	return slices.Compact(out)
}
