package graph

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// Emitter receives the runtime's events. *eventlog.Log satisfies it; the
// runtime never fails a verb because an event could not be written.
type Emitter interface {
	Emit(event, level string, fields map[string]any) error
}

type discardEmitter struct{}

func (discardEmitter) Emit(string, string, map[string]any) error { return nil }

// Runtime walks one repository's work items through one compiled loop. Its
// exported fields are set once by whoever builds it (policy.Engine) and not
// changed afterwards; the verbs are safe to call from several goroutines and
// several processes, because every write happens under the item's file lock.
type Runtime struct {
	// Repo is the repository root, absolute.
	Repo string
	// SpecRoot is the absolute directory holding spec folders.
	SpecRoot string
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
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// LockTimeout is how long a writer waits for a held lock before
	// answering busy; zero answers at once.
	LockTimeout time.Duration
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

func (rt *Runtime) emit(event, level string, fields map[string]any) {
	em := rt.Events
	if em == nil {
		em = discardEmitter{}
	}
	if err := em.Emit(event, level, fields); err != nil {
		rt.log().Warn("could not write event", "event", event, "err", err)
	}
}

// validID keeps an item id one path element inside the spec root.
func validID(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, "/\\\x00")
}

// WorkItem describes id: its spec folder, its ref and the tags and risk tier
// its phase-1 or design front matter declares.
func (rt *Runtime) WorkItem(id string) (WorkItem, error) { return rt.workItem(id, nil) }

func (rt *Runtime) workItem(id string, files *Files) (WorkItem, error) {
	if !validID(id) {
		return WorkItem{}, fmt.Errorf("work item id %q: want the name of a folder in the spec directory, not a path", id)
	}
	dir := filepath.Join(rt.SpecRoot, id)
	if err := rt.contained(dir); err != nil {
		return WorkItem{}, err
	}
	rel, err := filepath.Rel(rt.Repo, dir)
	if err != nil {
		rel = dir
	}
	item := WorkItem{ID: id, SpecDir: dir, SpecDirRel: filepath.ToSlash(rel), RiskTier: 3}
	switch {
	case rt.Ref != "":
		item.Ref = rt.Ref
	case rt.StateSubpath != "":
		item.Ref = rt.PRRef
	default:
		item.Ref = DeriveRef(id, rt.Settings.OriginRepo)
	}
	if item.Ref == "" {
		item.Ref = id
	}
	for _, name := range []string{"requirements.md", "bugfix.md", "design.md"} {
		fm, _, err := files.FrontMatter(filepath.Join(dir, name))
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

var (
	issueID    = regexp.MustCompile(`^issue-(\d+)$`)
	githubName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// IsGitHubName reports whether s is a GitHub owner or repository name in
// the charset this tool accepts: no quote, no newline, no colon, no slash.
func IsGitHubName(s string) bool { return githubName.MatchString(s) }

// contained refuses a work item folder that is a symlink leading out of the
// spec directory: the verbs write beside the artifacts, and must never
// write outside the repository.
func (rt *Runtime) contained(dir string) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil // absent: nothing to follow, and load reports it
	}
	root, err := filepath.EvalSymlinks(rt.SpecRoot)
	if err != nil {
		root = rt.SpecRoot
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("work item %s: its folder resolves to %s, outside the spec directory; a work item must live inside the repository", filepath.Base(dir), real)
	}
	return nil
}

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

// RefFor builds github:owner/repo#number, or "" when it cannot.
func RefFor(repoSlug string, number int) string {
	owner, repo, ok := strings.Cut(strings.TrimSpace(repoSlug), "/")
	if !ok || !IsGitHubName(owner) || !IsGitHubName(repo) || number <= 0 {
		return ""
	}
	return fmt.Sprintf("github:%s/%s#%d", owner, repo, number)
}

// StateDir is where item's state lives.
func (rt *Runtime) StateDir(item WorkItem) string {
	if rt.StateSubpath != "" {
		return filepath.Join(item.SpecDir, filepath.FromSlash(rt.StateSubpath))
	}
	return item.SpecDir
}

// Exists reports whether id has a spec folder.
func (rt *Runtime) Exists(id string) bool {
	fi, err := os.Stat(filepath.Join(rt.SpecRoot, id))
	return err == nil && fi.IsDir()
}

func (rt *Runtime) load(id string) (WorkItem, *State, error) { return rt.loadWith(id, nil) }

func (rt *Runtime) loadWith(id string, files *Files) (WorkItem, *State, error) {
	item, err := rt.workItem(id, files)
	if err != nil {
		return item, nil, err
	}
	if !rt.Exists(id) {
		return item, nil, fmt.Errorf("work item %q: no spec folder at %s", id, item.SpecDirRel)
	}
	st, err := rt.loadState(item)
	return item, st, err
}

// loadState reads item's graph state, naming its file relative to the
// repository in a *StateError.
func (rt *Runtime) loadState(item WorkItem) (*State, error) {
	st, err := LoadState(rt.StateDir(item), item.ID)
	var se *StateError
	if errors.As(err, &se) {
		se.Path = rt.rel(se.Path)
	}
	return st, err
}

// rel is path relative to the repository, for messages.
func (rt *Runtime) rel(path string) string {
	if r, err := filepath.Rel(rt.Repo, path); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return path
}

func (rt *Runtime) context(item WorkItem, n *Node, b Boundary, st *State, event *Event) *Context {
	skips := rt.DeclaredSkips(st)
	return &Context{
		WorkItem:         item,
		Node:             n,
		Boundary:         b,
		Repo:             rt.Repo,
		Event:            event,
		SkippedArtifacts: rt.skippedArtifacts(skips),
		Decisions:        st.Decisions,
		Surface:          st.Surface,
		Graph:            rt.Graph,
		Changed:          rt.Changed,
		Settings:         rt.Settings,
		Config:           rt.Config,
		Integration:      rt.integration(),
		Log:              rt.log().With("work_item", item.ID, "node", n.ID, "boundary", string(b)),
	}
}

// pureContext is a context for a read-only evaluation (check, status, a dry
// run): hooks must not write, spawn or call out, and every read of the
// evaluation goes through files.
func (rt *Runtime) pureContext(item WorkItem, n *Node, st *State, files *Files, event *Event) *Context {
	c := rt.context(item, n, Exit, st, event)
	c.ReadOnly = true
	c.Files = files
	return c
}

func (rt *Runtime) integration() Integration {
	if rt.Integration == nil {
		return NoIntegration{}
	}
	return rt.Integration
}

// withLock runs fn holding item's state lock, or returns ErrBusy. An item
// without a spec folder is an error, before anything is created: a mistyped
// id must not become a work item.
func (rt *Runtime) withLock(item WorkItem, fn func() error) error {
	if !rt.Exists(item.ID) {
		return fmt.Errorf("work item %q: no spec folder at %s", item.ID, item.SpecDirRel)
	}
	dir := rt.StateDir(item)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("lock %s: %w", dir, err)
	}
	lock := flock.New(filepath.Join(dir, LockFile))
	deadline := rt.now().Add(rt.LockTimeout)
	for {
		ok, err := lock.TryLock()
		if err != nil {
			return fmt.Errorf("lock %s: %w", lock.Path(), err)
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
	return fn()
}

// NotSelected is the provenance of an opt-in node nobody selected.
const NotSelected = "not-selected"

// DeclaredSkips are the skip declarations the runtime honours: only those on
// nodes the compiled graph marks skippable (the state file is agent-written,
// so a declaration on a protected gate is inert), plus every opt-in node
// nobody selected.
func (rt *Runtime) DeclaredSkips(st *State) map[string]map[string]any {
	out := map[string]map[string]any{}
	for id, decl := range st.Skips {
		if n, ok := rt.Graph.byID[id]; ok && n.Skippable && !n.Required {
			out[id] = decl
		}
	}
	for _, n := range rt.Graph.Nodes {
		if _, declared := out[n.ID]; n.OptIn && !declared && !rt.selected(st, n.ID) {
			out[n.ID] = map[string]any{"via": NotSelected}
		}
	}
	return out
}

func (rt *Runtime) selected(st *State, id string) bool {
	n, ok := rt.Graph.byID[id]
	if !ok || !n.OptIn {
		return false
	}
	_, ok = st.OptIns[id]
	return ok
}

// refusedSkips are declarations the graph does not permit, sorted.
func (rt *Runtime) refusedSkips(st *State) []string {
	valid := rt.DeclaredSkips(st)
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

// routeSkips walks declared-skipped nodes along their on: skipped edges,
// recording each as skipped without running any of its hooks, and returns
// the first node that is not skipped.
func (rt *Runtime) routeSkips(st *State, item WorkItem, id string, skips map[string]map[string]any) string {
	return rt.skipRoute(id, skips, func(id string, decl map[string]any) {
		now := Timestamp(rt.now())
		rec := st.Record(id)
		if rec.EnteredAt == "" {
			rec.EnteredAt = now
		}
		rec.Outcome = OutcomeSkipped
		rec.ExitedAt = now
		fields := map[string]any{"work_item": item.Ref, "node": id}
		for k, v := range decl {
			if v != nil && v != "" {
				fields[k] = v
			}
		}
		rt.emit("graph.node_skipped", "info", fields)
	})
}

// skipRoute follows on: skipped edges from id while the node is declared
// skipped, calling pass (when not nil) for each node it goes around, and
// returns the first node that is not skipped. The visited set makes a
// cyclic authoring mistake land on the node rather than loop.
func (rt *Runtime) skipRoute(id string, skips map[string]map[string]any, pass func(id string, decl map[string]any)) string {
	visited := map[string]bool{}
	for {
		decl, skipped := skips[id]
		if !skipped || visited[id] {
			return id
		}
		visited[id] = true
		target, ok := rt.Graph.Next(id, OutcomeSkipped)
		if !ok {
			return id
		}
		if pass != nil {
			pass(id, decl)
		}
		id = target
	}
}

// NodeReport is one node's verdict as check reports it. Its JSON keys are the
// original tool's, so tooling built on that output keeps working.
type NodeReport struct {
	Node     string   `json:"node"`
	Status   string   `json:"status"`
	Outcome  string   `json:"outcome"`
	Messages []string `json:"messages"`
	Forced   bool     `json:"forced"`
	Attempts int      `json:"attempts"`
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
}

// Reached splits the nodes at the pointer: those up to and including the
// current node are findings, those after it are simply not done yet.
func (s *StatusReport) Reached() (reached, ahead []NodeReport) {
	for i, n := range s.Nodes {
		if n.Node == s.CurrentNode {
			return s.Nodes[:i+1], s.Nodes[i+1:]
		}
	}
	return s.Nodes, nil
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
// because no inbound event is passed. recompute ignores the stored pointer
// and derives it from the artifacts alone: stored state is a cache, never an
// authority. Declared skips are honoured in both modes; a declaration the
// graph refuses is honoured in neither and called out on its node.
func (rt *Runtime) Status(id string, recompute bool) (*StatusReport, error) {
	files := NewFiles()
	item, st, err := rt.loadWith(id, files)
	if err != nil {
		return nil, err
	}
	skips := rt.DeclaredSkips(st)
	refused := rt.refusedSkips(st)
	rep := &StatusReport{WorkItem: id, Nodes: make([]NodeReport, 0, len(rt.Graph.Nodes))}
	for _, n := range rt.Graph.Nodes {
		rec := st.Nodes[n.ID]
		attempts := 0
		if rec != nil {
			attempts = rec.Attempts
		}
		if decl, ok := skips[n.ID]; ok {
			rep.Nodes = append(rep.Nodes, NodeReport{Node: n.ID, Status: string(StatusSkip), Outcome: OutcomeSkipped,
				Messages: []string{SkipProvenance(decl)}, Attempts: attempts})
			continue
		}
		out := RunChain(n.Exit, rt.pureContext(item, n, st, files, nil))
		msgs := renderMessages(out.Messages())
		msgs = append(msgs, out.Warnings...)
		if slices.Contains(refused, n.ID) {
			msgs = append(msgs, "graph state declares a skip on this node, which is not skippable; the declaration is refused and has no effect")
		}
		rep.Nodes = append(rep.Nodes, NodeReport{Node: n.ID, Status: string(out.Status), Outcome: out.Outcome(),
			Messages: msgs, Forced: rec != nil && rec.Forced && !recompute, Attempts: attempts})
	}
	rep.CurrentNode = st.CurrentNode
	switch {
	case recompute || rep.CurrentNode == "":
		rep.CurrentNode = rt.Graph.Start
	case !rt.Graph.Has(rep.CurrentNode):
		return nil, rt.unknownCurrent(item, st)
	}
	if recompute {
		rep.CurrentNode = firstUnmet(rep.Nodes, rep.CurrentNode)
	} else {
		rep.Parked = st.Parked
	}
	rep.OK = true
	for _, n := range rep.Nodes {
		if !n.Satisfied() {
			rep.OK = false
			break
		}
		if n.Node == rep.CurrentNode {
			break
		}
	}
	return rep, nil
}

func (rt *Runtime) unknownCurrent(item WorkItem, st *State) error {
	return &StateError{Path: rt.rel(filepath.Join(rt.StateDir(item), StateFile)),
		Msg: fmt.Sprintf("currentNode %q is not a node of %s; its nodes are: %s", st.CurrentNode, rt.Graph.Name, strings.Join(rt.Graph.NodeIDs(), ", "))}
}

// save writes st for item, recording the loop it walks the first time.
func (rt *Runtime) save(item WorkItem, st *State) error {
	if st.Loop == "" {
		st.Loop = rt.Graph.Name
	}
	return st.Save(rt.StateDir(item))
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

// Step is what one advance did.
// Fails reports whether the step leaves the item worse than it found
// it: anything but a pass or a wait at a human gate.
func (s *Step) Fails() bool {
	return s.Status != string(StatusPass) && s.Status != string(StatusWait)
}

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

// Statuses a Step reports beyond the hook statuses.
const StatusEscalated = "escalated"

// Start enters the start node (routing around declared skips) and runs its
// entry chain. It is idempotent: an item that already has a pointer is left
// untouched and Start returns nil.
func (rt *Runtime) Start(id string) (*Step, error) {
	var step *Step
	err := rt.locked(id, func(item WorkItem, st *State) (err error) {
		if st.CurrentNode == "" {
			step, err = rt.startLocked(item, st)
		}
		return err
	})
	return step, err
}

// locked loads id's state under its lock and hands it to fn.
func (rt *Runtime) locked(id string, fn func(item WorkItem, st *State) error) error {
	item, err := rt.WorkItem(id)
	if err != nil {
		return err
	}
	return rt.lockedItem(item, fn)
}

// lockedItem is locked for a caller that already described the item.
func (rt *Runtime) lockedItem(item WorkItem, fn func(item WorkItem, st *State) error) error {
	return rt.withLock(item, func() error {
		if !rt.Exists(item.ID) {
			return fmt.Errorf("work item %q: no spec folder at %s", item.ID, item.SpecDirRel)
		}
		st, err := rt.loadState(item)
		if err != nil {
			return err
		}
		return fn(item, st)
	})
}

func (rt *Runtime) startLocked(item WorkItem, st *State) (*Step, error) {
	node := rt.routeSkips(st, item, rt.Graph.Start, rt.DeclaredSkips(st))
	st.enter(node, rt.now())
	// Persist before any side effect, so a crash mid-chain leaves the
	// pointer where the side effects say it is.
	if err := rt.save(item, st); err != nil {
		return nil, err
	}
	n, _ := rt.Graph.Node(node)
	entered := RunChain(n.Entry, rt.context(item, n, Entry, st, nil))
	rt.emit("graph.started", "info", map[string]any{"work_item": item.Ref, "node": node})
	step := &Step{Node: node, Status: string(StatusPass), Outcome: OutcomePass, Attempts: st.Record(node).Attempts, To: node}
	rt.noteDegradations(step, item, node, entered)
	return step, nil
}

// noteDegradations surfaces best-effort hooks that did not do their job: an
// event each, and one warning per distinct cause, so a machine with no
// integration reads one line rather than one per outbound hook.
func (rt *Runtime) noteDegradations(step *Step, item WorkItem, node string, out ChainOutcome) {
	var causes []string
	hooks := map[string][]string{}
	for _, d := range out.Degradations() {
		rt.emit("graph.hook_degraded", "warning", map[string]any{"work_item": item.Ref, "node": node, "hook": d[0], "error": d[1]})
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
	err := rt.locked(id, func(item WorkItem, st *State) (err error) {
		step, err = rt.advanceLocked(item, st, event)
		return err
	})
	return step, err
}

func (rt *Runtime) advanceLocked(item WorkItem, st *State, event *Event) (*Step, error) {
	skips := rt.DeclaredSkips(st)
	id := st.CurrentNode
	if id == "" {
		id = rt.routeSkips(st, item, rt.Graph.Start, skips)
	}
	n, err := rt.Graph.Node(id)
	if err != nil {
		return nil, rt.unknownCurrent(item, st)
	}
	out := RunChain(n.Exit, rt.context(item, n, Exit, st, event))
	step := &Step{Node: id, Status: string(out.Status), Outcome: out.Outcome(),
		Messages: renderMessages(out.Messages()), Attempts: st.Record(id).Attempts, Terminal: n.Terminal}
	for _, w := range out.Warnings {
		step.Messages = append(step.Messages, "warning: "+w)
	}
	rt.noteDegradations(step, item, id, out)

	switch out.Status {
	case StatusWait:
		reason := out.Render()
		if reason == "" {
			reason = "awaiting a human"
		}
		st.park(id, reason, rt.now())
		if err := rt.save(item, st); err != nil {
			return nil, err
		}
		rt.emit("graph.parked", "info", map[string]any{"work_item": item.Ref, "node": id})
		return step, nil
	case StatusBlock:
		repeated := st.noteBlock(id, out.Render())
		rec := st.Record(id)
		if err := rt.save(item, st); err != nil {
			return nil, err
		}
		if repeated || rec.Attempts >= n.MaxAttempts {
			rt.emit("graph.escalated", "warning", map[string]any{"work_item": item.Ref, "node": id,
				"attempts": rec.Attempts, "repeated": repeated, "hook": out.Blocking.Hook})
			step.Status = StatusEscalated
			switch {
			case repeated:
				step.Messages = append(step.Messages, "escalated for a human to look at: the same finding was reported twice in a row; the pointer has not moved, so fix it and advance again")
			default:
				step.Messages = append(step.Messages, fmt.Sprintf("escalated for a human to look at: %d attempts reached maxAttempts %d; the pointer has not moved", rec.Attempts, n.MaxAttempts))
			}
			return step, nil
		}
		rt.emit("graph.blocked", "info", map[string]any{"work_item": item.Ref, "node": id, "hook": out.Blocking.Hook})
		return step, nil
	}

	if rt.recordSelection(st, item, out) {
		skips = rt.DeclaredSkips(st)
	}
	st.exit(id, out.Outcome(), rt.now())
	target, ok := rt.Graph.Next(id, out.Outcome())
	if !ok {
		if n.Terminal {
			st.CurrentNode = id
			if err := rt.save(item, st); err != nil {
				return nil, err
			}
			rt.emit("graph.completed", "info", map[string]any{"work_item": item.Ref, "node": id})
			return step, nil
		}
		msg := fmt.Sprintf("no declared edge from %s on outcome %q", id, out.Outcome())
		st.park(id, msg, rt.now())
		if err := rt.save(item, st); err != nil {
			return nil, err
		}
		rt.emit("graph.no_edge", "warning", map[string]any{"work_item": item.Ref, "node": id, "outcome": out.Outcome()})
		step.Status = StatusEscalated
		step.Messages = append(step.Messages, msg)
		return step, nil
	}
	target = rt.routeSkips(st, item, target, skips)
	st.enter(target, rt.now())
	if err := rt.save(item, st); err != nil {
		return nil, err
	}
	next, _ := rt.Graph.Node(target)
	if next.Actor == ActorHuman {
		how := "new"
		if next.Session == "inherit" {
			how = "fresh-with-artifacts"
			if alive, ok := st.Session["alive"].(bool); len(st.Session) > 0 && (!ok || alive) {
				how = "inherited"
			}
		}
		rt.emit("graph.gate_session", "info", map[string]any{"work_item": item.Ref, "node": target, "resolution": how})
	}
	entered := RunChain(next.Entry, rt.context(item, next, Entry, st, nil))
	rt.emit("graph.advanced", "info", map[string]any{"work_item": item.Ref, "node": id, "to": target, "outcome": out.Outcome()})
	step.To = target
	step.Terminal = next.Terminal
	step.Messages = append(step.Messages, "advanced to "+target)
	rt.noteDegradations(step, item, target, entered)
	return step, nil
}

// recordSelection writes what a passing gate decided: a durable decision
// (and the frozen graph, surface, goal it carries), declared skips and
// opt-ins, each only for nodes the graph permits and the pointer has not yet
// reached. It reports whether the skip vocabulary changed.
func (rt *Runtime) recordSelection(st *State, item WorkItem, out ChainOutcome) bool {
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
		rt.emit("graph.skips_declared", "info", map[string]any{"work_item": item.Ref, "via": "selection", "nodes": ids})
		changed = true
	}
	if ids := pick("optIns", st.OptIns, func(n *Node) bool { return n.OptIn }); len(ids) > 0 {
		rt.emit("graph.opt_ins_selected", "info", map[string]any{"work_item": item.Ref, "via": "selection", "nodes": ids})
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
	var res *Completion
	err := rt.locked(id, func(item WorkItem, st *State) (err error) {
		res, err = rt.completeLocked(item, st, node, actor, event)
		return err
	})
	if errors.Is(err, ErrBusy) {
		return &Completion{Node: node, Status: "busy", Messages: []string{"another the-loop process holds the graph-state lock"}, Reason: "busy"}, nil
	}
	return res, err
}

func (rt *Runtime) completeLocked(item WorkItem, st *State, node, actor string, event *Event) (*Completion, error) {
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
	if err := rt.save(item, st); err != nil {
		return nil, err
	}
	step, err := rt.advanceLocked(item, st, event)
	if err != nil {
		return nil, err
	}
	return &Completion{Node: claimed, Status: step.Status, Outcome: step.Outcome, Moved: st.CurrentNode != current,
		CurrentNode: st.CurrentNode, Messages: step.Messages}, nil
}
