package policy

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/the-loop/the-loop/builtins"
	"github.com/the-loop/the-loop/eventlog"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/graphs"
)

// Options configure Open. The zero value opens the current directory with
// the CLI config found by the usual resolution order.
type Options struct {
	// Repo is the repository root; "" means the current directory.
	Repo string
	// CLIConfig is an explicit CLI config path (--config); "" resolves.
	CLIConfig string
	// Log receives diagnostics; nil discards them.
	Log *slog.Logger
	// Events receives the runtime's events; nil opens the operator's event
	// log under the CLI config's state root.
	Events graph.Emitter
	// Integration performs outbound calls; nil means the none integration.
	Integration graph.Integration
}

// Engine serves every verb for one repository: it holds the repository's
// harness config, the operator's CLI config and the resolved spec root, and
// builds a runtime per work item on the right loop. It is safe for
// concurrent use.
type Engine struct {
	Root     string
	SpecRoot string
	Harness  *HarnessConfig
	CLI      *CLIConfig

	log         *slog.Logger
	events      graph.Emitter
	integration graph.Integration
	changed     []string   // ctx.changed for every hook; nil: no base named
	mu          sync.Mutex // guards notes and refused: check runs items in parallel
	notes       []string
	refused     bool
}

// Notes are what the engine has to tell the user beside a verb's answer:
// that it adopted the repository, or why it could not. Each call drains them.
func (e *Engine) Notes() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := e.notes
	e.notes = nil
	return n
}

func (e *Engine) note(msg string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.notes = append(e.notes, msg)
}

// RepoError is a --repo that cannot be used.
type RepoError struct {
	Path string
	Err  error
}

func (e *RepoError) Error() string { return fmt.Sprintf("--repo %s: %v", e.Path, e.Err) }
func (e *RepoError) Unwrap() error { return e.Err }

// Open reads a repository's configuration. It never writes.
func Open(opts Options) (*Engine, error) {
	root := opts.Repo
	if root == "" {
		root = "."
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, &RepoError{Path: root, Err: err}
	}
	fi, err := os.Stat(abs)
	switch {
	case err != nil:
		return nil, &RepoError{Path: root, Err: errors.New("no such directory")}
	case !fi.IsDir():
		return nil, &RepoError{Path: root, Err: errors.New("not a directory")}
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		abs = resolved
	}
	cli, err := LoadCLIConfig(opts.CLIConfig)
	if err != nil {
		return nil, err
	}
	e := &Engine{Root: abs, CLI: cli, log: opts.Log, events: opts.Events, integration: opts.Integration}
	if err := e.loadHarness(); err != nil {
		return nil, err
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.events == nil {
		e.events = eventlog.Discard
		if cli.EventLogEnabled() {
			e.events = eventlog.OpenFile(cli.EventLogPath(), "cli")
		}
	}
	if e.integration == nil {
		e.integration = graph.NoIntegration{}
	}
	return e, nil
}

// loadHarness reads the repository's harness config and resolves the spec
// root from it.
func (e *Engine) loadHarness() error {
	hc, err := LoadHarnessConfig(e.Root)
	if err != nil {
		return err
	}
	// The operator's routing.graph.specDir only stands in for a repository
	// that has no harness config of its own to say where its specs live.
	override := ""
	if !hc.Initialized() {
		override = e.CLI.SpecDirOverride()
	}
	specRoot, err := hc.ResolveSpecDir(override)
	if err != nil {
		return err
	}
	e.Harness, e.SpecRoot = hc, specRoot
	return nil
}

// adopt gives an unadopted repository the built-in harness config before a
// verb moves item, so the run that adopts it already reads it as adopted.
// An item of the contribution loop never adopts its host repository: a
// guest does not install itself. Failing to adopt never fails the verb; the
// reason becomes a note.
func (e *Engine) adopt(item string, sel Selector) error {
	if e.Harness.Initialized() || (sel.PR == 0 && e.recordedLoop(item) == graph.ContributionLoop) {
		return nil
	}
	outcome, err := scaffold(e.Root, "", "", false)
	switch {
	case err != nil:
		e.note("not adopting this repository: " + err.Error())
		e.log.Warn("not adopting the repository", "root", e.Root, "err", err)
		return nil
	case outcome != ScaffoldWritten:
		return nil
	}
	e.note("adopted this repository: wrote " + scaffoldedFile + " with the built-in defaults; tailor it and commit it")
	e.emit("harness.config_scaffolded", "info", map[string]any{"work_item": item, "path": scaffoldedFile})
	return e.loadHarness()
}

func (e *Engine) emit(event, level string, fields map[string]any) {
	if err := e.events.Emit(event, level, fields); err != nil {
		e.log.Warn("could not write event", "event", event, "err", err)
	}
}

// shippedLoops compiles each shipped loop once per process, on first use
// (most runs walk one loop), from its pre-parsed tree.
var shippedLoops = func() map[string]func() (*graph.Graph, error) {
	m := map[string]func() (*graph.Graph, error){}
	for _, name := range graphs.Names {
		m[name] = sync.OnceValues(func() (*graph.Graph, error) {
			tree, err := graphs.Tree(name)
			if err != nil {
				return nil, err
			}
			g, err := graph.CompileTree(graphs.FileName(name), tree, builtins.Registry())
			if err != nil {
				return nil, fmt.Errorf("shipped loop %s: %w", name, err)
			}
			return g, nil
		})
	}
	return m
}()

// Loop returns the compiled shipped loop name.
func Loop(name string) (*graph.Graph, error) {
	compile, ok := shippedLoops[name]
	if !ok {
		return nil, fmt.Errorf("unknown loop %q; the shipped loops are %s", name, strings.Join(graphs.Names, ", "))
	}
	return compile()
}

// Selector chooses which loop a verb walks: an inner pull-request loop when
// PR is set, else the outer loop the item's state records.
type Selector struct {
	// PR selects the inner pdlc-pr-loop for that pull request.
	PR int
	// PRRepo qualifies PR by owner/name when it is not the origin repository.
	PRRepo string
	// Ref names the work item for integrations, overriding the derived one.
	Ref string
}

// Loop is the shipped loop the selector walks before any state says
// otherwise: the pull-request loop for a PR, else the work-item loop.
func (s Selector) Loop() string {
	if s.PR > 0 {
		return graph.PRLoop
	}
	return graph.WorkItemLoop
}

// Runtime builds the runtime for item. The outer loop is the one the item's
// state records when that is a known outer-path loop (the state file is
// agent-written, so nothing else may select a graph), else the work-item
// loop.
func (e *Engine) Runtime(item string, sel Selector) (*graph.Runtime, error) {
	return e.runtime(item, sel, true)
}

// runtime builds item's runtime; emit is false for pure evaluations.
func (e *Engine) runtime(item string, sel Selector, emit bool) (*graph.Runtime, error) {
	rt := &graph.Runtime{
		Repo: e.Root, SpecRoot: e.SpecRoot, Config: e.Harness.Doc, Integration: e.integration,
		Events: e.events, Log: e.log,
		Settings: graph.Settings{
			AuthorizedUsers:  e.CLI.AuthorizedUsers(),
			PhaseLabelPrefix: e.Harness.PhaseLabelPrefix(),
			OriginRepo:       e.Harness.OriginRepo(),
			RepoInitialized:  e.Harness.Initialized(),
			ExecuteKeyword:   e.CLI.ExecuteKeyword(),
			Notifications:    e.Harness.Notifications(),
		},
	}
	rt.Ref = sel.Ref
	rt.Changed = e.changed
	name := sel.Loop()
	if sel.PR > 0 {
		rt.StateSubpath = innerLoopDir(sel.PR, sel.PRRepo)
		rt.PRRef = graph.RefFor(cmp.Or(sel.PRRepo, rt.Settings.OriginRepo), sel.PR)
	} else if l := e.recordedLoop(item); l != "" {
		name = l
	}
	g, err := Loop(name)
	if err != nil {
		return nil, err
	}
	if rt.Graph, err = e.extend(g, emit); err != nil {
		return nil, err
	}
	return rt, nil
}

func innerLoopDir(pr int, prRepo string) string {
	if owner, repo, ok := splitSlug(prRepo); ok {
		return fmt.Sprintf("pr-loops/%s__%s/pr-%d", owner, repo, pr)
	}
	return fmt.Sprintf("pr-loops/pr-%d", pr)
}

// recordedLoop is the outer-path loop item's state records, "" for the
// default or anything it cannot read (the verb itself reports a bad state).
func (e *Engine) recordedLoop(item string) string {
	data, err := os.ReadFile(filepath.Join(e.SpecRoot, item, graph.StateFile))
	if err != nil {
		return ""
	}
	var head struct {
		Loop string `json:"loop"`
	}
	if json.Unmarshal(data, &head) != nil {
		return ""
	}
	return graph.OuterLoop(head.Loop)
}

// ErrNoSpecDir is wrapped by Items when the spec directory does not exist.
var ErrNoSpecDir = errors.New("no spec directory")

// Items lists the work items: the spec root's subdirectories, sorted. When
// the spec root does not exist it returns no items and an error wrapping
// ErrNoSpecDir that says where it looked and which setting says so: the
// reference tool answers "nothing to check", and a caller should still let
// the user see that a typo may be why.
func (e *Engine) Items() ([]string, error) {
	entries, err := os.ReadDir(e.SpecRoot)
	if errors.Is(err, fs.ErrNotExist) {
		where := "the default; no harness config sets workflow.specDir"
		if e.Harness.Initialized() {
			where = "workflow.specDir in " + e.Harness.File()
		}
		return nil, fmt.Errorf("%w at %s (%s)", ErrNoSpecDir, e.SpecDirRel(), where)
	}
	if err != nil {
		return nil, fmt.Errorf("list work items: %w", err)
	}
	var out []string
	for _, d := range entries {
		if d.IsDir() {
			out = append(out, d.Name())
		}
	}
	slices.Sort(out)
	return out, nil
}

// Check evaluates items purely. It writes nothing, runs nothing and emits
// nothing. Items are independent, so they are evaluated on every core;
// reports come back in the order of items, and the first error (in that
// order) wins.
func (e *Engine) Check(items []string, recompute bool, sel Selector) ([]*graph.StatusReport, error) {
	reports := make([]*graph.StatusReport, len(items))
	errs := make([]error, len(items))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(items)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				reports[i], errs[i] = e.check(items[i], recompute, sel)
			}
		}()
	}
	for i := range items {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return reports, nil
}

func (e *Engine) check(item string, recompute bool, sel Selector) (*graph.StatusReport, error) {
	rt, err := e.runtime(item, sel, false)
	if err != nil {
		return nil, err
	}
	return rt.Status(item, recompute)
}

// moving builds the runtime of a verb that moves item, adopting the
// repository first when it should be.
func (e *Engine) moving(item string, sel Selector) (*graph.Runtime, error) {
	if err := e.adopt(item, sel); err != nil {
		return nil, err
	}
	return e.Runtime(item, sel)
}

// Advance evaluates item's current node and acts on it. An item that has
// not entered the loop is evaluated at its start node without entering it,
// as the reference tool's CLI does: entering (and the start node's entry
// chain) is the ingress's job.
func (e *Engine) Advance(item string, sel Selector, ev *graph.Event) (*graph.Step, error) {
	rt, err := e.moving(item, sel)
	if err != nil {
		return nil, err
	}
	return rt.Advance(item, ev)
}

// Complete is a completion claim for item's current (or named) node.
func (e *Engine) Complete(item, node, actor string, sel Selector, ev *graph.Event) (*graph.Completion, error) {
	rt, err := e.moving(item, sel)
	if err != nil {
		return nil, err
	}
	return rt.Complete(item, node, actor, ev)
}

// Run advances item until it waits, blocks, escalates or completes.
func (e *Engine) Run(item string, maxNodes int, dryRun bool, sel Selector, ev *graph.Event) (*graph.RunReport, error) {
	if !dryRun {
		if err := e.adopt(item, sel); err != nil {
			return nil, err
		}
	}
	rt, err := e.runtime(item, sel, !dryRun)
	if err != nil {
		return nil, err
	}
	return rt.Run(item, maxNodes, dryRun, ev)
}

// Skip declares skips for item.
func (e *Engine) Skip(item string, tokens []string, reason, actor string, sel Selector) (*graph.SkipDeclaration, error) {
	rt, err := e.moving(item, sel)
	if err != nil {
		return nil, err
	}
	return rt.DeclareSkips(item, tokens, reason, actor)
}

// Force moves item's pointer to node.
func (e *Engine) Force(item, to, reason, actor string, sel Selector) (*graph.Forcing, error) {
	rt, err := e.moving(item, sel)
	if err != nil {
		return nil, err
	}
	return rt.Force(item, to, reason, actor)
}

// splitSlug splits owner/name when both halves pass ValidGitHubName.
func splitSlug(slug string) (owner, name string, ok bool) {
	owner, name, ok = strings.Cut(slug, "/")
	if !ok || !ValidGitHubName(owner) || !ValidGitHubName(name) {
		return "", "", false
	}
	return owner, name, true
}
