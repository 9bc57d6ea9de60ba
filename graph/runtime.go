package graph

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/the-loop/the-loop/internal/lazyregexp"
	"github.com/the-loop/the-loop/repo"
)

// Emitter receives the runtime's events. *eventlog.Log satisfies it. The
// events of a move are its record: a move whose events cannot be written
// is not made, and the verb fails (see txn.commit). Any other event that
// cannot be written is said in the log and fails nothing.
type Emitter interface {
	Emit(event, level string, fields map[string]any) error
}

// Syncer is an Emitter that can make what it has written durable. The
// runtime syncs a transition's events before it writes the state that
// records the transition, so that no crash leaves a moved item without
// its events. *eventlog.Log satisfies it.
type Syncer interface {
	Sync() error
}

type discardEmitter struct{}

func (discardEmitter) Emit(string, string, map[string]any) error { return nil }

// Runtime walks one repository's work items through one compiled loop. Its
// exported fields are set once by whoever builds it (policy.Engine) and not
// changed afterwards; the verbs are safe to call from several goroutines and
// several processes, because every write happens under the item's file lock.
type Runtime struct {
	// Checkout is the repository, confined, with its spec root set: every
	// file the runtime and its hooks read or write goes through it.
	Checkout *repo.Checkout
	Graph    *Graph
	Settings Settings
	// Config is the harness config document, handed to hooks.
	Config      map[string]any
	Integration Integration
	Events      Emitter
	Log         *slog.Logger
	// StateSubpath places the state below the spec folder (an inner loop's
	// "pr-loops/pr-7"); "" keeps it beside the artifacts.
	StateSubpath string
	// PRRef is an inner loop's pull-request ref.
	PRRef string
	// Ref, when set, is how integrations name the item (--ref), overriding
	// the derived ref.
	Ref string
	// Changed is handed to hooks as the paths changed against a base; nil
	// when no base was named.
	Changed []string
	// Replies, when set, is read once per item by Status, which hands
	// each node's exit chain the replies posted while the item was at it
	// (see Reply). Nil hands none, and human gates read wait. Under
	// recompute the state, and with it when each gate was open, is
	// ignored, so no reply is handed either.
	Replies ReplySource
	// AllFindings has Status run, at each reached node whose exit chain
	// stopped, the repository hooks the chain did not reach, report-only:
	// their findings are shown and marked, and no verdict changes (see
	// reportonly.go). False runs a chain as far as its stopper only.
	AllFindings bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// LockTimeout is how long a writer waits for a held lock before
	// answering busy; zero answers at once.
	LockTimeout time.Duration
	// Budget bounds the time every repository hook of the evaluation
	// spends, all together; nil is unlimited. It is handed to hooks in
	// their Context.
	Budget *Budget
}

func (rt *Runtime) now() time.Time {
	if rt.Now != nil {
		return rt.Now()
	}
	return time.Now()
}

func (rt *Runtime) log() *slog.Logger {
	if rt.Log != nil {
		return rt.Log
	}
	return slog.Default()
}

func (rt *Runtime) emitter() Emitter {
	if rt.Events == nil {
		return discardEmitter{}
	}
	return rt.Events
}

func (rt *Runtime) emit(event, level string, fields map[string]any) {
	if err := rt.emitter().Emit(event, level, fields); err != nil {
		rt.log().Warn("could not write event", "event", event, "err", err)
	}
}

// WorkItem describes id: its spec folder, its ref and the tags and risk
// tier its phase-1 or design front matter declares. The folder must exist
// as a directory inside the checkout.
func (rt *Runtime) WorkItem(id string) (WorkItem, error) {
	return rt.workItem(id, DirectFiles(rt.Checkout))
}

func (rt *Runtime) workItem(id string, files *Files) (WorkItem, error) {
	it, err := files.Item(id)
	if err != nil {
		return WorkItem{ID: id, Dir: it.Dir}, err
	}
	item := rt.newWorkItem(it)
	for _, name := range []string{"requirements.md", "bugfix.md", "design.md"} {
		fm, _, err := files.FrontMatter(path.Join(item.Dir, name))
		if err != nil {
			continue
		}
		if tags, ok := fm["tags"].([]any); ok {
			for _, t := range tags {
				item.Tags = append(item.Tags, fmt.Sprint(t))
			}
		}
		switch v := fm["riskTier"].(type) {
		case int:
			item.RiskTier = v
		case string:
			if n, err := strconv.Atoi(v); err == nil {
				item.RiskTier = n
			}
		}
		break
	}
	return item, nil
}

// newWorkItem is the item it before its front matter is read: its ref, and
// the default risk tier.
func (rt *Runtime) newWorkItem(it repo.Item) WorkItem {
	item := WorkItem{ID: it.ID, Dir: it.Dir, RiskTier: 3}
	switch {
	case rt.Ref != "":
		item.Ref = rt.Ref
	case rt.StateSubpath != "":
		item.Ref = rt.PRRef
	default:
		item.Ref = DeriveRef(it.ID, rt.Settings.OriginRepo)
	}
	if item.Ref == "" {
		item.Ref = it.ID
	}
	return item
}

// NoSpecFolder reports whether err says that a work item has no spec
// folder: its id is one a folder can have, and there is nothing at its
// place in the spec root (not a link out of the checkout, nor a file).
func NoSpecFolder(err error) bool {
	var ie *repo.ItemError
	return errors.As(err, &ie) && ie.Dir != "" && errors.Is(ie.Err, fs.ErrNotExist)
}

// creating describes id for a verb that writes its state, as WorkItem
// does. An item with no spec folder yet is a new one, as for the
// original's verbs: it is described as it will be, and create, called
// once the verb knows it will write, makes its folder (see
// repo.CreateItem) and describes it afresh. create is nil for an item
// whose folder is there.
func (rt *Runtime) creating(id string) (item WorkItem, create func() (WorkItem, error), err error) {
	item, err = rt.WorkItem(id)
	if !NoSpecFolder(err) {
		return item, nil, err
	}
	item = rt.newWorkItem(repo.Item{ID: id, Dir: rt.Checkout.ItemDir(id)})
	return item, func() (WorkItem, error) {
		if _, err := rt.Checkout.CreateItem(id); err != nil {
			return item, err
		}
		rt.log().Info("created the spec folder of a new work item", "work_item", id, "dir", item.Dir)
		return rt.WorkItem(id)
	}, nil
}

var issueID = lazyregexp.New(`^issue-(\d+)$`)

// DeriveRef builds github:owner/repo#N from an issue-N id and owner/repo, or
// "" when either does not have GitHub's shape: no ref is the fail-closed
// answer, a ref pointing somewhere else is not.
func DeriveRef(id, originRepo string) string {
	m := issueID.FindStringSubmatch(strings.TrimSpace(id))
	if m == nil {
		return ""
	}
	n, _ := strconv.Atoi(m[1])
	return RefFor(originRepo, n)
}

// RefFor builds github:owner/repo#number, or "" when it cannot: repoSlug
// must be what ParseRepoName takes.
func RefFor(repoSlug string, number int) string {
	r, err := ParseRepoName(repoSlug)
	if err != nil || number <= 0 || number > maxRefNumber {
		return ""
	}
	return fmt.Sprintf("%s%s#%d", RefPrefix, r, number)
}

// StateDir is where item's state lives, repository-relative.
func (rt *Runtime) StateDir(item WorkItem) string {
	return StateDirOf(item.Dir, rt.StateSubpath)
}

// StateDirOf is the state directory of the item folder dir for a loop
// whose state lives at subpath below it ("" for the outer loop).
func StateDirOf(dir, subpath string) string {
	if subpath != "" {
		return path.Join(dir, subpath)
	}
	return dir
}

// load describes id and reads its state.
func (rt *Runtime) load(id string, files *Files) (WorkItem, *State, error) {
	item, err := rt.workItem(id, files)
	if err != nil {
		return item, nil, err
	}
	st, err := LoadState(rt.Checkout, rt.StateDir(item), item.ID)
	return item, st, err
}

func (rt *Runtime) context(item WorkItem, n *Node, b Boundary, st *State, files *Files, event *Event) *Context {
	c := rt.itemContext(item, st, rt.DeclaredSkips(st), files).at(n, b, event)
	return &c
}

// itemContext is what every node's context of one item shares, with no
// node yet: check evaluates every node of every item, so what depends only
// on the item and its state is worked out once per item, not once per node.
// skips are st's declared skips (DeclaredSkips), which the caller may
// need as well.
func (rt *Runtime) itemContext(item WorkItem, st *State, skips map[string]map[string]any, files *Files) *Context {
	item.CurrentNode = rt.current(st)
	return &Context{
		WorkItem:         item,
		Checkout:         rt.Checkout,
		Files:            files,
		SkippedArtifacts: rt.skippedArtifacts(skips),
		Decisions:        st.Decisions,
		Surface:          st.Surface,
		Graph:            rt.Graph,
		Changed:          rt.Changed,
		Settings:         rt.Settings,
		Config:           rt.Config,
		Integration:      rt.integration(),
		Log:              logWith(rt.log(), "work_item", item.ID),
		Budget:           rt.Budget,
	}
}

// at is the item's context c at node n's boundary b, answering event: a
// value, which a caller evaluating node after node keeps on its stack
// (RunChain copies it for each hook).
func (c *Context) at(n *Node, b Boundary, event *Event) Context {
	nc := *c
	nc.Node, nc.Boundary, nc.Event = n, b, event
	nc.Log = logWith(logWith(c.Log, "node", n.ID), "boundary", string(b))
	return nc
}

// current is the node st points at: the loop's start for an item that has
// not entered it.
func (rt *Runtime) current(st *State) string {
	if st.CurrentNode == "" {
		return rt.Graph.Start
	}
	return st.CurrentNode
}

// actingContext is a context for a chain that may act: it reads afresh,
// since a hook may write an artifact a later hook must see.
func (rt *Runtime) actingContext(item WorkItem, n *Node, b Boundary, st *State, event *Event) *Context {
	return rt.context(item, n, b, st, DirectFiles(rt.Checkout), event)
}

// pureContext is a context for a read-only evaluation (check, status, a dry
// run): hooks must not write, spawn or call out, and every read of the
// evaluation goes through files.
func (rt *Runtime) pureContext(item WorkItem, n *Node, st *State, files *Files, event *Event) *Context {
	return rt.pureContextAt(item, n, Exit, st, files, event)
}

// pureContextAt is pureContext at either boundary of n.
func (rt *Runtime) pureContextAt(item WorkItem, n *Node, b Boundary, st *State, files *Files, event *Event) *Context {
	c := rt.pureItemContext(item, st, rt.DeclaredSkips(st), files).at(n, b, event)
	return &c
}

// pureItemContext is itemContext for a read-only evaluation.
func (rt *Runtime) pureItemContext(item WorkItem, st *State, skips map[string]map[string]any, files *Files) *Context {
	c := rt.itemContext(item, st, skips, files)
	c.ReadOnly = true
	c.reuse = new(Context)
	return c
}

func (rt *Runtime) integration() Integration {
	if rt.Integration == nil {
		return NoIntegration{}
	}
	return rt.Integration
}

// withLock runs fn holding item's state lock, or returns ErrBusy. The item
// was checked when it was described, so a mistyped id never gets this far
// and never becomes a work item. Holding the lock, it first removes what a
// writer killed mid-write left behind.
func (rt *Runtime) withLock(item WorkItem, fn func() error) error {
	dir := rt.StateDir(item)
	lock, err := rt.Checkout.Locker(path.Join(dir, LockFile))
	if err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	deadline := rt.now().Add(rt.LockTimeout)
	for {
		ok, err := lock.TryLock()
		if err != nil {
			return err
		}
		if ok {
			break
		}
		if !rt.now().Before(deadline) {
			return ErrBusy
		}
		time.Sleep(50 * time.Millisecond)
	}
	defer lock.Unlock()
	rt.cleanTemps(item)
	return fn()
}

// staleArtifactTemp is how old a temporary file beside an artifact must be
// before a verb removes it: artifacts are written under the outer loop's
// lock or an inner loop's, so no one lock says that its writer is gone,
// but none holds its file for more than moments.
const staleArtifactTemp = 10 * time.Minute

// cleanTemps removes the temporary files a killed writer left: the state's
// at once (this lock serialises every writer of the state), and those of
// the artifacts beside it once they are stale.
func (rt *Runtime) cleanTemps(item WorkItem) {
	dir := rt.StateDir(item)
	removed, err := rt.Checkout.CleanTemps(dir, func(target string, age time.Duration) bool {
		return target == StateFile || (dir == item.Dir && strings.HasSuffix(target, ".md") && age > staleArtifactTemp)
	})
	if err != nil {
		rt.log().Warn("could not remove a killed writer's temporary files", "err", err)
	}
	for _, name := range removed {
		rt.log().Info("removed a temporary file a killed writer left", "work_item", item.ID, "file", name)
	}
}

// NotSelected is the provenance of an opt-in node nobody selected.
const NotSelected = "not-selected"

// DeclaredSkips are the skip declarations the runtime honours: only those on
// nodes the compiled graph marks skippable (the state file is agent-written,
// so a declaration on a protected gate is inert), plus every opt-in node
// nobody selected.
func (rt *Runtime) DeclaredSkips(st *State) map[string]map[string]any {
	return declaredSkips(rt.Graph, st)
}

func declaredSkips(g *Graph, st *State) map[string]map[string]any {
	out := map[string]map[string]any{}
	for id, decl := range st.Skips {
		if n, ok := g.byID[id]; ok && n.Skippable && !n.Required {
			out[id] = decl
		}
	}
	for _, n := range g.Nodes {
		if _, declared := out[n.ID]; n.OptIn && !declared && !selected(g, st, n.ID) {
			out[n.ID] = map[string]any{"via": NotSelected}
		}
	}
	return out
}

func selected(g *Graph, st *State, id string) bool {
	n, ok := g.byID[id]
	if !ok || !n.OptIn {
		return false
	}
	_, ok = st.OptIns[id]
	return ok
}

// refusedSkips are st's declarations the graph does not permit (those not
// in valid, its DeclaredSkips), sorted.
func (rt *Runtime) refusedSkips(st *State, valid map[string]map[string]any) []string {
	var out []string
	for id := range st.Skips {
		if _, ok := valid[id]; !ok {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

func (rt *Runtime) skippedArtifacts(skips map[string]map[string]any) map[string]bool {
	names := map[string]bool{}
	for id := range skips {
		if n, ok := rt.Graph.byID[id]; ok {
			for _, entry := range n.Produces {
				for _, name := range ArtifactNames(entry) {
					names[name] = true
				}
			}
		}
	}
	return names
}

// SkipProvenance is one line saying who declared a skip, and how.
func SkipProvenance(decl map[string]any) string {
	str := func(k string) string { s, _ := decl[k].(string); return s }
	via := str("via")
	if via == NotSelected {
		return "not selected: an opt-in phase, off unless it is ticked at phase-selection"
	}
	if via == "" {
		via = "unknown"
	}
	parts := []string{"skipped by declaration via " + via}
	if t := str("token"); t != "" {
		parts = append(parts, fmt.Sprintf("token %q", t))
	}
	if b := str("by"); b != "" {
		parts = append(parts, "by "+b)
	}
	if r := str("reason"); r != "" {
		parts = append(parts, "reason: "+r)
	}
	return strings.Join(parts, ", ")
}

// skipRoute follows on: skipped edges from id while the node is declared
// skipped, calling pass (when not nil) for each node it goes around, and
// returns the first node that is not skipped. The visited set makes a
// cyclic authoring mistake land on the node rather than loop.
func (g *Graph) skipRoute(id string, skips map[string]map[string]any, pass func(id string, decl map[string]any)) string {
	visited := map[string]bool{}
	for {
		decl, skipped := skips[id]
		if !skipped || visited[id] {
			return id
		}
		visited[id] = true
		target, ok := g.Next(id, OutcomeSkipped)
		if !ok {
			return id
		}
		if pass != nil {
			pass(id, decl)
		}
		id = target
	}
}

// CheckPointer refuses a verb that moves the item id from where its state
// st says it is, when st's pointer names no node of the loop, before
// anything is read or written (see machine.unknownCurrent). A nil state,
// or one that has not entered the loop, passes.
func (rt *Runtime) CheckPointer(id string, st *State) error {
	if st == nil || st.CurrentNode == "" || rt.Graph.Has(st.CurrentNode) {
		return nil
	}
	return rt.unknownCurrent(WorkItem{ID: id, Dir: rt.Checkout.ItemDir(id)}, st)
}

func (rt *Runtime) unknownCurrent(item WorkItem, st *State) error {
	return rt.machine(item).unknownCurrent(st)
}

// statePath is item's graph-state.json, repository-relative.
func (rt *Runtime) statePath(item WorkItem) string {
	return path.Join(rt.StateDir(item), StateFile)
}
