package starlark

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"go.starlark.net/resolve"
	sl "go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/internal/lazyregexp"
	"github.com/the-loop/the-loop/repo"
)

// keyModules is the configuration key every Load error names.
const keyModules = "graph.hooks.modules"

// maxSource bounds a .star file's size.
const maxSource = 1 << 20

// maxLoadDepth bounds a chain of load()s: each file loading the next is a
// level of Go stack, and a chain of a hundred thousand tiny files would
// take the stack, not the step budget.
const maxLoadDepth = 64

// hookName is what may follow the x- prefix.
var hookName = lazyregexp.New(`^x-[A-Za-z0-9][A-Za-z0-9._-]*$`)

// dottedName is a module: name, a.b.c.
var dottedName = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

// IsModuleName reports whether s is a module: name Load accepts:
// identifiers joined by dots, found on the hook path as a/b.star.
func IsModuleName(s string) bool { return dottedName.MatchString(s) }

// fileOptions is the dialect: starlark-go's strict defaults (no while, no
// recursion, no reassigned globals, no if or for at the top level) plus
// set.
func fileOptions() *syntax.FileOptions { return &syntax.FileOptions{Set: true} }

// host is what one Load's hooks share: the repository, the limits, the log
// and the predeclared environment. It is immutable after Load.
type host struct {
	repo       *tree // ctx.repo, when a call is handed no checkout
	rules      *tree // where path modules are read: repo, or Options.Rules
	hookPath   []string
	limits     Limits
	log        *slog.Logger
	logGiven   bool
	env        sl.StringDict
	threadInit func(*sl.Thread) // tests set the assert reporter here
	// budget is what the modules' top levels are charged to (Options.Budget).
	budget *graph.Budget
}

func newHost(opts Options) (*host, error) {
	repo, err := openTree(opts.Repo, "the repository")
	if err != nil {
		return nil, err
	}
	h := &host{
		repo:     repo,
		rules:    repo,
		hookPath: opts.HookPath,
		limits:   opts.Limits.withDefaults(),
		log:      opts.Log,
		logGiven: opts.Log != nil,
		env:      predeclared(),
		budget:   opts.Budget,
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if opts.Rules != nil {
		h.rules = &tree{src: opts.Rules, what: cmp.Or(opts.RulesName, "the rules' revision")}
	}
	return h, nil
}

// source is one .star file to execute.
type source struct {
	name string // how positions and messages name it
	rel  string // cleaned, relative to root
	real string // its identity: device and inode, else its path
	root *tree  // where it is read and its load()s resolve
	dir  string // its directory, slash-separated, relative to root
}

type fileEntry struct {
	globals sl.StringDict
	err     error
	loading bool
}

type registration struct {
	module string
	pos    syntax.Position
	impl   sl.Callable
}

// registrar is the call state's view of a declared module loading: hook()
// writes into its loader's table.
type registrar struct {
	l      *loader
	module string
	lib    string // the load()ed file whose top level is executing, if any
}

type loader struct {
	*host
	declared map[string]Module // real path -> declaration
	files    map[string]*fileEntry
	stack    []*source
	regs     map[string]*registration
	order    []string
}

// Load executes each declared module once, in order, with the predeclared
// API, and returns the hooks they registered by name. Files the modules
// load() are executed once per Load and shared. Every failure is a
// *graph.ConfigError under the key graph.hooks.modules that names the
// module and the rule it broke; it is located at the declaration
// (Module.File and Line) unless Starlark reports a position, in which case
// it is located there.
//
// The returned hooks are safe for concurrent use. Load is safe to call
// concurrently; it keeps no state between calls.
func Load(modules []Module, opts Options) (table map[string]graph.Hook, err error) {
	defer func() {
		if p := recover(); p != nil {
			table, err = nil, &graph.ConfigError{Key: keyModules, Msg: fmt.Sprintf("internal error loading repository hooks: %v", p)}
		}
	}()
	if len(modules) == 0 {
		return map[string]graph.Hook{}, nil
	}
	h, err := newHost(opts)
	if err != nil {
		return nil, &graph.ConfigError{File: modules[0].File, Line: modules[0].Line, Key: keyModules, Msg: "cannot load repository hooks", Err: err}
	}
	return h.load(modules)
}

func (h *host) load(modules []Module) (map[string]graph.Hook, error) {
	l := h.loader()
	sources, faults := l.resolveAll(modules, false)
	if len(faults) > 0 {
		return nil, faults[0]
	}
	for i, m := range modules {
		if err := l.execModule(m, sources[i]); err != nil {
			return nil, err
		}
	}
	table := make(map[string]graph.Hook, len(l.regs))
	for _, name := range l.order {
		r := l.regs[name]
		if height(r.impl) > maxNesting {
			return nil, declError(modules[0], "hook %s holds a value nested more than %d deep, which freezing it would follow down the stack", name, maxNesting)
		}
		r.impl.Freeze()
		table[name] = &Hook{name: name, module: r.module, pos: r.pos, impl: r.impl, host: h}
	}
	return table, nil
}

func (h *host) loader() *loader {
	return &loader{host: h, declared: map[string]Module{}, files: map[string]*fileEntry{}, regs: map[string]*registration{}}
}

// resolveAll finds every module's file. It stops at the first failure
// unless all is set, when it goes on and returns every one.
func (l *loader) resolveAll(modules []Module, all bool) ([]*source, []error) {
	sources := make([]*source, len(modules))
	var faults []error
	for i, m := range modules {
		src, err := l.resolveModule(m)
		if err == nil {
			if prev, dup := l.declared[src.real]; dup {
				err = declError(m, "module %s is declared twice (also at %s)", m.Label(), where(prev))
			}
		}
		if err != nil {
			faults = append(faults, err)
			if !all {
				break
			}
			continue
		}
		l.declared[src.real] = m
		sources[i] = src
	}
	return sources, faults
}

func where(m Module) string {
	if m.File == "" {
		return "an earlier entry"
	}
	if m.Line > 0 {
		return fmt.Sprintf("%s:%d", m.File, m.Line)
	}
	return m.File
}

func declError(m Module, format string, args ...any) *graph.ConfigError {
	return &graph.ConfigError{File: m.File, Line: m.Line, Key: keyModules, Msg: fmt.Sprintf(format, args...)}
}

// checkExt refuses a file that is not .star, with the advice a .py file
// deserves.
//
// Departure from the original (docs/compatibility.md#repository-hooks-are-starlark-not-python): a .py hook is refused, not imported into the process.
func checkExt(name string) error {
	switch path.Ext(name) {
	case ".star":
		return nil
	case ".py":
		return fmt.Errorf("%q is Python; repository hooks are Starlark, so port it to .star (Starlark reads like Python; see docs/extending.md)", name)
	}
	return fmt.Errorf("%q is not a .star file", name)
}

func (l *loader) resolveModule(m Module) (*source, error) {
	switch {
	case m.Path != "" && m.Dotted != "":
		return nil, declError(m, "a module entry declares both path (%q) and module (%q); want one", m.Path, m.Dotted)
	case m.Path == "" && m.Dotted == "":
		return nil, declError(m, "a module entry declares neither path nor module")
	case m.Path != "":
		src, err := l.resolveIn(l.rules, m.Path, false)
		if err != nil {
			return nil, declError(m, "module %s: %v", m.Label(), err)
		}
		return src, nil
	}
	if !IsModuleName(m.Dotted) {
		return nil, declError(m, "module %q: want a dotted name of identifiers, like acme.compliance", m.Dotted)
	}
	rel := strings.ReplaceAll(m.Dotted, ".", "/") + ".star"
	var searched []string
	for _, dir := range l.hookPath {
		if dir == "" {
			continue
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			continue
		}
		searched = append(searched, abs)
		c, err := openTree(abs, "the hook path directory "+abs)
		if err != nil {
			continue // a missing directory holds nothing
		}
		if _, exists, err := c.stat(rel); err == nil && !exists {
			continue
		}
		src, err := l.resolveIn(c, rel, true)
		if err != nil {
			return nil, declError(m, "module %s: %v", m.Label(), err)
		}
		return src, nil
	}
	if len(searched) == 0 {
		return nil, declError(m, "module %s: the hook path is empty, so %s cannot be found (set routing.graph.hookPath or THE_LOOP_HOOK_PATH)", m.Label(), rel)
	}
	return nil, declError(m, "module %s: %s is not on the hook path; searched: %s", m.Label(), rel, strings.Join(searched, ", "))
}

// resolveIn resolves rel inside t as a .star file to execute. Files on the
// hook path are named by their absolute path, repository files by their
// repo-relative one.
func (l *loader) resolveIn(t *tree, rel string, absName bool) (*source, error) {
	if strings.HasPrefix(rel, "/") || filepath.IsAbs(rel) {
		return nil, fmt.Errorf("%q is an absolute path; a module path is relative to %s", rel, t.what)
	}
	if err := checkExt(rel); err != nil {
		return nil, err
	}
	clean, err := t.clean(rel)
	if err != nil {
		return nil, err
	}
	fi, exists, err := t.stat(clean)
	switch {
	case errors.Is(err, repo.ErrOutside):
		return nil, fmt.Errorf("%q resolves outside %s through a symbolic link", rel, t.what)
	case errors.Is(err, repo.ErrLink):
		return nil, fmt.Errorf("%q is a symbolic link in %s, which is not followed; want a regular file", rel, t.what)
	case err != nil:
		return nil, fmt.Errorf("cannot read %s: %w", clean, err)
	case !exists:
		return nil, fmt.Errorf("cannot read %s: no such file in %s", clean, t.what)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("cannot read %s: not a regular file", clean)
	}
	// Its identity, so that a file reached by two paths runs once.
	real := t.src.Abs(clean)
	if dev, ino, ok := repo.FileID(fi); ok {
		real = fmt.Sprintf("file %d:%d", dev, ino)
	}
	name := clean
	if absName {
		name = t.src.Abs(clean)
	}
	return &source{name: name, rel: clean, real: real, root: t, dir: path.Dir(clean)}, nil
}

func readSource(src *source) ([]byte, error) {
	data, err := src.root.src.ReadFile(src.rel, maxSource)
	var tooLarge *repo.TooLargeError
	switch {
	case errors.As(err, &tooLarge):
		return nil, fmt.Errorf("%s is over %s; a hook module is limited to that", src.name, formatBytes(maxSource))
	case err != nil:
		return nil, fmt.Errorf("cannot read %s: %w", src.name, repo.Cause(err))
	}
	return data, nil
}

// execModule executes a declared module's top level under the limits and
// checks what it registered.
func (l *loader) execModule(m Module, src *source) error {
	data, err := readSource(src)
	if err != nil {
		return declError(m, "module %s: %v", m.Label(), err)
	}
	st := newCallState("module "+src.name, l.limits, l.log)
	st.registrar = &registrar{l: l, module: src.name}
	st.budget = l.budget
	thread := st.newThread("module "+src.name, l.threadInit)
	thread.Load = l.loadFn
	before := len(l.order)
	// Once per process, and with no other: its memory verdict is its own.
	_, err, abandoned := st.run(func() (sl.Value, error) {
		_, err := l.exec(thread, src, data)
		return nil, err
	}, exclusive)
	if abandoned || (err != nil && st.trippedLimit() != limitNone) {
		ce := located(m, err)
		ce.Msg = st.exceeded()
		if !st.notRun {
			ce.Msg += " as it loaded"
		}
		if st.trippedLimit() == limitBudget {
			ce.Err = graph.ErrBudgetSpent
		}
		if pos, ok := deepestPos(err); ok {
			ce.Msg += fmt.Sprintf(" (stopped at %s)", pos)
		}
		return ce
	}
	if err != nil {
		ce := located(m, err)
		ce.Err = err
		if ce.Col == 0 {
			// No position in a Starlark file: the declaration is where.
			ce.Msg = fmt.Sprintf("module %s failed to load: %s", src.name, quote(err))
			return ce
		}
		// At the fault itself, as a compiler would say it, and where the
		// module came from.
		ce.Msg = unplaced(err)
		if m.File != "" {
			ce.Msg += fmt.Sprintf(" (loading module %s, declared at %s:%d)", src.name, m.File, m.Line)
		} else {
			ce.Msg += fmt.Sprintf(" (loading module %s)", src.name)
		}
		return ce
	}
	if len(l.order) == before {
		return declError(m, "module %s registers no hook; a module that registers no hook is a declaration that silently does nothing (call hook(\"x-name\", impl) at its top level)", src.name)
	}
	return nil
}

// located is a ConfigError at the deepest position err carries, else at
// the declaration.
func located(m Module, err error) *graph.ConfigError {
	ce := &graph.ConfigError{File: m.File, Line: m.Line, Key: keyModules}
	if pos, ok := deepestPos(err); ok {
		ce.File, ce.Line, ce.Col = pos.Filename(), int(pos.Line), int(pos.Col)
	}
	return ce
}

// unplaced is a Starlark load error's message without the position
// located put on its ConfigError.
func unplaced(err error) string {
	// The deepest error that has a position, as located chose it.
	text := err.Error()
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch x := e.(type) {
		case *sl.EvalError:
			if _, ok := evalPos(x); ok {
				_, text = splitEval(x)
			}
		case syntax.Error:
			text = x.Msg
		case resolve.ErrorList:
			text = x[0].Msg
		case resolve.Error:
			text = x.Msg
		}
	}
	return oneLine(text)
}

// oneLine keeps a message on one line: a hook's own text (fail("a\nb"))
// must not break the table it is shown in.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", " / ")
}

// exec parses, rewrites, resolves and executes one file on thread and
// returns its frozen globals.
func (l *loader) exec(thread *sl.Thread, src *source, data []byte) (sl.StringDict, error) {
	f, err := fileOptions().Parse(src.name, data, 0)
	if err != nil {
		return nil, withHint(err, data)
	}
	if err := rewrite(f); err != nil {
		return nil, err
	}
	prog, err := sl.FileProgram(f, l.env.Has)
	if err != nil {
		return nil, withHint(err, data)
	}
	l.stack = append(l.stack, src)
	defer func() { l.stack = l.stack[:len(l.stack)-1] }()
	globals, err := prog.Init(thread, l.env)
	if err != nil {
		return nil, withHint(err, data)
	}
	for name, v := range globals {
		if height(v) > maxNesting {
			return nil, fmt.Errorf("%s: the global %s nests more than %d deep, which freezing it would follow down the stack; build it inside the hook that needs it", src.name, name, maxNesting)
		}
	}
	globals.Freeze()
	return globals, nil
}

// loadError is a load() that failed; it names the file and keeps the cause
// reachable, so its position is the one reported.
type loadError struct {
	name string
	err  error
}

// maxCause bounds the text of a failed load's cause.
const maxCause = 1 << 10

// Error is the first cause, once and cut to maxCause: every file of a
// failed chain of load()s reports the same one, and were each to repeat
// the message of the file it loaded, the text would grow with the square
// of the chain's length.
func (e *loadError) Error() string {
	first := e
	for err := e.err; err != nil; err = errors.Unwrap(err) {
		if le, ok := err.(*loadError); ok {
			first = le
		}
	}
	return graph.Cut(quote(first.err), maxCause)
}

func (e *loadError) Unwrap() error { return e.err }

// loadFn implements load() for the thread of a declared module or a rule
// test file: the file
// is resolved against the loading file, executed once per Load, frozen,
// and shared with every later load of it.
func (l *loader) loadFn(thread *sl.Thread, module string) (sl.StringDict, error) {
	from := l.stack[len(l.stack)-1]
	src, err := l.resolveLoad(from, module)
	if err != nil {
		return nil, err
	}
	if len(l.stack) >= maxLoadDepth {
		return nil, fmt.Errorf("load() chains more than %d files deep; a module loads what it needs more directly", maxLoadDepth)
	}
	if e, ok := l.files[src.real]; ok {
		if e.loading {
			return nil, fmt.Errorf("load cycle: %s", l.cycle(src))
		}
		return e.globals, e.err
	}
	if m, ok := l.declared[src.real]; ok {
		return nil, fmt.Errorf("%s is a declared module (%s) and cannot also be load()ed; move what both need into a library", src.name, where(m))
	}
	data, err := readSource(src)
	if err != nil {
		return nil, err
	}
	st, err := stateOf(thread)
	if err != nil {
		return nil, err
	}
	e := &fileEntry{loading: true}
	l.files[src.real] = e
	if reg := st.registrar; reg != nil {
		// While a declared module loads, hook() knows it is in a library.
		lib := reg.lib
		reg.lib = src.name
		defer func() { reg.lib = lib }()
	}
	e.globals, e.err = l.exec(thread, src, data)
	e.loading = false
	if e.err != nil {
		e.globals, e.err = nil, &loadError{name: src.name, err: e.err}
	}
	return e.globals, e.err
}

func (l *loader) cycle(to *source) string {
	var names []string
	for i, s := range l.stack {
		if s.real == to.real {
			for _, t := range l.stack[i:] {
				names = append(names, t.name)
			}
			break
		}
	}
	return strings.Join(append(names, to.name), " loads ")
}

// resolveLoad resolves a load() argument: "//a/b.star" from the root of the
// loading file's tree (the repository, or its hook path directory),
// anything else relative to the loading file's directory.
func (l *loader) resolveLoad(from *source, module string) (*source, error) {
	var rel string
	switch {
	case strings.HasPrefix(module, "//"):
		rel = strings.TrimPrefix(module, "//")
	case strings.HasPrefix(module, "/") || filepath.IsAbs(module):
		return nil, fmt.Errorf("%q is an absolute path; load a file relative to this one, or from the root as //path/to/file.star", module)
	case strings.HasPrefix(module, "@") || strings.Contains(module, ":"):
		return nil, fmt.Errorf("%q: labels are not supported; load a file by its path", module)
	default:
		rel = path.Join(from.dir, module)
	}
	return l.resolveIn(from.root, rel, from.root != l.rules)
}

// registrationAt is where hook() was called from.
func registrationAt(thread *sl.Thread) syntax.Position {
	if thread.CallStackDepth() > 1 {
		return thread.CallFrame(1).Pos
	}
	return syntax.Position{}
}

// hookBuiltin is hook(name, impl).
func hookBuiltin(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var name string
	var impl sl.Value
	if err := sl.UnpackArgs(b.Name(), args, kwargs, "name", &name, "impl", &impl); err != nil {
		return nil, err
	}
	st, err := stateOf(thread)
	if err != nil {
		return nil, err
	}
	reg := st.registrar
	switch {
	case reg == nil:
		return nil, fmt.Errorf("hook: %q: hooks are registered by a module's top level as it loads, not by a running hook", name)
	case reg.lib != "":
		return nil, fmt.Errorf("hook: %q is registered by the top level of %s, a file executed by load(); only a declared module registers hooks (a loaded file runs once and is shared), so export a function that calls hook() and call it from the module", name, reg.lib)
	case !graph.IsExtension(name):
		return nil, fmt.Errorf("hook: module %s registers %q: a repository hook must be named %s<something>; the unprefixed namespace is the-loop's own", reg.module, name, graph.ExtensionPrefix)
	case !hookName.MatchString(name):
		return nil, fmt.Errorf("hook: module %s registers %q: want x- followed by letters, digits, '.', '_' or '-'", reg.module, name)
	}
	fn, ok := impl.(sl.Callable)
	if !ok {
		return nil, fmt.Errorf("hook: %q: impl must be callable (a function taking ctx), got %s", name, impl.Type())
	}
	pos := registrationAt(thread)
	if prev, dup := reg.l.regs[name]; dup {
		if prev.module == reg.module {
			return nil, fmt.Errorf("hook: %q is registered twice by module %s (at %s and %s)", name, reg.module, prev.pos, pos)
		}
		return nil, fmt.Errorf("hook: %q is registered by both module %s (at %s) and module %s (at %s)", name, prev.module, prev.pos, reg.module, pos)
	}
	reg.l.regs[name] = &registration{module: reg.module, pos: pos, impl: fn}
	reg.l.order = append(reg.l.order, name)
	return sl.None, nil
}

// deepestPos is the innermost Starlark position err carries: the frame
// that failed, or the syntax or resolve error, following causes through
// load()s.
func deepestPos(err error) (syntax.Position, bool) {
	var pos syntax.Position
	found := false
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch x := e.(type) {
		case *sl.EvalError:
			if p, ok := evalPos(x); ok {
				pos, found = p, true
			}
		case syntax.Error:
			pos, found = x.Pos, true
		case resolve.ErrorList:
			pos, found = x[0].Pos, true
		case resolve.Error:
			pos, found = x.Pos, true
		}
	}
	return pos, found
}

// evalPos is the position of the innermost frame of e not in a builtin.
func evalPos(e *sl.EvalError) (syntax.Position, bool) {
	for i := len(e.CallStack) - 1; i >= 0; i-- {
		if p := e.CallStack[i].Pos; p.IsValid() && p.Filename() != "<builtin>" {
			return p, true
		}
	}
	return syntax.Position{}, false
}

// quote renders a Starlark error as file:line:col: msg on one line, so it
// reads well in a table of messages; see describeEval.
func quote(err error) string {
	var ee *sl.EvalError
	if errors.As(err, &ee) {
		return describeEval(ee)
	}
	return err.Error()
}

// describeEval renders a Starlark error on one line: the innermost
// position and the message, then, when functions led there, the way back
// ("in helper, called from rules.star:2:18 in _check"). The full
// backtrace goes to the debug log.
func describeEval(ee *sl.EvalError) string {
	pos, text := splitEval(ee)
	if pos == "" {
		return text
	}
	return pos + ": " + text
}

// splitEval is describeEval in two: the innermost position ("" when there
// is none) and the rest.
func splitEval(ee *sl.EvalError) (pos, text string) {
	frames := slices.DeleteFunc(slices.Clone(ee.CallStack), func(f sl.CallFrame) bool {
		return !f.Pos.IsValid() || f.Pos.Filename() == "<builtin>"
	})
	if len(frames) == 0 {
		return "", oneLine(ee.Msg)
	}
	inner := frames[len(frames)-1]
	var b strings.Builder
	b.WriteString(oneLine(ee.Msg))
	if len(frames) > 1 {
		// The way there, callers first, at most a few of them: the full
		// backtrace is in the debug log.
		const shown = 4
		fmt.Fprintf(&b, " (in %s", inner.Name)
		for i := len(frames) - 2; i >= 0; i-- {
			if n := len(frames) - 2 - i; n == shown {
				fmt.Fprintf(&b, ", and %d more", i+1)
				break
			}
			fmt.Fprintf(&b, ", called from %s in %s", frames[i].Pos, frames[i].Name)
		}
		b.WriteString(")")
	}
	return inner.Pos.String(), b.String()
}
