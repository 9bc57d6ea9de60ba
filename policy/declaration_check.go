package policy

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/graphs"
	"github.com/the-loop/the-loop/starlark"
)

// DeclarationReport is what a check of a repository's graph.hooks found:
// each module and attachment with its verdict, then the warnings (the
// declaration works, but perhaps not as its author thinks) and the errors
// (it does not work: every verb that loads it would fail). Entries are in
// declaration order; warnings and errors in the order of the lines they
// are at.
type DeclarationReport struct {
	// File is the harness config the declaration is in, repository-relative.
	File string `json:"file"`
	// Executed says whether the modules were loaded (hooks check) or only
	// found (config validate, graph hooks).
	Executed bool `json:"executed"`
	// RepoHooks is false when this machine refuses repository hooks.
	RepoHooks bool          `json:"repoHooks"`
	Modules   []ModuleCheck `json:"modules"`
	Attach    []AttachCheck `json:"attach"`
	Warnings  []Diagnostic  `json:"warnings"`
	Errors    []Diagnostic  `json:"errors"`
	faults    []*graph.ConfigError
}

// ModuleCheck is one declared module and what became of it.
type ModuleCheck struct {
	Path   string `json:"path,omitempty"`
	Module string `json:"module,omitempty"`
	Line   int    `json:"line"`
	// Found is the file the module resolved to: repository-relative for a
	// path, absolute for a module on the hook path; "" when not found.
	Found string `json:"found,omitempty"`
	// Hooks are the hooks it registered, in registration order, when it
	// was loaded.
	Hooks []string `json:"hooks,omitempty"`
	// Verdict is "ok", or "error" when a fault was found in it.
	Verdict string `json:"verdict"`
}

// Label names the module in messages.
func (m ModuleCheck) Label() string { return cmp.Or(m.Path, m.Module) }

// AttachCheck is one attachment and what became of it.
type AttachCheck struct {
	Hook     string         `json:"hook"`
	Node     string         `json:"node"`
	Boundary string         `json:"boundary"`
	With     map[string]any `json:"with,omitempty"`
	Line     int            `json:"line"`
	// Loops are the shipped loops that have the node: the ones the hook
	// runs in.
	Loops []string `json:"loops"`
	// Verdict is "ok", "warning", "error", or "unchecked" when a module
	// failed to load, so nobody can tell whether its hook exists.
	Verdict string `json:"verdict"`
}

// Diagnostic is one warning or error, where it is and what it says.
type Diagnostic struct {
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
	Key     string `json:"key,omitempty"`
	Message string `json:"message"`
	// Text is the whole diagnostic as one line: "file:line: key K: message".
	Text string `json:"text"`
}

func diagnostic(ce *graph.ConfigError) Diagnostic {
	return Diagnostic{File: ce.File, Line: ce.Line, Col: ce.Col, Key: ce.Key, Message: ce.Msg, Text: ce.Error()}
}

// warning is a diagnostic whose text is its place and message: a warning
// is about the attachment, which its place shows, more than about a key.
func warning(ce *graph.ConfigError) Diagnostic {
	d := diagnostic(ce)
	d.Text = (&graph.ConfigError{File: ce.File, Line: ce.Line, Col: ce.Col, Msg: ce.Msg}).Error()
	return d
}

// Err is every error the check found, joined, each a *graph.ConfigError;
// nil when there is none.
func (r DeclarationReport) Err() error {
	errs := make([]error, len(r.faults))
	for i, f := range r.faults {
		errs[i] = f
	}
	return errors.Join(errs...)
}

// Faults are the errors the check found, as *graph.ConfigError.
func (r DeclarationReport) Faults() []*graph.ConfigError { return slices.Clone(r.faults) }

// Verdicts of modules and attachments.
const (
	VerdictOK        = "ok"
	VerdictWarning   = "warning"
	VerdictError     = "error"
	VerdictUnchecked = "unchecked"
)

// ErrRepoHooksRefused is wrapped by CheckHooks on a machine that refuses
// repository hooks: checking them means executing them.
var ErrRepoHooksRefused = errors.New("this machine refuses repository hooks (routing.graph.repoHooks is false)")

// CheckDeclaration checks the repository's graph.hooks as far as it can
// without executing anything, and reports every fault it finds, not only
// the first: the declaration's shape, each module's file (in the
// repository, a regular file, not reached through a link leading out, a
// .star file; or on the operator's hook path), each attachment's node
// (which some shipped loop must have) and boundary. It also warns of an
// attachment that works but not as its author may think: at an entry,
// which check never evaluates; at a node the work-item loop lacks. The
// error is for a check that could not run; faults are in the report.
func (e *Engine) CheckDeclaration() (DeclarationReport, error) {
	c, err := e.newDeclCheck()
	if err != nil {
		return DeclarationReport{}, err
	}
	c.attachments()
	c.modules()
	c.survey(false)
	return c.finish(), nil
}

// CheckHooks is CheckDeclaration, then executes what it declares as a verb
// would, sandboxed: it loads each module (its top level runs), checks that
// every attachment names a hook a module registered and that every hook
// registered is attached somewhere, and applies each attachment to every
// shipped loop that has its node. On a machine that refuses repository
// hooks it executes nothing and returns an error wrapping
// ErrRepoHooksRefused.
func (e *Engine) CheckHooks() (DeclarationReport, error) {
	if !e.CLI.RepoHooks() {
		where := "its CLI config"
		if e.CLI.Path != "" {
			where = e.CLI.Path
		}
		return DeclarationReport{}, fmt.Errorf("%w in %s; checking them would execute them, so nothing was checked (`the-loop config validate` checks the declaration without executing anything)", ErrRepoHooksRefused, where)
	}
	c, err := e.newDeclCheck()
	if err != nil {
		return DeclarationReport{}, err
	}
	c.attachments()
	c.modules()
	c.survey(true)
	c.load()
	c.apply()
	return c.finish(), nil
}

// declCheck is one check of a declaration in progress.
type declCheck struct {
	e     *Engine
	p     parsed
	loops []loopNodes
	rep   DeclarationReport
	// tables are the hooks each module registered, when it loaded.
	tables []map[string]graph.Hook
	// table is every module's hooks, as a verb would load them; nil when
	// some module failed.
	table map[string]graph.Hook
	// warnings are kept apart from faults until finish sorts them.
	warnings []*graph.ConfigError
}

func (e *Engine) newDeclCheck() (*declCheck, error) {
	loops, err := shippedNodes()
	if err != nil {
		return nil, err
	}
	p := parseDeclaration(e.Harness)
	c := &declCheck{e: e, p: p, loops: loops, rep: DeclarationReport{File: p.File, RepoHooks: e.CLI.RepoHooks(), Modules: []ModuleCheck{}, Attach: []AttachCheck{}}}
	for _, f := range p.faults {
		c.fault(f)
	}
	for i, m := range p.Modules {
		v := VerdictOK
		if p.badModule[i] {
			v = VerdictError
		}
		c.rep.Modules = append(c.rep.Modules, ModuleCheck{Path: m.Path, Module: m.Module, Line: m.Line, Verdict: v})
	}
	for i, a := range p.Attach {
		v := VerdictOK
		if p.badAttach[i] {
			v = VerdictError
		}
		c.rep.Attach = append(c.rep.Attach, AttachCheck{Hook: a.Hook, Node: a.Node, Boundary: a.Boundary, With: a.With, Line: a.Line, Loops: []string{}, Verdict: v})
	}
	return c, nil
}

// fault records err, a *graph.ConfigError wherever it came from.
func (c *declCheck) fault(err error) {
	var ce *graph.ConfigError
	if !errors.As(err, &ce) {
		ce = &graph.ConfigError{File: c.p.File, Key: HooksKey, Msg: err.Error(), Err: err}
	}
	c.rep.faults = append(c.rep.faults, ce)
}

// keyed names, in a fault the loader located at a module's declaration,
// the entry it is: graph.hooks.modules[2].path, not graph.hooks.modules.
func (c *declCheck) keyed(err error) error {
	var ce *graph.ConfigError
	if !errors.As(err, &ce) || ce.File != c.p.File || ce.Col > 0 {
		return err
	}
	for i, m := range c.p.Modules {
		if m.Line == ce.Line && strings.Contains(ce.Msg, m.Label()) {
			member := "path"
			if m.Module != "" {
				member = "module"
			}
			ce.Key = fmt.Sprintf("%s.modules[%d].%s", HooksKey, c.p.moduleIndex[i], member)
			break
		}
	}
	return err
}

// at is a diagnostic at the member key of attachment i.
func (c *declCheck) at(i int, member, format string, args ...any) *graph.ConfigError {
	idx := c.p.attachIndex[i]
	tokens := []string{"graph", "hooks", "attach", strconv.Itoa(idx)}
	return &graph.ConfigError{File: c.p.File, Line: lineOf(c.e.Harness.node, tokens, member),
		Key: fmt.Sprintf("%s.attach[%d].%s", HooksKey, idx, member), Msg: fmt.Sprintf(format, args...)}
}

// verdictRank orders verdicts: an entry's is the worst it was given.
var verdictRank = map[string]int{VerdictOK: 0, VerdictWarning: 1, VerdictUnchecked: 2, VerdictError: 3}

func (c *declCheck) mark(verdict *string, v string) {
	if verdictRank[v] > verdictRank[*verdict] {
		*verdict = v
	}
}

// attachments checks each attachment's node and boundary.
func (c *declCheck) attachments() {
	for i, a := range c.p.Attach {
		ac := &c.rep.Attach[i]
		if a.Node == "" {
			continue // its fault is said
		}
		ac.Loops = loopsWith(c.loops, a.Node)
		switch {
		case len(ac.Loops) == 0:
			c.rep.faults = append(c.rep.faults, unknownNode(c.at(i, "node", ""), a.Hook, a.Node, c.loops))
			c.mark(&ac.Verdict, VerdictError)
			continue
		case !slices.Contains(ac.Loops, graph.WorkItemLoop):
			c.warnings = append(c.warnings, c.at(i, "node",
				"%s at %s: the work-item loop (%s) has no node %q, so this hook runs only in %s, never as a work item walks its own loop",
				a.Hook, a.Node, graph.WorkItemLoop, a.Node, strings.Join(ac.Loops, " and ")))
			c.mark(&ac.Verdict, VerdictWarning)
		}
		if a.Boundary == string(graph.Entry) {
			c.warnings = append(c.warnings, c.at(i, "boundary",
				"%s at %s entry: check never evaluates entry chains; it runs only when advance/run moves an item into %s, and a block there does not gate. Attach at exit to gate.",
				a.Hook, a.Node, a.Node))
			c.mark(&ac.Verdict, VerdictWarning)
		}
	}
}

// modules finds each module's file, executing nothing.
func (c *declCheck) modules() {
	var sound []int
	var mods []starlark.Module
	for i, m := range c.p.Modules {
		if !c.p.badModule[i] {
			sound = append(sound, i)
			mods = append(mods, c.e.module(c.p.Declaration, m))
		}
	}
	files, faults := starlark.Resolve(mods, c.e.loadOptions())
	for j, i := range sound {
		c.rep.Modules[i].Found = files[j]
		if files[j] == "" {
			c.rep.Modules[i].Verdict = VerdictError
		}
	}
	for _, f := range faults {
		c.fault(c.keyed(f))
	}
	if c.e.rules != nil {
		if err := c.e.hookPathOutside(c.p.Declaration); err != nil {
			c.fault(err)
		}
	}
}

// load executes each module that was found, alone, for the hooks it
// registers and every one that fails; then, when all loaded, all of them
// together, as a verb loads them.
func (c *declCheck) load() {
	c.tables = make([]map[string]graph.Hook, len(c.p.Modules))
	opts := c.e.loadOptions()
	all := true
	for i, m := range c.p.Modules {
		mc := &c.rep.Modules[i]
		if mc.Found == "" {
			all = false
			continue
		}
		c.rep.Executed = true
		table, err := starlark.Load([]starlark.Module{c.e.module(c.p.Declaration, m)}, opts)
		if err != nil {
			c.fault(err)
			mc.Verdict = VerdictError
			all = false
			continue
		}
		c.tables[i] = table
		mc.Hooks = registrationOrder(table)
	}
	if !all || len(c.p.Modules) == 0 {
		return
	}
	table, err := starlark.Load(c.e.modules(c.p.Declaration), opts)
	if err != nil {
		// What only loading them together finds: one name registered by two.
		c.fault(err)
		return
	}
	c.table = table
}

// registrationOrder is a module's hooks in the order it registered them.
func registrationOrder(table map[string]graph.Hook) []string {
	names := slices.Sorted(maps.Keys(table))
	slices.SortStableFunc(names, func(a, b string) int {
		pa, pb := hookPos(table[a]), hookPos(table[b])
		return cmp.Or(cmp.Compare(pa.line, pb.line), cmp.Compare(pa.col, pb.col))
	})
	return names
}

type position struct {
	file      string
	line, col int
}

func hookPos(h graph.Hook) position {
	if sh, ok := h.(*starlark.Hook); ok {
		p := sh.Position()
		return position{file: p.Filename(), line: int(p.Line), col: int(p.Col)}
	}
	return position{}
}

// apply checks each attachment's hook against what the modules registered,
// and applies it to every shipped loop that has its node.
func (c *declCheck) apply() {
	loaded := c.table != nil
	registered := map[string]graph.Hook{}
	for _, t := range c.tables {
		maps.Copy(registered, t)
	}
	attached := map[string]bool{}
	for i, a := range c.p.Attach {
		ac := &c.rep.Attach[i]
		attached[a.Hook] = true
		if c.p.badAttach[i] || len(ac.Loops) == 0 {
			continue
		}
		if !c.registered(i, slices.Collect(maps.Keys(registered)), loaded) {
			continue
		}
		table := c.table
		if !loaded {
			table = registered
		}
		att := c.e.attachment(c.p.Declaration, a)
		for _, name := range ac.Loops {
			g, err := Loop(name)
			if err == nil {
				_, err = graph.Apply(g, table, []graph.Attachment{att})
			}
			if err != nil {
				c.fault(err)
				c.mark(&ac.Verdict, VerdictError)
			}
		}
	}
	for i, t := range c.tables {
		for _, name := range registrationOrder(t) {
			if attached[name] {
				continue
			}
			p := hookPos(t[name])
			c.warnings = append(c.warnings, &graph.ConfigError{File: p.file, Line: p.line, Col: p.col, Key: HooksKey + ".attach",
				Msg: fmt.Sprintf("module %s registers %s, but no attachment in %s names it, so it never runs; attach it under graph.hooks.attach, or remove it", c.p.Modules[i].Label(), name, c.p.File)})
		}
	}
}

// registered checks that a module registers attachment i's hook, given
// the names registered; all says they are every name the modules can
// register. When a name is missing it is a fault if all, else the
// attachment is unchecked (a module that did not load, or registers in a
// way its source does not show, may be the one). It reports whether the
// hook is registered.
func (c *declCheck) registered(i int, names []string, all bool) bool {
	a, ac := c.p.Attach[i], &c.rep.Attach[i]
	if slices.Contains(names, a.Hook) {
		return true
	}
	if !all {
		c.mark(&ac.Verdict, VerdictUnchecked)
		return false
	}
	c.rep.faults = append(c.rep.faults, c.at(i, "hook", "%s", unregistered(a, names)))
	c.mark(&ac.Verdict, VerdictError)
	return false
}

// survey reads each module's syntax tree, executing nothing. Without
// execute (config validate) it checks each attachment against the hooks
// the modules' sources register, when their sources show every one;
// with it (hooks check, which then loads them) it reports the fields no
// ctx or predeclared module has.
func (c *declCheck) survey(execute bool) {
	var mods []starlark.Module
	var index []int
	for i, m := range c.p.Modules {
		if c.rep.Modules[i].Found != "" {
			mods = append(mods, c.e.module(c.p.Declaration, m))
			index = append(index, i)
		}
	}
	surveys := starlark.Survey(mods, c.e.loadOptions())
	if execute {
		for j, s := range surveys {
			for _, f := range s.Findings {
				c.rep.faults = append(c.rep.faults, f)
				c.rep.Modules[index[j]].Verdict = VerdictError
			}
		}
		return
	}
	all := len(mods) == len(c.p.Modules)
	var names []string
	for _, s := range surveys {
		all = all && s.Complete
		names = append(names, s.Hooks...)
	}
	if !all {
		return // only loading them can tell (hooks check)
	}
	for i := range c.p.Attach {
		if !c.p.badAttach[i] && len(c.rep.Attach[i].Loops) > 0 {
			c.registered(i, names, true)
		}
	}
}

// finish sorts the diagnostics, the harness config's by line first, and
// makes the report.
func (c *declCheck) finish() DeclarationReport {
	byPlace := func(a, b *graph.ConfigError) int {
		return cmp.Or(
			cmp.Compare(rankFile(a.File, c.p.File), rankFile(b.File, c.p.File)),
			strings.Compare(a.File, b.File),
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Col, b.Col))
	}
	// The same fault found twice (by the declaration and by a loop that
	// applied it) is said once.
	seen := map[string]bool{}
	c.rep.faults = slices.DeleteFunc(c.rep.faults, func(f *graph.ConfigError) bool {
		dup := seen[f.Error()]
		seen[f.Error()] = true
		return dup
	})
	slices.SortStableFunc(c.rep.faults, byPlace)
	slices.SortStableFunc(c.warnings, byPlace)
	c.rep.Errors = make([]Diagnostic, len(c.rep.faults))
	for i, f := range c.rep.faults {
		c.rep.Errors[i] = diagnostic(f)
	}
	c.rep.Warnings = make([]Diagnostic, len(c.warnings))
	for i, w := range c.warnings {
		c.rep.Warnings[i] = warning(w)
	}
	return c.rep
}

func rankFile(file, decl string) int {
	if file == decl {
		return 0
	}
	return 1
}

// unknownNode is the fault of an attachment to a node no shipped loop has,
// at ce's place, naming the nearest node and every loop's nodes.
func unknownNode(ce *graph.ConfigError, hook, node string, loops []loopNodes) *graph.ConfigError {
	var all []string
	for _, l := range loops {
		for _, n := range l.nodes {
			if !slices.Contains(all, n) {
				all = append(all, n)
			}
		}
	}
	msg := fmt.Sprintf("%s is attached to node %q, which no loop has", hook, node)
	if s := graph.Closest(node, all); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	ce.Msg = msg + " The shipped loops' nodes are: " + strings.Join(all, ", ") + " (`the-loop graph show --loop NAME` shows which loop has which)"
	return ce
}

// unregistered says that no module registers a's hook, and which of the
// registered names it may have meant.
func unregistered(a AttachRef, registered []string) string {
	names := slices.Sorted(slices.Values(registered))
	names = slices.Compact(names)
	msg := fmt.Sprintf("%s is attached at %s, but no declared module registers it", a.Hook, a.Node)
	if s := graph.Closest(a.Hook, names); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return msg + " Registered hooks: " + orNone(names)
}

// loopNodes is a shipped loop's node ids, in declaration order.
type loopNodes struct {
	loop  string
	nodes []string
}

// shippedNodes are the node ids of every shipped loop, in graphs.Names'
// order.
var shippedNodes = sync.OnceValues(func() ([]loopNodes, error) {
	out := make([]loopNodes, 0, len(graphs.Names))
	for _, name := range graphs.Names {
		g, err := Loop(name)
		if err != nil {
			return nil, err
		}
		out = append(out, loopNodes{loop: name, nodes: g.NodeIDs()})
	}
	return out, nil
})

// loopsWith names the loops that have node.
func loopsWith(loops []loopNodes, node string) []string {
	out := []string{}
	for _, l := range loops {
		if slices.Contains(l.nodes, node) {
			out = append(out, l.loop)
		}
	}
	return out
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
