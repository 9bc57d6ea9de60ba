package policy

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/the-loop/the-loop/builtins"
	"github.com/the-loop/the-loop/eventlog"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/graphs"
	"github.com/the-loop/the-loop/repo"
)

// Options configure Open. The zero value opens the repository holding the
// working directory, with the CLI config found by the usual resolution
// order.
type Options struct {
	// Repo is the repository root; "" means the repository holding the
	// working directory (see FindRepository).
	Repo string
	// OrWorkDir makes a working directory in no repository the repository
	// itself, for a verb that adopts one (init); otherwise it is an error
	// wrapping ErrNoRepository.
	OrWorkDir bool
	// CLIConfig is an explicit CLI config path (--config); "" resolves.
	CLIConfig string
	// CLI, when set, is the CLI config already loaded (a long-running
	// caller, serve, reads it once): CLIConfig is then ignored.
	CLI *CLIConfig
	// NoAdopt keeps the verbs that move an item from adopting the
	// repository on their own. The ingress sets it: it adopts only after
	// proving the checkout is the work item's repository, and names that
	// repository when it does (AdoptAs).
	NoAdopt bool
	// Moves says the engine serves verbs that move items, or preview a
	// move: the CLI's advance, complete, force, skip and run, and the
	// ingress. Such an engine runs a repository whose .the-loop leads out
	// of the checkout on the built-in defaults, with a note, a warning and
	// the harness.config_scaffold_failed event, as seed 002 has a verb
	// whose adoption cannot write go on; an engine that only reads (check,
	// show, status, hooks, config, init, new) refuses that checkout, as
	// every *graph.ConfigError.
	Moves bool
	// RulesFrom, when set, is a git revision the gate's own files are read
	// from, read-only, out of git's object store: the harness config and
	// every .star module it declares, with what they load(). Artifacts and
	// state still come from the checkout. It is how a pull request is
	// judged by its base branch's rules rather than by rules it rewrote.
	RulesFrom string
	// Base, when set, is the git revision ctx.changed is counted from (see
	// Engine.Changes): git starts at once, and runs while the configs load.
	Base string
	// Log receives diagnostics; nil discards them.
	Log *slog.Logger
	// Events receives the runtime's events; nil opens the operator's event
	// log under the CLI config's state root.
	Events graph.Emitter
	// Integration performs outbound calls; nil means the none integration.
	Integration graph.Integration
	// ReloadHooks loads the repository's hook modules afresh for this
	// engine rather than once per process: for a long-running caller
	// (serve), under which a checkout's modules change.
	ReloadHooks bool
	// LockTimeout is how long a verb that moves an item waits for its lock
	// while another writer holds it; zero answers graph.ErrBusy at once.
	LockTimeout time.Duration
	// Replies, when set, is the integration Check reads each work item's
	// thread through, handing what people answered to the gates (see
	// graph.Runtime.Replies). Check calls its list-comments and nothing
	// else, once per item; its hooks still make no outbound call. Nil:
	// Check reads no replies, and human gates wait.
	Replies graph.Integration
	// AllFindings has Check run, at each reached node whose exit chain
	// stopped, the repository hooks the chain did not reach, report-only
	// (see graph.Runtime.AllFindings): every finding is shown, and no
	// verdict changes. Only Check does; the verbs that move an item run
	// chains as far as their stopper.
	AllFindings bool
}

// Engine serves every verb for one repository: it holds the repository's
// harness config, the operator's CLI config and the resolved spec root, and
// builds a runtime per work item on the right loop. It is safe for
// concurrent use.
type Engine struct {
	// Root is the repository root, absolute, links resolved.
	Root string
	// Checkout is the repository, confined, its spec root set: every file
	// the engine, the runtime and the hooks touch goes through it.
	Checkout *repo.Checkout
	Harness  *HarnessConfig
	CLI      *CLIConfig

	log         *slog.Logger
	events      graph.Emitter
	integration graph.Integration
	noAdopt     bool // Options.NoAdopt
	moves       bool // Options.Moves
	// configDirOut: .the-loop leads out of the checkout, and this moving
	// engine runs on the built-in defaults (said once, as a note).
	configDirOut bool
	// builtin is the built-in default harness config adoption writes;
	// nil is graphs.DefaultHarnessConfig (a test stands in a broken one).
	builtin     func() []byte
	reloadHooks bool // Options.ReloadHooks
	lockTimeout time.Duration
	replies     graph.Integration // Options.Replies; nil: check reads none
	allFindings bool              // Options.AllFindings
	base        *changes          // Options.Base's changes; nil: no base named
	rules       *rules            // the revision the gate's files come from; nil: the checkout
	budget      *graph.Budget     // the rule time all of this engine's repository hooks share
	mu          sync.Mutex        // guards notes, refused, unreplied and denied: check runs items in parallel
	notes       []string
	refused     bool
	unreplied   []string // items Check read no replies for: they have no ref
	denied      error    // the first listing the integration's credential was refused
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

// ErrNoRepository is wrapped by Open when no repository holds the working
// directory: a gate run in the wrong place must not answer "nothing to
// check".
var ErrNoRepository = repo.ErrNoRepository

// repositoryMarkers say a directory is a repository's root: its git
// directory, or a harness config under either name (in any form, so that a
// broken one is reported rather than walked past).
var repositoryMarkers = []string{".git", ConfigDir + "/" + HarnessConfigFile, ConfigDir + "/" + LegacyHarnessConfigFile}

// FindRepository returns the root of the repository holding dir: the
// nearest of dir and its parents holding .git or a harness config. A
// .the-loop directory without a harness config (the operator's own
// ~/.the-loop) does not count.
func FindRepository(dir string) (string, error) { return repo.Find(dir, repositoryMarkers...) }

// RepositoryMarkers says what IsRepositoryRoot looks for, for a message:
// "neither .git nor ...".
func RepositoryMarkers() string { return "neither " + strings.Join(repositoryMarkers, " nor ") }

// IsRepositoryRoot reports whether dir itself holds one of the markers
// FindRepository looks for (in any form, as it does).
func IsRepositoryRoot(dir string) bool {
	for _, m := range repositoryMarkers {
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(m))); err == nil {
			return true
		}
	}
	// A .the-loop that is a link is a config's place taken over: it marks
	// the root, so that opening it reports the link.
	fi, err := os.Lstat(filepath.Join(dir, ConfigDir))
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}

// Open reads a repository's configuration. It never writes.
func Open(opts Options) (*Engine, error) {
	root, err := Locate(opts)
	if err != nil {
		return nil, err
	}
	co, err := repo.Open(root)
	if err != nil {
		return nil, &RepoError{Path: root, Err: err}
	}
	cli := opts.CLI
	if cli == nil {
		if cli, err = LoadCLIConfig(opts.CLIConfig); err != nil {
			return nil, err
		}
	}
	e := &Engine{Root: co.Root(), Checkout: co, CLI: cli, log: opts.Log, events: opts.Events,
		integration: opts.Integration, noAdopt: opts.NoAdopt, moves: opts.Moves, reloadHooks: opts.ReloadHooks, lockTimeout: opts.LockTimeout, replies: opts.Replies,
		allFindings: opts.AllFindings, budget: graph.NewBudget(cli.HookBudget())}
	if cli.Ignored != "" {
		e.note(fmt.Sprintf("ignored %s: a CLI config in the working directory is never read, since the operator's settings must not come from the checkout; name it with --config to use it", cli.Ignored))
	}
	if opts.Base != "" {
		e.base = startChanges(co, opts.Base)
	}
	if err := e.loadRules(opts.RulesFrom); err != nil {
		// Nobody will wait for the changes: stop their git.
		e.base.stop()
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

// Locate is the repository root opts name: Repo, which must be a
// directory, else the repository holding the working directory.
func Locate(opts Options) (string, error) {
	if opts.Repo != "" {
		abs, err := filepath.Abs(opts.Repo)
		if err != nil {
			return "", &RepoError{Path: opts.Repo, Err: err}
		}
		// Departure from the original (docs/compatibility.md#a---repo-that-is-not-a-repository-is-exit-2): a --repo that does not exist is exit 2, not UNREAD and exit 1.
		fi, err := os.Stat(abs)
		switch {
		case err != nil:
			return "", &RepoError{Path: opts.Repo, Err: errors.New("no such directory")}
		case !fi.IsDir():
			return "", &RepoError{Path: opts.Repo, Err: errors.New("not a directory")}
		}
		return abs, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the repository: %w", err)
	}
	root, err := FindRepository(wd)
	if errors.Is(err, ErrNoRepository) && opts.OrWorkDir {
		return wd, nil
	}
	return root, err
}

// loadRules reads the harness config, from the revision rulesFrom when
// one is named.
func (e *Engine) loadRules(rulesFrom string) error {
	if rulesFrom != "" {
		var err error
		if e.rules, err = openRules(e.Checkout, rulesFrom); err != nil {
			return err
		}
	}
	return e.loadHarness()
}

// loadHarness reads the repository's harness config and resolves the spec
// root from it.
func (e *Engine) loadHarness() error {
	var hc *HarnessConfig
	var err error
	switch {
	case e.rules != nil:
		hc, err = LoadRevisionHarness(e.Checkout, e.rules.rev)
	case e.moves && configDirLeadsOut(e.Checkout):
		// Departure from the original (docs/compatibility.md#a-the-loop-that-leads-out-of-the-checkout): nothing is read through the link; the move goes on with the defaults.
		hc = DefaultHarnessConfig(e.Checkout.Root())
		hc.co = e.Checkout
		if !e.configDirOut {
			e.configDirOut = true
			e.note(ConfigDir + " is a symbolic link leading outside the checkout: nothing is read or written through it, and this run uses the built-in defaults")
		}
	default:
		hc, err = LoadCheckoutHarness(e.Checkout)
	}
	if err != nil {
		return err
	}
	// The operator's routing.graph.specDir only stands in for a repository
	// that has no harness config of its own to say where its specs live.
	override := ""
	if !hc.Initialized() {
		override = e.CLI.SpecDirOverride()
	}
	co, err := hc.SpecCheckout(override)
	if err != nil {
		return err
	}
	e.Harness, e.Checkout = hc, co
	return nil
}

// adopt gives an unadopted repository the built-in harness config before a
// verb moves item, so the run that adopts it already reads it as adopted.
// An item of the contribution loop never adopts its host repository: a
// guest does not install itself. Failing to adopt never fails the verb: the
// run goes on with the per-key defaults, and the reason becomes a note, a
// warning and an event.
func (e *Engine) adopt(item, recorded string, sel Selector) (bool, error) {
	if e.noAdopt || e.Harness.Initialized() || (sel.PR == 0 && recorded == graph.ContributionLoop) {
		return false, nil
	}
	outcome, err := scaffold(e.Checkout, e.builtinDefault(), "", "", false)
	switch {
	case err != nil:
		e.adoptFailed(item, err)
		return false, nil
	case outcome != ScaffoldWritten:
		return false, nil
	}
	e.note("adopted this repository: wrote " + scaffoldedFile + " with the built-in defaults; tailor it and commit it")
	e.emit("harness.config_scaffolded", "info", map[string]any{"work_item": item, "path": scaffoldedFile})
	return true, e.loadHarness()
}

// builtinDefault is where adoption reads the built-in default from.
func (e *Engine) builtinDefault() func() []byte {
	if e.builtin != nil {
		return e.builtin
	}
	return graphs.DefaultHarnessConfig
}

// adoptFailed says why the repository was not adopted for item (a work
// item's id or ref): nothing was written, and the run goes on.
func (e *Engine) adoptFailed(item string, err error) {
	if !e.configDirOut {
		// A .the-loop leading out was said when the config was read.
		e.note("not adopting this repository: " + err.Error() + "; nothing was written, and this run uses the built-in defaults")
	}
	e.log.Warn("not adopting the repository", "root", e.Root, "work_item", item, "err", err)
	// Departure from the original (docs/compatibility.md#a-verb-that-cannot-adopt-says-so-in-the-event-log): the original only logs the warning.
	e.emit("harness.config_scaffold_failed", "warning", map[string]any{"work_item": item, "path": scaffoldedFile, "error": err.Error()})
}

func (e *Engine) emit(event, level string, fields map[string]any) {
	if err := e.events.Emit(event, level, fields); err != nil {
		e.log.Warn("could not write event", "event", event, "err", err)
	}
}

//go:generate go test -run ^TestTheCompiledLoopsAreTheirYAMLs$ -update .

// shippedLoops builds each shipped loop once per process, on first use
// (most runs walk one loop). Each was compiled from its YAML when the
// program was built (loops_compiled.go, which a test holds to what
// graph.Compile makes of the YAML now): a process neither parses nor
// checks it again.
var shippedLoops = func() map[string]func() (*graph.Graph, error) {
	m := map[string]func() (*graph.Graph, error){}
	for _, name := range graphs.Names {
		m[name] = sync.OnceValues(func() (*graph.Graph, error) {
			g := compiledLoop(name)
			if g == nil {
				return nil, fmt.Errorf("shipped loop %s: not compiled into the program; run go generate ./policy", name)
			}
			return graph.Assemble(g, builtins.Registry()), nil
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
	return e.runtime(e.recordedLoop(item, sel), sel, true)
}

// runtime builds the runtime of the outer loop recorded ("" for the
// default; ignored for an inner loop); emit is false for pure evaluations.
func (e *Engine) runtime(recorded string, sel Selector, emit bool) (*graph.Runtime, error) {
	rt := &graph.Runtime{
		Checkout: e.Checkout, Config: e.Harness.Doc, Integration: e.integration,
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
	rt.LockTimeout = e.lockTimeout
	rt.Budget = e.budget
	rt.Changed, _ = e.Changes() // Check has waited, and said a failure
	name := sel.Loop()
	if sel.PR > 0 {
		sub, err := innerLoopDir(sel.PR, sel.PRRepo)
		if err != nil {
			return nil, err
		}
		rt.StateSubpath = sub
		rt.PRRef = graph.RefFor(cmp.Or(sel.PRRepo, rt.Settings.OriginRepo), sel.PR)
	} else if recorded != "" {
		name = recorded
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

// innerLoopDir is where pull request pr's inner loop keeps its state,
// below its work item's folder: pr-loops/pr-N for one in the origin
// repository (prRepo ""), pr-loops/OWNER__NAME/pr-N for one in prRepo. A
// prRepo graph.ParseRepoName refuses is an error, never the origin's
// directory nor a path built from it: it names a directory.
func innerLoopDir(pr int, prRepo string) (string, error) {
	if prRepo == "" {
		return fmt.Sprintf("pr-loops/pr-%d", pr), nil
	}
	r, err := graph.ParseRepoName(prRepo)
	if err != nil {
		return "", fmt.Errorf("the pull request's repository: %w", err)
	}
	return fmt.Sprintf("pr-loops/%s/pr-%d", r.StateKey(), pr), nil
}

// recordedLoop is the outer-path loop item's state records, "" for the
// default or anything it cannot read (the verb itself reports a bad state).
func (e *Engine) recordedLoop(item string, sel Selector) string {
	_, recorded, _, _ := e.itemState(item, sel)
	return recorded
}

// itemState reads item's state for sel's loop through the checkout, and
// the outer-path loop it records ("" for the default, and for an inner
// loop).
func (e *Engine) itemState(item string, sel Selector) (st *graph.State, recorded, dir string, err error) {
	return e.itemStateIn(graph.DirectFiles(e.Checkout), item, sel)
}

// itemStateIn is itemState reading through files.
func (e *Engine) itemStateIn(files *graph.Files, item string, sel Selector) (st *graph.State, recorded, dir string, err error) {
	it, err := files.Item(item)
	if err != nil {
		return nil, "", "", err
	}
	sub, err := e.stateSubpath(sel)
	if err != nil {
		return nil, "", "", err
	}
	dir = graph.StateDirOf(it.Dir, sub)
	st, err = graph.LoadStateIn(files, dir, item)
	if err != nil || sel.PR > 0 {
		return st, "", dir, err
	}
	return st, graph.OuterLoop(st.Loop), dir, nil
}

func (e *Engine) stateSubpath(sel Selector) (string, error) {
	if sel.PR > 0 {
		return innerLoopDir(sel.PR, sel.PRRepo)
	}
	return "", nil
}

// ErrNoSpecDir is wrapped by Items when the spec directory does not exist.
var ErrNoSpecDir = errors.New("no spec directory")

// Items lists the work items: the spec root's subdirectories, sorted. When
// the spec root does not exist it returns no items and an error wrapping
// ErrNoSpecDir that says where it looked and which setting says so: the
// reference tool answers "nothing to check", and a caller should still let
// the user see that a typo may be why.
//
// Under Options.RulesFrom they include the items the revision holds a
// state for that this change removed (see lineage.go): a check of one
// reports it blocked where the revision has it, so that deleting a spec
// folder, or the whole spec directory, hides nothing.
func (e *Engine) Items() ([]string, error) {
	out, err := e.Checkout.Items()
	if removed := e.removedItems(); len(removed) > 0 && (err == nil || errors.Is(err, fs.ErrNotExist)) {
		return withRemoved(out, removed), nil
	}
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
	return out, nil
}

// Check evaluates items purely. It writes nothing, runs nothing and emits
// nothing. Items are independent, so they are evaluated on every core;
// reports come back in the order of items. With Options.Replies it also
// lists each item's thread, once, a few items at a time; an item with no
// GitHub ref is evaluated without replies and named in a note.
//
// An item that cannot be evaluated by itself (a corrupt or unreadable
// state file, a folder that is not one, a thread that cannot be read) does
// not hide the others: their
// reports come back with an *ItemsError naming each that failed. Any
// other error (a configuration or hook module that cannot load) fails
// every item alike and is returned alone, the first in order.
//
// Check holds every report until the last is done; CheckEach hands each
// over as it is.
func (e *Engine) Check(items []string, recompute bool, sel Selector) ([]*graph.StatusReport, error) {
	reports := make([]*graph.StatusReport, 0, len(items))
	err := e.CheckEach(items, recompute, sel, func(r *graph.StatusReport) error {
		reports = append(reports, r)
		return nil
	})
	var failed ItemsError
	if err != nil && !errors.As(err, &failed) {
		return nil, err
	}
	return reports, err
}

// CheckEach is Check, handing each report to yield as soon as its item
// and every item before it are evaluated, in the order of items, from the
// calling goroutine. Only a few items are evaluated ahead of the one yield
// waits for, so memory stays that of a few reports however many items
// there are: a caller that writes each report out and lets it go checks
// ten thousand items in the memory of a handful.
//
// The errors are Check's. An *ItemsError comes after every report. An
// error that fails every item comes before any report: CheckEach first
// builds every loop an item may walk, and when one cannot be built it
// evaluates all the items before handing any over, so that the error is
// that of the first item in order to meet it, and a caller has written
// nothing when it gets it. (Only an engine that reloads its hooks, whose
// modules can change on disk during the run, can still meet such an error
// after a report has been handed over.) An error yield returns stops the
// evaluation and is returned.
func (e *Engine) CheckEach(items []string, recompute bool, sel Selector, yield func(*graph.StatusReport) error) error {
	// What changed is every item's ctx.changed: a base git cannot use
	// fails them all, once.
	if _, err := e.Changes(); err != nil {
		return err
	}
	if e.rules != nil {
		e.rules.prefetch(e.SpecDirRel(), len(items))
	}
	// One worker more than there are cores: a worker hands its report
	// over and waits its turn, or reads a file, and meanwhile the core is
	// another's rather than idle. On two cores that took a tenth off a
	// 10,000-item check (docs/performance.md).
	workers := min(runtime.GOMAXPROCS(0)+1, maxCheckWorkers, len(items))
	if e.replies != nil {
		// Each item waits on its thread's listing, not on a core.
		workers = min(maxCheckWorkers, len(items))
	}
	eval := func(item string) (*graph.StatusReport, error) { return e.check(item, recompute, sel) }
	var failed ItemsError
	var err error
	if len(items) > 0 && !e.loopsBuild(sel) {
		err = e.checkWhole(items, workers, eval, yield, &failed)
	} else {
		err = inOrder(items, workers, checkAhead*max(workers, 1), eval, func(i int, r *graph.StatusReport, err error) error {
			switch {
			case err == nil:
				return yield(r)
			case isItemError(err):
				failed = append(failed, ItemFailure{Item: items[i], Err: err})
				return nil
			}
			return err
		})
	}
	if err != nil {
		return err
	}
	e.noteGateEdits()
	e.noteDenied()
	e.noteUnreplied()
	if len(failed) > 0 {
		return failed
	}
	return nil
}

// checkAhead is how many items per worker CheckEach evaluates ahead of
// the one its caller waits for: enough that a slow item does not idle the
// other cores, few enough that the reports held are a handful.
const checkAhead = 4

// loopsBuild reports whether every loop a check under sel may walk builds
// with this repository's hooks: the work-item loop and the other outer
// loops a state can record, or the pull-request loop. A loop is built
// once per process, so a check that has built them all cannot fail on one
// halfway.
func (e *Engine) loopsBuild(sel Selector) bool {
	recorded := []string{"", graph.ContributionLoop, graph.AdhocLoop}
	if sel.PR > 0 {
		recorded = []string{""} // the inner loop, whatever the state says
	}
	for _, r := range recorded {
		if _, err := e.runtime(r, sel, false); err != nil {
			return false
		}
	}
	return true
}

// checkWhole is CheckEach for a repository where some loop does not
// build: every item is evaluated before any report is handed over, and
// the first error in order that is not an item's own is returned alone.
func (e *Engine) checkWhole(items []string, workers int, eval func(string) (*graph.StatusReport, error), yield func(*graph.StatusReport) error, failed *ItemsError) error {
	reports := make([]*graph.StatusReport, len(items))
	errs := make([]error, len(items))
	inOrder(items, workers, len(items), eval, func(i int, r *graph.StatusReport, err error) error {
		reports[i], errs[i] = r, err
		return nil
	})
	for i, err := range errs {
		switch {
		case err == nil:
		case isItemError(err):
			*failed = append(*failed, ItemFailure{Item: items[i], Err: err})
		default:
			return err
		}
	}
	for _, r := range reports {
		if r == nil {
			continue
		}
		if err := yield(r); err != nil {
			return err
		}
	}
	return nil
}

// inOrder evaluates items on workers goroutines and calls each with every
// item's result, from the calling goroutine, in the order of items, as
// soon as the item and those before it are done. At most ahead items are
// evaluated and not yet handed to each. When each returns an error no
// other item is started, and that error is returned once the workers have
// stopped.
func inOrder(items []string, workers, ahead int, eval func(string) (*graph.StatusReport, error), each func(int, *graph.StatusReport, error) error) error {
	type result struct {
		rep *graph.StatusReport
		err error
	}
	ahead = max(ahead, 1)
	// Item i's result waits in slot i%ahead: with at most ahead items
	// started and not yet handed over, a slot never holds two.
	slots := make([]chan result, ahead)
	for i := range slots {
		slots[i] = make(chan result, 1)
	}
	tokens := make(chan struct{}, ahead) // one per item started and not yet handed over
	next := make(chan int)
	stop := make(chan struct{})
	go func() {
		defer close(next)
		for i := range items {
			select {
			case tokens <- struct{}{}:
			case <-stop:
				return
			}
			select {
			case next <- i:
			case <-stop:
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r, err := eval(items[i])
				slots[i%ahead] <- result{r, err}
			}
		}()
	}
	var err error
	for i := range items {
		r := <-slots[i%ahead]
		err = each(i, r.rep, r.err)
		<-tokens // item i is handed over: another may start
		if err != nil {
			break
		}
	}
	close(stop)
	wg.Wait()
	return err
}

// maxCheckWorkers bounds how many items Check evaluates at once: each keeps
// its files (up to graph.MaxEvaluationBytes) until it is done, so memory
// grows with the workers, and past a few the file system is the limit.
const maxCheckWorkers = 8

// ItemFailure is one work item Check could not evaluate.
type ItemFailure struct {
	Item string
	Err  error
}

// ItemsError lists the work items Check could not evaluate, in order;
// the others were.
type ItemsError []ItemFailure

func (e ItemsError) Error() string {
	if len(e) == 1 {
		return e[0].Err.Error()
	}
	return fmt.Sprintf("%d work items could not be evaluated; the first: %v", len(e), e[0].Err)
}

// isItemError reports an error that concerns one work item only.
func isItemError(err error) bool {
	var se *graph.StateError
	var ie *repo.ItemError
	var re *ReplyError
	return errors.As(err, &se) || errors.As(err, &ie) || errors.As(err, &re)
}

func (e *Engine) check(item string, recompute bool, sel Selector) (*graph.StatusReport, error) {
	began := time.Now()
	// The state is read once: it names the loop, and is then evaluated,
	// through the same read-only view of the item's files.
	files := graph.NewFiles(e.Checkout)
	st, recorded, dir, err := e.itemStateIn(files, item, sel)
	if err != nil {
		// A folder the change removed, or made into something else (a
		// file, a link): the revision's state judges it.
		var ie *repo.ItemError
		if errors.As(err, &ie) {
			if rep, ok, rerr := e.removedReport(item, sel); ok {
				return rep, rerr
			}
		}
		return nil, err
	}
	bases := e.baselinesOf(item, dir, sel)
	if len(bases) <= 1 {
		var base *baseline
		if len(bases) == 1 {
			base = bases[0]
		}
		rep, said, err := e.judge(files, item, st, recorded, base, sel, recompute, true)
		if err != nil {
			return nil, err
		}
		if base != nil {
			e.noteBaseline(item, base, said)
		}
		rep.Elapsed = time.Since(began)
		return rep, nil
	}
	// More than one of the revision's items carries on as this one: each
	// is its floor in turn, and the report that fails most is given.
	var best *graph.StatusReport
	var bestSaid []string
	var bestBase *baseline
	for _, base := range bases {
		rep, said, err := e.judge(graph.NewFiles(e.Checkout), item, st, recorded, base, sel, recompute, false)
		if err != nil {
			return nil, err
		}
		if best == nil || failRank(rep) > failRank(best) {
			best, bestSaid, bestBase = rep, said, base
		}
	}
	e.noteBaseline(item, bestBase, bestSaid)
	best.Elapsed = time.Since(began)
	return best, nil
}

// failRank orders reports by how they fail: a block, then any unmet node,
// then none.
func failRank(r *graph.StatusReport) int {
	switch {
	case r.Blocked():
		return 2
	case !r.OK:
		return 1
	}
	return 0
}

// judge evaluates item, whose state st was read through files, against
// base (nil: the checkout's state alone), and says what the state tried.
// lend lets the evaluation read into a pooled arena: only when files is
// used for this one evaluation.
func (e *Engine) judge(files *graph.Files, item string, st *graph.State, recorded string, base *baseline, sel Selector, recompute, lend bool) (*graph.StatusReport, []string, error) {
	var said []string
	if base != nil && sel.PR == 0 {
		var why string
		if recorded, why = base.loop(recorded); why != "" {
			// A state of another loop means nothing on this one.
			said, st = append(said, why), base.st
		}
	}
	rt, err := e.runtime(recorded, sel, false)
	if err != nil {
		return nil, nil, err
	}
	if e.replies != nil {
		rt.Replies = e.replySource(sel)
	}
	rt.AllFindings = e.allFindings
	if base != nil {
		var undone []string
		st, undone = base.restrict(rt.Graph, st)
		said = append(said, undone...)
	}
	var arena *graph.Arena
	if lend && !rt.Graph.HasRepositoryHooks() {
		// Shipped hooks are done with the files when they return; a
		// repository hook past its deadline may still be reading.
		arena = arenas.Get().(*graph.Arena)
		files.Lend(arena)
	}
	rep, err := rt.StatusIn(files, item, st, recompute)
	if err != nil {
		return nil, nil, err // the arena is left to the collector
	}
	if arena != nil {
		rep.Detach(arena.Owner())
		arena.Reset()
		arenas.Put(arena)
	}
	if base != nil {
		said = append(said, base.floor(rep)...)
	}
	return rep, said, nil
}

// arenas are what check's evaluations read their items' files into, one
// item after another: the files are most of what a check allocates, and
// memory used again is neither zeroed again nor collected.
var arenas = sync.Pool{New: func() any { return graph.NewArena() }}

// moving builds the runtime of a verb that moves item, adopting the
// repository first when it should be. Everything that can be checked is
// checked before anything is written: the item, its state, and the verb's
// own arguments (check, given the runtime), so that a verb that will fail
// adopts nothing.
//
// An item with no spec folder is a new one, on the default loop: the verb
// creates its folder if it writes (see graph.Runtime.Advance), as the
// original's verbs do, and the engine notes that it did.
func (e *Engine) moving(item string, sel Selector, check func(*graph.Runtime, *graph.State) error) (*graph.Runtime, error) {
	st, recorded, _, err := e.itemState(item, sel)
	if graph.NoSpecFolder(err) {
		// A new item: the verb will make its folder, and refuses here, before
		// adopting, when it could not.
		err = e.Checkout.Creatable(item)
	}
	if err != nil {
		return nil, err
	}
	rt, err := e.runtime(recorded, sel, true)
	if err != nil {
		return nil, err
	}
	if check != nil {
		if err := check(rt, st); err != nil {
			return nil, err
		}
	}
	if adopted, err := e.adopt(item, recorded, sel); err != nil || !adopted {
		return rt, err
	}
	// Adopted: the runtime reads the config it now has.
	return e.runtime(recorded, sel, true)
}

// isNew reports whether item has no spec folder yet.
func (e *Engine) isNew(item string) bool {
	_, err := e.Checkout.Item(item)
	return graph.NoSpecFolder(err)
}

// noteCreated notes that a verb created the spec folder of item, which
// was new before it.
func (e *Engine) noteCreated(item string, wasNew bool) {
	if wasNew && e.Checkout.IsDir(e.Checkout.ItemDir(item)) {
		e.note(fmt.Sprintf("created %s: %s is a new work item", e.Checkout.ItemDir(item), item))
	}
}

// Advance evaluates item's current node and acts on it. An item that has
// not entered the loop is evaluated at its start node without entering it,
// as the reference tool's CLI does: entering (and the start node's entry
// chain) is the ingress's job.
func (e *Engine) Advance(item string, sel Selector, ev *graph.Event) (*graph.Step, error) {
	rt, err := e.moving(item, sel, func(rt *graph.Runtime, st *graph.State) error { return rt.CheckPointer(item, st) })
	if err != nil {
		return nil, err
	}
	defer e.noteCreated(item, e.isNew(item))
	return rt.Advance(item, ev)
}

// Complete is a completion claim for item's current (or named) node.
func (e *Engine) Complete(item, node, actor string, sel Selector, ev *graph.Event) (*graph.Completion, error) {
	rt, err := e.moving(item, sel, func(rt *graph.Runtime, st *graph.State) error {
		if err := rt.CheckComplete(node); err != nil || node != "" {
			return err
		}
		return rt.CheckPointer(item, st)
	})
	if err != nil {
		return nil, err
	}
	defer e.noteCreated(item, e.isNew(item))
	return rt.Complete(item, node, actor, ev)
}

// Run advances item until it waits, blocks, escalates or completes.
func (e *Engine) Run(item string, maxNodes int, dryRun bool, sel Selector, ev *graph.Event) (*graph.RunReport, error) {
	var rt *graph.Runtime
	var err error
	if dryRun {
		rt, err = e.runtime(e.recordedLoop(item, sel), sel, false)
	} else {
		rt, err = e.moving(item, sel, func(rt *graph.Runtime, st *graph.State) error { return rt.CheckPointer(item, st) })
	}
	if err != nil {
		return nil, err
	}
	if dryRun {
		if e.isNew(item) {
			e.note(fmt.Sprintf("%s does not exist yet: %s is a new work item, and a run would create it", e.Checkout.ItemDir(item), item))
		}
		return rt.Run(item, maxNodes, dryRun, ev)
	}
	defer e.noteCreated(item, e.isNew(item))
	return rt.Run(item, maxNodes, dryRun, ev)
}

// Skip declares skips for item.
func (e *Engine) Skip(item string, tokens []string, reason, actor string, sel Selector) (*graph.SkipDeclaration, error) {
	rt, err := e.moving(item, sel, func(rt *graph.Runtime, st *graph.State) error {
		if err := graph.CheckSkips(tokens, reason); err != nil {
			return err
		}
		return rt.CheckPointer(item, st)
	})
	if err != nil {
		return nil, err
	}
	defer e.noteCreated(item, e.isNew(item))
	return rt.DeclareSkips(item, tokens, reason, actor)
}

// Force moves item's pointer to node.
func (e *Engine) Force(item, to, reason, actor string, sel Selector) (*graph.Forcing, error) {
	rt, err := e.moving(item, sel, func(rt *graph.Runtime, _ *graph.State) error { return rt.CheckForce(to, reason) })
	if err != nil {
		return nil, err
	}
	defer e.noteCreated(item, e.isNew(item))
	return rt.Force(item, to, reason, actor)
}
