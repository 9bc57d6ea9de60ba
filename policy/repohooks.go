package policy

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/starlark"
)

// A repository's hooks are loaded once per process however many items are
// checked: the modules execute once per (repository, declaration), and each
// loop is extended once per (loop, repository, declaration). Editing a hook
// module therefore takes effect in the next process.
var (
	hookTables   sync.Map // repoKey -> *loaded[hookTable]
	extendedLoop sync.Map // loopKey -> *loaded[*graph.Graph]
)

type loaded[T any] struct {
	once  sync.Once
	value T
	err   error
}

func cached[T any](m *sync.Map, key string, build func() (T, error)) (T, error) {
	v, _ := m.LoadOrStore(key, &loaded[T]{})
	l := v.(*loaded[T])
	l.once.Do(func() {
		l.value, l.err = build()
		if errors.Is(l.err, graph.ErrBudgetSpent) {
			// One evaluation's budget ran out as the modules loaded: that
			// is no answer about the modules for the next engine.
			m.CompareAndDelete(key, l)
		}
	})
	return l.value, l.err
}

// HookBudgetSpent reports whether the rule time this engine's repository
// hooks share ran out (routing.graph.hookBudget), and how much it was: a
// verb that ran them answers 1 then, whatever their verdicts, since which
// hooks were stopped or not run depends on timing.
func (e *Engine) HookBudgetSpent() (time.Duration, bool) {
	return e.budget.Total(), e.budget.Out()
}

// Declaration is the repository's graph.hooks, read without executing
// anything.
func (e *Engine) Declaration() (Declaration, error) { return ReadDeclaration(e.Harness) }

// Graph is the shipped loop name as this repository walks it: with its own
// hooks appended, unless this machine refuses them.
func (e *Engine) Graph(name string) (*graph.Graph, error) {
	g, err := Loop(name)
	if err != nil {
		return nil, err
	}
	return e.extend(g, false)
}

// extend returns the shipped loop g with this repository's hooks applied,
// loading them on first use. With routing.graph.repoHooks false nothing is
// executed and g is returned as shipped; the refusal is said once. emit is
// false for pure evaluations, which write no event.
func (e *Engine) extend(g *graph.Graph, emit bool) (*graph.Graph, error) {
	decl, err := e.Declaration()
	if err != nil || decl.Empty() {
		return g, err
	}
	if !e.CLI.RepoHooks() {
		e.refuse(decl, emit)
		return g, nil
	}
	if err := checkNodes(decl); err != nil {
		return nil, err
	}
	// The same declaration reads other modules from another revision.
	repoKey := e.Root + "\x00" + decl.Digest()
	if e.rules != nil {
		repoKey += "\x00" + e.rules.rev.Commit()
	}
	loaded, err := cachedUnless(e.reloadHooks, &hookTables, repoKey, func() (hookTable, error) {
		opts := e.starlarkOptions()
		var read *readLog
		if e.rules != nil {
			if err := e.hookPathOutside(decl); err != nil {
				return hookTable{}, err
			}
			read = &readLog{Sources: e.rules.rev}
			opts.Rules, opts.RulesName = read, e.rules.rev.Name()
		}
		table, err := starlark.Load(e.modules(decl), opts)
		if err == nil && emit {
			e.emit("graph.repo_hooks_loaded", "info", map[string]any{"repo": e.Root, "modules": len(decl.Modules), "attachments": len(decl.Attach)})
		}
		return hookTable{table: table, read: read.files()}, err
	})
	if err != nil {
		return nil, err
	}
	if e.rules != nil {
		e.rules.used(loaded.read)
	}
	return cachedUnless(e.reloadHooks, &extendedLoop, g.Name+"\x00"+repoKey, func() (*graph.Graph, error) {
		// Every loop refuses a hook nobody registered, its node in it or
		// not: a typo at a node of another loop fails loudly here too.
		if err := checkRegistered(decl, loaded.table); err != nil {
			return nil, err
		}
		return graph.Apply(g, loaded.table, e.attachmentsIn(decl, g))
	})
}

// cachedUnless is cached, which an engine that reloads its hooks passes
// by: a long-running caller sees a checkout's modules as they are now,
// mended or switched to another branch's.
func cachedUnless[T any](reload bool, m *sync.Map, key string, build func() (T, error)) (T, error) {
	if reload {
		return build()
	}
	return cached(m, key, build)
}

// hookTable is a repository's loaded hooks, and the files of a revision
// they were read from (none when they come from the checkout).
type hookTable struct {
	table map[string]graph.Hook
	read  []string
}

func (e *Engine) refuse(decl Declaration, emit bool) {
	e.mu.Lock()
	said := e.refused
	e.refused = true
	e.mu.Unlock()
	if said {
		return
	}
	msg := fmt.Sprintf("%s declares %d hook module(s) and %d attachment(s); this machine refuses repository hooks (routing.graph.repoHooks is false), so none was executed and none will run", e.Root, len(decl.Modules), len(decl.Attach))
	e.note(msg)
	e.log.Warn(msg)
	if emit {
		e.emit("graph.repo_hooks_refused", "warning", map[string]any{"repo": e.Root, "modules": len(decl.Modules), "attachments": len(decl.Attach)})
	}
}

// hookPathOutside refuses, when the rules come from a revision, a hook
// path directory inside the checkout: a module: found there would be the
// change's own file, read from the checkout under review.
func (e *Engine) hookPathOutside(d Declaration) error {
	dotted := slices.IndexFunc(d.Modules, func(m ModuleRef) bool { return m.Module != "" })
	if dotted < 0 {
		return nil
	}
	for _, dir := range e.CLI.HookPath() {
		abs, err := filepath.Abs(dir)
		if err != nil {
			continue
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		if rel, err := filepath.Rel(e.Root, abs); err == nil && (rel == "." || filepath.IsLocal(rel)) {
			m := d.Modules[dotted]
			return &graph.ConfigError{File: d.File, Line: m.Line, Key: "graph.hooks.modules",
				Msg: fmt.Sprintf("module %s: the hook path directory %s is inside the checkout under review, so its modules would be the change's own, not %s's; keep the hook path outside the repository", m.Module, abs, e.rules.rev.Name())}
		}
	}
	return nil
}

func (e *Engine) modules(d Declaration) []starlark.Module {
	out := make([]starlark.Module, len(d.Modules))
	for i, m := range d.Modules {
		out[i] = e.module(d, m)
	}
	return out
}

func (e *Engine) module(d Declaration, m ModuleRef) starlark.Module {
	return starlark.Module{Path: m.Path, Dotted: m.Module, File: d.File, Line: m.Line}
}

// attachmentsIn are the attachments of d whose node g has: an attachment
// applies in every shipped loop that has its node (a pull request's loop
// has no design node, the ad-hoc loop no implementation), and one whose
// node no loop has is refused by checkNodes before any loop is extended.
func (e *Engine) attachmentsIn(d Declaration, g *graph.Graph) []graph.Attachment {
	var out []graph.Attachment
	for _, a := range d.Attach {
		if g.Index(a.Node) >= 0 {
			out = append(out, e.attachment(d, a))
		}
	}
	return out
}

func (e *Engine) attachment(d Declaration, a AttachRef) graph.Attachment {
	return graph.Attachment{Hook: a.Hook, Node: a.Node, Boundary: graph.Boundary(a.Boundary), Params: a.With, File: d.File, Line: a.Line}
}

// checkNodes refuses an attachment to a node no shipped loop has: skipped
// by every loop, it would never run, and its author would not know.
func checkNodes(d Declaration) error {
	loops, err := shippedNodes()
	if err != nil {
		return err
	}
	for _, a := range d.Attach {
		if len(loopsWith(loops, a.Node)) == 0 {
			return unknownNode(&graph.ConfigError{File: d.File, Line: a.Line, Key: HooksKey + ".attach.node"}, a.Hook, a.Node, loops)
		}
	}
	return nil
}

// checkRegistered refuses an attachment naming a hook no module of table
// registered.
func checkRegistered(d Declaration, table map[string]graph.Hook) error {
	for _, a := range d.Attach {
		if _, ok := table[a.Hook]; !ok {
			return &graph.ConfigError{File: d.File, Line: a.Line, Key: HooksKey + ".attach.hook", Msg: unregistered(a, slices.Collect(maps.Keys(table)))}
		}
	}
	return nil
}

func (e *Engine) starlarkOptions() starlark.Options {
	limits := starlark.DefaultLimits
	limits.Steps = e.CLI.HookStepBudget()
	limits.Deadline = e.CLI.HookDeadline()
	return starlark.Options{Repo: e.Root, HookPath: e.CLI.HookPath(), Limits: limits, Log: e.log, Budget: e.budget}
}

// loadOptions are the options a verb loads the modules with; a check
// loads them the same way, reading from the same place.
func (e *Engine) loadOptions() starlark.Options {
	opts := e.starlarkOptions()
	if e.rules != nil {
		opts.Rules, opts.RulesName = e.rules.rev, e.rules.rev.Name()
	}
	return opts
}
