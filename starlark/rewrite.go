package starlark

import (
	"fmt"
	"math/bits"
	"strconv"

	"go.starlark.net/syntax"
)

// The names the rewritten syntax tree calls. None is a valid Starlark
// identifier, so no module can name, shadow or call one itself.
const (
	nameAdd      = "$add"
	nameMul      = "$mul"
	nameMod      = "$mod"
	nameCount    = "$count"
	namePlus     = "$plus"
	nameAttr     = "$attr"
	nameTuple    = "$tuple"
	nameIn       = "$in"
	nameSearched = "$searched"
	nameFloorDiv = "$//"
)

// compareNames are the names comparisons are rewritten to: $== and so on.
var compareNames = map[syntax.Token]string{
	syntax.EQL: "$==", syntax.NEQ: "$!=", syntax.LT: "$<", syntax.LE: "$<=", syntax.GT: "$>", syntax.GE: "$>=",
}

// rewrite routes the operations that can allocate without bound through
// the guards in guards.go, before the file is resolved and compiled:
//
//	x + y        -> $add(x, y)
//	x * y        -> $mul(x, y)               (but not 1024 * 1024)
//	x % y        -> $mod(x, y)
//	x *= y       -> x *= $count(y)
//	x += y       -> x += $plus(y)
//	x %= y       -> x = $mod(x, y)          (x a name)
//	x.replace    -> $attr(x, "replace")     (and the other guardedAttrs)
//	(a, b)       -> $tuple(a, b)            (see nesting.go)
//	x in y       -> $in(x, y)
//	x not in y   -> not $in(x, y)
//	x == y       -> $==(x, y)               (and !=, <, <=, >, >=; see cost.go)
//	x // y       -> $//(x, y)
//	x in f.read(a) -> $in(x, $searched(f.read)(a))   (and not in)
//
// An addition with a literal operand, and a % with a number on its right,
// are left alone: they cannot grow a value by more than the literal, and
// they are the common case in loops. So is a comparison with a literal,
// which costs no more than the literal. (Not one with None: a function
// may name a parameter None.) Each new call is positioned at the operator it replaces, so errors and
// backtraces point where they did. Assignment targets are left alone. The
// one construct it refuses is %= on an element or field, which it cannot
// rewrite without evaluating the target twice.
func rewrite(f *syntax.File) error {
	r := rewriter{}
	r.stmts(f.Stmts)
	return r.err
}

type rewriter struct{ err error }

func call(name string, pos syntax.Position, args ...syntax.Expr) *syntax.CallExpr {
	return &syntax.CallExpr{Fn: &syntax.Ident{NamePos: pos, Name: name}, Lparen: pos, Args: args, Rparen: pos}
}

// isLiteral reports whether e is a literal: adding one can at most add
// its own length, which the watchdog sees.
func isLiteral(e syntax.Expr) bool {
	_, ok := e.(*syntax.Literal)
	return ok
}

// isNumber reports whether e is a number literal: a string formatted with
// one grows by its digits only.
func isNumber(e syntax.Expr) bool {
	l, ok := e.(*syntax.Literal)
	return ok && (l.Token == syntax.INT || l.Token == syntax.FLOAT)
}

// smallProduct reports whether x * y multiplies two integer literals
// whose product fits in 63 bits, which $mul would let through unchecked
// (guardIntMul): a rule's 1024 * 1024 in a loop is then one instruction,
// not a call.
func smallProduct(x, y syntax.Expr) bool {
	bitsOf := func(e syntax.Expr) (int, bool) {
		l, ok := e.(*syntax.Literal)
		if !ok || l.Token != syntax.INT {
			return 0, false
		}
		n, ok := l.Value.(int64)
		if !ok || n < 0 {
			return 0, false
		}
		return bits.Len64(uint64(n)), true
	}
	bx, okx := bitsOf(x)
	by, oky := bitsOf(y)
	return okx && oky && bx+by < 63
}

// searched marks a read whose result only goes to $in: y, a call of an
// attribute named read, calls $searched(its function) instead, which for
// ctx.repo.read is a read whose bytes $in gives back once searched (see
// searchedFile), and for any other function is that function. The
// operands are evaluated as before: x, then f.read, then the arguments.
func searched(y syntax.Expr) syntax.Expr {
	c, ok := y.(*syntax.CallExpr)
	if !ok {
		return y
	}
	if d, ok := c.Fn.(*syntax.DotExpr); !ok || d.Name.Name != "read" {
		return y
	}
	c.Fn = call(nameSearched, c.Lparen, c.Fn)
	return c
}

func (r *rewriter) stmts(ss []syntax.Stmt) {
	for _, s := range ss {
		r.stmt(s)
	}
}

func (r *rewriter) stmt(s syntax.Stmt) {
	switch s := s.(type) {
	case *syntax.AssignStmt:
		r.target(s.LHS)
		s.RHS = r.expr(s.RHS)
		switch s.Op {
		case syntax.STAR_EQ:
			s.RHS = call(nameCount, s.OpPos, s.RHS)
		case syntax.PLUS_EQ:
			if !isLiteral(s.RHS) {
				s.RHS = call(namePlus, s.OpPos, s.RHS)
			}
		case syntax.PERCENT_EQ, syntax.SLASHSLASH_EQ:
			// x op= y becomes x = $op(x, y), which is charged; on an element
			// or a field that would evaluate its operands twice.
			fn, op := nameMod, "%"
			if s.Op == syntax.SLASHSLASH_EQ {
				fn, op = nameFloorDiv, "//"
			}
			id, ok := s.LHS.(*syntax.Ident)
			if !ok {
				if r.err == nil {
					r.err = syntax.Error{Pos: s.OpPos, Msg: fmt.Sprintf("%s= is supported on a name only; write x[i] = x[i] %s y", op, op)}
				}
				return
			}
			s.Op = syntax.EQ
			s.RHS = call(fn, s.OpPos, &syntax.Ident{NamePos: id.NamePos, Name: id.Name}, s.RHS)
		}
	case *syntax.DefStmt:
		r.exprs(s.Params)
		r.stmts(s.Body)
	case *syntax.ExprStmt:
		s.X = r.expr(s.X)
	case *syntax.ForStmt:
		r.target(s.Vars)
		s.X = r.expr(s.X)
		r.stmts(s.Body)
	case *syntax.WhileStmt:
		s.Cond = r.expr(s.Cond)
		r.stmts(s.Body)
	case *syntax.IfStmt:
		s.Cond = r.expr(s.Cond)
		r.stmts(s.True)
		r.stmts(s.False)
	case *syntax.ReturnStmt:
		if s.Result != nil {
			s.Result = r.expr(s.Result)
		}
	case *syntax.LoadStmt, *syntax.BranchStmt:
	}
}

// target rewrites the expressions inside an assignment target, not the
// target itself.
func (r *rewriter) target(e syntax.Expr) {
	switch e := e.(type) {
	case *syntax.IndexExpr:
		e.X = r.expr(e.X)
		e.Y = r.expr(e.Y)
	case *syntax.DotExpr:
		e.X = r.expr(e.X)
	case *syntax.ParenExpr:
		r.target(e.X)
	case *syntax.ListExpr:
		for _, x := range e.List {
			r.target(x)
		}
	case *syntax.TupleExpr:
		for _, x := range e.List {
			r.target(x)
		}
	}
}

func (r *rewriter) exprs(es []syntax.Expr) {
	for i, e := range es {
		es[i] = r.expr(e)
	}
}

func (r *rewriter) expr(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case nil:
		return nil
	case *syntax.BinaryExpr:
		e.X = r.expr(e.X)
		e.Y = r.expr(e.Y)
		switch e.Op {
		case syntax.PLUS:
			if !isLiteral(e.X) && !isLiteral(e.Y) {
				return call(nameAdd, e.OpPos, e.X, e.Y)
			}
		case syntax.STAR:
			if !smallProduct(e.X, e.Y) {
				return call(nameMul, e.OpPos, e.X, e.Y)
			}
		case syntax.PERCENT:
			if !isNumber(e.Y) {
				return call(nameMod, e.OpPos, e.X, e.Y)
			}
		case syntax.SLASHSLASH:
			if !isNumber(e.Y) {
				return call(nameFloorDiv, e.OpPos, e.X, e.Y)
			}
		case syntax.EQL, syntax.NEQ, syntax.LT, syntax.LE, syntax.GT, syntax.GE:
			if !isLiteral(e.X) && !isLiteral(e.Y) {
				return call(compareNames[e.Op], e.OpPos, e.X, e.Y)
			}
		case syntax.IN:
			return call(nameIn, e.OpPos, e.X, searched(e.Y))
		case syntax.NOT_IN:
			return &syntax.UnaryExpr{OpPos: e.OpPos, Op: syntax.NOT, X: call(nameIn, e.OpPos, e.X, searched(e.Y))}
		}
	case *syntax.CallExpr:
		e.Fn = r.expr(e.Fn)
		r.exprs(e.Args)
	case *syntax.Comprehension:
		e.Body = r.expr(e.Body)
		for _, c := range e.Clauses {
			switch c := c.(type) {
			case *syntax.ForClause:
				r.target(c.Vars)
				c.X = r.expr(c.X)
			case *syntax.IfClause:
				c.Cond = r.expr(c.Cond)
			}
		}
	case *syntax.CondExpr:
		e.Cond = r.expr(e.Cond)
		e.True = r.expr(e.True)
		e.False = r.expr(e.False)
	case *syntax.DictEntry:
		e.Key = r.expr(e.Key)
		e.Value = r.expr(e.Value)
	case *syntax.DictExpr:
		r.exprs(e.List)
	case *syntax.DotExpr:
		e.X = r.expr(e.X)
		if guardedAttrs[e.Name.Name] {
			name := &syntax.Literal{Token: syntax.STRING, TokenPos: e.NamePos, Raw: strconv.Quote(e.Name.Name), Value: e.Name.Name}
			return call(nameAttr, e.Dot, e.X, name)
		}
	case *syntax.IndexExpr:
		e.X = r.expr(e.X)
		e.Y = r.expr(e.Y)
	case *syntax.LambdaExpr:
		r.exprs(e.Params)
		e.Body = r.expr(e.Body)
	case *syntax.ListExpr:
		r.exprs(e.List)
	case *syntax.TupleExpr:
		r.exprs(e.List)
		// A tuple of literals cannot nest: it is left as it is.
		for _, x := range e.List {
			if !isLiteral(x) {
				start, _ := e.Span()
				return call(nameTuple, start, e.List...)
			}
		}
	case *syntax.ParenExpr:
		e.X = r.expr(e.X)
	case *syntax.SliceExpr:
		e.X = r.expr(e.X)
		e.Lo = r.expr(e.Lo)
		e.Hi = r.expr(e.Hi)
		e.Step = r.expr(e.Step)
	case *syntax.UnaryExpr:
		e.X = r.expr(e.X)
	}
	return e
}
