package starlark

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.starlark.net/resolve"
	sl "go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"

	"github.com/the-loop/the-loop/graph"
)

// ModuleSurvey is what a declared module's syntax tree says without
// executing it.
type ModuleSurvey struct {
	// File names the module's file as Load's messages do; "" when it
	// could not be found or read.
	File string
	// Hooks are the names its top level registers with hook("x-…", impl),
	// in source order.
	Hooks []string
	// Complete says Hooks are all it can register: it loads no file, and
	// every use of hook is such a call with a literal name at its top level.
	Complete bool
	// Findings are the attribute names it reads that cannot exist: a field
	// of ctx, ctx.repo, or a predeclared module (re, json, math) that has
	// none of that name. Each is a *graph.ConfigError at the name.
	Findings []*graph.ConfigError
}

// Survey reads each declared module's file and walks its resolved syntax
// tree, executing nothing. A module that cannot be found, read, parsed or
// resolved has an empty survey: Load and Resolve say why.
//
// A finding is reported only where the resolver makes it certain: ctx is
// the first parameter of a function the module's top level passes to
// hook() by name (or a lambda passed there), read directly as ctx.name
// and never assigned in that function. A helper that receives ctx under
// another name, or a copy of ctx (c = ctx), is not followed: nothing
// proves what it holds.
func Survey(modules []Module, opts Options) []ModuleSurvey {
	out := make([]ModuleSurvey, len(modules))
	h, err := newHost(opts)
	if err != nil {
		return out
	}
	sources, _ := h.loader().resolveAll(modules, true)
	for i, src := range sources {
		if src == nil {
			continue
		}
		data, err := readSource(src)
		if err != nil {
			continue
		}
		out[i] = survey(src.name, data, h.env)
	}
	return out
}

func survey(name string, data []byte, env sl.StringDict) ModuleSurvey {
	s := ModuleSurvey{File: name}
	f, err := fileOptions().Parse(name, data, 0)
	if err != nil {
		return s
	}
	if err := resolve.File(f, env.Has, sl.Universe.Has); err != nil {
		return s
	}
	sv := &surveyor{env: env, defs: map[*resolve.Binding]*syntax.DefStmt{}}
	s.Complete = true
	for _, stmt := range f.Stmts {
		switch st := stmt.(type) {
		case *syntax.LoadStmt:
			s.Complete = false
		case *syntax.DefStmt:
			sv.defs[st.Name.Binding.(*resolve.Binding)] = st
		}
	}
	registrations := map[*syntax.CallExpr]bool{}
	for _, stmt := range f.Stmts {
		es, ok := stmt.(*syntax.ExprStmt)
		if !ok {
			continue
		}
		call, ok := es.X.(*syntax.CallExpr)
		if !ok || !isPredeclared(call.Fn, "hook") || len(call.Args) != 2 {
			continue
		}
		lit, ok := call.Args[0].(*syntax.Literal)
		if !ok || lit.Token != syntax.STRING {
			continue
		}
		registrations[call] = true
		s.Hooks = append(s.Hooks, lit.Value.(string))
		sv.impl(call.Args[1])
	}
	// Any other use of hook (in a function, under another name, with a
	// computed name) may register what the list does not show.
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CallExpr:
			if registrations[x] {
				for _, a := range x.Args {
					syntax.Walk(a, func(n syntax.Node) bool {
						if isPredeclared(n, "hook") {
							s.Complete = false
						}
						return true
					})
				}
				return false
			}
		case *syntax.Ident:
			if isPredeclared(x, "hook") {
				s.Complete = false
			}
		}
		return true
	})
	sv.modules(f)
	s.Findings = sv.findings
	return s
}

type surveyor struct {
	env      sl.StringDict
	defs     map[*resolve.Binding]*syntax.DefStmt
	seen     map[syntax.Node]bool
	findings []*graph.ConfigError
}

// isPredeclared reports whether e is the predeclared name (not a global
// or local that shadows it).
func isPredeclared(e syntax.Node, name string) bool {
	id, ok := e.(*syntax.Ident)
	if !ok || id.Name != name {
		return false
	}
	b, ok := id.Binding.(*resolve.Binding)
	return ok && b.Scope == resolve.Predeclared
}

// impl checks the hook function e names: a top-level def, or a lambda.
func (sv *surveyor) impl(e syntax.Expr) {
	var fn syntax.Node // the def or lambda, checked once however often registered
	var params []syntax.Expr
	var body syntax.Node
	switch x := e.(type) {
	case *syntax.Ident:
		b, ok := x.Binding.(*resolve.Binding)
		if !ok || b.Scope != resolve.Global {
			return
		}
		def, ok := sv.defs[b]
		if !ok {
			return
		}
		fn, params, body = def, def.Params, &syntax.File{Stmts: def.Body}
	case *syntax.LambdaExpr:
		fn, params, body = x, x.Params, x.Body
	default:
		return
	}
	if sv.seen == nil {
		sv.seen = map[syntax.Node]bool{}
	}
	if len(params) == 0 || sv.seen[fn] {
		return
	}
	sv.seen[fn] = true
	p, ok := params[0].(*syntax.Ident)
	if !ok {
		return // *args, or ctx = default: what it holds is not certain
	}
	ctx, ok := p.Binding.(*resolve.Binding)
	if !ok || assigns(body, ctx) {
		return
	}
	syntax.Walk(body, func(n syntax.Node) bool {
		dot, ok := n.(*syntax.DotExpr)
		if !ok {
			return true
		}
		switch x := dot.X.(type) {
		case *syntax.Ident:
			if x.Binding == ctx {
				sv.field(dot, p.Name, ctxAttrs)
			}
		case *syntax.DotExpr:
			if id, ok := x.X.(*syntax.Ident); ok && id.Binding == ctx && x.Name.Name == "repo" {
				sv.field(dot, p.Name+".repo", repoAttrs)
			}
		}
		return true
	})
}

// modules checks every read of a predeclared module's member.
func (sv *surveyor) modules(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		dot, ok := n.(*syntax.DotExpr)
		if !ok {
			return true
		}
		id, ok := dot.X.(*syntax.Ident)
		if !ok || !isPredeclared(id, id.Name) {
			return true
		}
		if m, ok := sv.env[id.Name].(*starlarkstruct.Module); ok {
			sv.field(dot, id.Name, slices.Sorted(maps.Keys(m.Members)))
		}
		return true
	})
}

// field reports dot when its name is not one of names (sorted).
func (sv *surveyor) field(dot *syntax.DotExpr, what string, names []string) {
	name := dot.Name.Name
	if _, ok := slices.BinarySearch(names, name); ok {
		return
	}
	msg := fmt.Sprintf("%s.%s: %s has no field %s", what, name, what, name)
	switch {
	case what == "re" && (reFlagNames[name] || len(name) == 1 && strings.Contains("IMSXAUL", name)):
		msg += hintMark + hintFlags
	default:
		if s := graph.Closest(name, names); s != "" {
			msg += fmt.Sprintf("; did you mean %s?", s)
		} else {
			msg += "; it has " + strings.Join(names, ", ")
		}
	}
	pos := dot.Name.NamePos
	sv.findings = append(sv.findings, &graph.ConfigError{File: pos.Filename(), Line: int(pos.Line), Col: int(pos.Col), Key: keyModules, Msg: msg})
}

// assigns reports whether body assigns b anywhere: then what ctx holds
// at a read is not certain.
func assigns(body syntax.Node, b *resolve.Binding) bool {
	found := false
	var target func(e syntax.Expr)
	target = func(e syntax.Expr) {
		switch x := e.(type) {
		case *syntax.Ident:
			if x.Binding == b {
				found = true
			}
		case *syntax.TupleExpr:
			for _, y := range x.List {
				target(y)
			}
		case *syntax.ListExpr:
			for _, y := range x.List {
				target(y)
			}
		case *syntax.ParenExpr:
			target(x.X)
		}
	}
	syntax.Walk(body, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.AssignStmt:
			target(x.LHS)
		case *syntax.ForStmt:
			target(x.Vars)
		case *syntax.ForClause:
			target(x.Vars)
		}
		return !found
	})
	return found
}
