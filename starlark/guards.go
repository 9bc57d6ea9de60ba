package starlark

// Guards against single operations that allocate without bound.
//
// Starlark checks for cancellation between instructions, so the watchdog in
// limits.go can stop a hook that grows its heap step by step, but not a
// single builtin call that allocates a gigabyte before returning:
// "x" * (1 << 30), s.replace("x", s), sep.join(...), "%s" % ([s] * 1000),
// list(range(1 << 40)). Every operation whose result can be much larger
// than its operands is therefore estimated before it runs, and refused when
// the estimate would take the heap past the memory limit. The operators are
// reached by rewriting the syntax tree (rewrite.go): x * y becomes
// $mul(x, y), x % y becomes $mod(x, y), x.replace becomes $attr(x,
// "replace"), and so on; the universal functions that materialise or
// stringify a value are replaced by wrappers (universe.go). An operation that only
// walks what already exists (min, max, any, all, sorted, ...) is charged
// steps for its length, so an iteration over range(1 << 62) inside a
// builtin exhausts the step budget instead of running for ever.

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	sl "go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Per-element estimates, in bytes, of what a materialised value costs.
const (
	sizeSlot  = 16 // one Value in a list or tuple
	sizeEntry = 64 // one dict or set entry
	sizePiece = 32 // one string produced by split: its slot and header
)

// maxIntBits bounds the result of an integer multiplication.
const maxIntBits = 1 << 20

// maxIntDigits bounds the string int() parses (as Python does), since
// parsing a decimal is quadratic.
const maxIntDigits = 4300

// guardedAttrs are the method names rewrite.go routes through $attr.
var guardedAttrs = map[string]bool{
	"format": true, "join": true, "replace": true, "split": true, "rsplit": true,
	"splitlines": true, "extend": true, "sort": true, "union": true, "update": true,
	"items": true, "popitem": true, "remove": true, "insert": true, "pop": true,
	"keys": true, "values": true,
	"symmetric_difference": true, "intersection": true, "difference": true,
	"issubset": true, "issuperset": true,
	// String methods that scan the whole string: charged for it.
	"count": true, "find": true, "rfind": true, "index": true, "rindex": true,
	"lower": true, "upper": true, "title": true, "capitalize": true,
	"strip": true, "lstrip": true, "rstrip": true, "partition": true, "rpartition": true,
	"isalnum": true, "isalpha": true, "isdigit": true, "islower": true, "isspace": true,
	"istitle": true, "isupper": true, "removeprefix": true, "removesuffix": true,
}

// scanCost is the steps a builtin that reads n bytes of a string once is
// charged: a step a cache line.
func scanCost(n int) uint64 { return uint64(n)/64 + 1 }

// guardMul checks x * y before it runs.
func guardMul(st *callState, x, y sl.Value) error {
	if n, ok := x.(sl.Int); ok {
		if m, ok := y.(sl.Int); ok {
			return guardIntMul(n, m)
		}
		return guardRepeat(st, y, n)
	}
	if n, ok := y.(sl.Int); ok {
		return guardRepeat(st, x, n)
	}
	return nil
}

func intBits(x sl.Int) int {
	if i, ok := x.Int64(); ok {
		if i < 0 {
			i = -i
		}
		return bits.Len64(uint64(i))
	}
	return x.BigInt().BitLen()
}

func guardIntMul(x, y sl.Int) error {
	if _, ok := x.Int64(); ok {
		if _, ok := y.Int64(); ok {
			if intBits(x)+intBits(y) < 63 {
				return nil
			}
		}
	}
	if b := intBits(x) + intBits(y); b > maxIntBits {
		return fmt.Errorf("integer product of about %d bits exceeds the limit of %d bits", b, maxIntBits)
	}
	return nil
}

// guardRepeat checks seq * n for the sequences Starlark repeats.
func guardRepeat(st *callState, seq sl.Value, n sl.Int) error {
	count, ok := n.Int64()
	if !ok || count <= 1 || count > math.MaxInt32 {
		return nil // upstream reports a count too large; nothing is allocated
	}
	unit, ok := seqSize(seq)
	if !ok {
		return nil
	}
	hi, est := bits.Mul64(unit, uint64(count))
	if hi != 0 {
		est = ^uint64(0)
	}
	what := func() string {
		return fmt.Sprintf("repeating a %s of length %d %d times", seq.Type(), sl.Len(seq), count)
	}
	if err := st.allowFor(est, what); err != nil {
		return err
	}
	return st.chargeWrite(est, what)
}

// chargeWrite charges the call for writing est bytes of a new value, once
// that is more than smallAlloc: below it, one step's writing is bounded.
func (st *callState) chargeWrite(est uint64, what func() string) error {
	if est < smallAlloc || st.thread == nil {
		return nil
	}
	return st.chargeFor(st.thread, est/writeBytesPerStep, what)
}

// guardFormat checks format % args and format.format(...) for the growth a
// format can cause: each directive substitutes at most the largest
// argument.
//
// Measuring the arguments and writing the result are charged to the call
// (see sizer.charge).
func guardFormat(thread *sl.Thread, st *callState, format string, directive byte, args ...sl.Value) error {
	z := paidBy(st, thread)
	var most uint64
	for _, a := range args {
		most = max(most, z.largestArg(a))
	}
	n := uint64(strings.Count(format, string(directive)))
	z.spend(uint64(len(format)))
	est := z.add(uint64(len(format)), z.mul(n, most))
	if err := z.chargeAt(thread, st, est, formatUnits, "formatting a string"); err != nil {
		return err
	}
	return st.allow(est, "formatting a string")
}

func internalArgs(name string, args sl.Tuple, kwargs []sl.Tuple, n int) error {
	if len(args) != n || len(kwargs) != 0 {
		return fmt.Errorf("internal error: %s called with %d arguments", name, len(args))
	}
	return nil
}

// inBuiltin is $in, which x in y is rewritten to (and x not in y to not
// $in(x, y)): a search through a string or a sequence is one step of the
// interpreter's however long it is, so it is charged for its length. y is
// a *searchedFile where it is a read's result (see searched in rewrite.go).
func inBuiltin(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	if err := internalArgs("in", args, kwargs, 2); err != nil {
		return nil, err
	}
	var cost uint64
	switch y := args[1].(type) {
	case *searchedFile:
		defer y.giveBack() // searched or not
		cost = scanCost(len(y.data))
	case sl.String:
		cost = scanCost(len(y))
	case sl.Bytes:
		cost = scanCost(len(y))
	case *sl.List, sl.Tuple:
		// Each element is compared with x, which may walk x.
		if err := chargeSearch(thread, args[0], y.(sl.Indexable), "in"); err != nil {
			return nil, err
		}
	case *sl.Dict, *sl.Set:
		if err := chargeHash(thread, args[0], "in"); err != nil {
			return nil, err
		}
	}
	if cost > 1 {
		st, err := stateOf(thread)
		if err != nil {
			return nil, err
		}
		if err := st.charge(thread, cost, "in"); err != nil {
			return nil, err
		}
	}
	if f, ok := args[1].(*searchedFile); ok {
		found, err := f.has(args[0])
		return sl.Bool(found), err
	}
	return sl.Binary(syntax.IN, args[0], args[1])
}

// mulBuiltin is $mul, which x * y is rewritten to.
func mulBuiltin(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	if err := internalArgs("*", args, kwargs, 2); err != nil {
		return nil, err
	}
	x, y := args[0], args[1]
	if xi, ok := x.(sl.Int); ok {
		if yi, ok := y.(sl.Int); ok {
			if err := guardIntMul(xi, yi); err != nil {
				return nil, err
			}
			if err := chargeIntOp(thread, syntax.STAR, xi, yi); err != nil {
				return nil, err
			}
			return xi.Mul(yi), nil
		}
	}
	st, err := stateOf(thread)
	if err != nil {
		return nil, err
	}
	if err := guardMul(st, x, y); err != nil {
		return nil, err
	}
	z, err := sl.Binary(syntax.STAR, x, y)
	if err != nil {
		return nil, err
	}
	return z, checkNested(thread, z, "*")
}

// guardAdd checks x + y for the sequences Starlark concatenates.
func guardAdd(st *callState, x, y sl.Value) error {
	est, ok := seqSize(x)
	if !ok {
		return nil
	}
	more, _ := seqSize(y)
	if err := st.allow(est+more, "concatenation"); err != nil {
		return err
	}
	return st.chargeWrite(est+more, func() string { return "concatenation" })
}

// seqSize is the flat size of a string, bytes, list or tuple (its bytes,
// or a slot per element); ok is false for anything else.
func seqSize(v sl.Value) (n uint64, ok bool) {
	switch v := v.(type) {
	case sl.String:
		return uint64(len(v)), true
	case sl.Bytes:
		return uint64(len(v)), true
	case *sl.List:
		return uint64(v.Len()) * sizeSlot, true
	case sl.Tuple:
		return uint64(len(v)) * sizeSlot, true
	}
	return 0, false
}

// addBuiltin is $add, which x + y is rewritten to.
func addBuiltin(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	if err := internalArgs("+", args, kwargs, 2); err != nil {
		return nil, err
	}
	switch args[0].(type) {
	case sl.Int, sl.Float:
		return sl.Binary(syntax.PLUS, args[0], args[1])
	}
	st, err := stateOf(thread)
	if err != nil {
		return nil, err
	}
	if err := guardAdd(st, args[0], args[1]); err != nil {
		return nil, err
	}
	z, err := sl.Binary(syntax.PLUS, args[0], args[1])
	if err != nil {
		return nil, err
	}
	return z, checkNested(thread, z, "+")
}

// modBuiltin is $mod, which x % y (and x %= y) is rewritten to.
func modBuiltin(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	if err := internalArgs("%", args, kwargs, 2); err != nil {
		return nil, err
	}
	if x, ok := args[0].(sl.Int); ok {
		if y, ok := args[1].(sl.Int); ok {
			if err := chargeIntOp(thread, syntax.PERCENT, x, y); err != nil {
				return nil, err
			}
		}
	}
	if f, ok := args[0].(sl.String); ok {
		st, err := stateOf(thread)
		if err != nil {
			return nil, err
		}
		if err := guardFormat(thread, st, string(f), '%', args[1]); err != nil {
			return nil, err
		}
	}
	return sl.Binary(syntax.PERCENT, args[0], args[1])
}

// repeatOperand is what $count turns the right operand of x *= y into: it
// defines * for whatever x is, checking the repetition first. It exists
// only between $count and the multiplication.
type repeatOperand struct {
	st *callState
	v  sl.Value
}

var _ sl.HasBinary = repeatOperand{}

func (r repeatOperand) String() string        { return r.v.String() }
func (r repeatOperand) Type() string          { return r.v.Type() }
func (r repeatOperand) Freeze()               { r.v.Freeze() }
func (r repeatOperand) Truth() sl.Bool        { return r.v.Truth() }
func (r repeatOperand) Hash() (uint32, error) { return r.v.Hash() }

func (r repeatOperand) Binary(op syntax.Token, y sl.Value, side sl.Side) (sl.Value, error) {
	x, z := y, r.v
	if side == sl.Left {
		x, z = r.v, y
	}
	if op == syntax.STAR {
		if err := guardMul(r.st, x, z); err != nil {
			return nil, err
		}
		// x *= y on integers multiplies as x * y does, and pays as it does.
		if xi, ok := x.(sl.Int); ok {
			if zi, ok := z.(sl.Int); ok {
				if err := chargeIntOp(r.st.thread, syntax.STAR, xi, zi); err != nil {
					return nil, err
				}
			}
		}
	}
	v, err := sl.Binary(op, x, z)
	if err != nil {
		return nil, err
	}
	if t, ok := v.(sl.Tuple); ok {
		return t, r.st.checkNesting(t, "*=")
	}
	return v, nil
}

// countBuiltin is $count, which the right operand of x *= y is wrapped in.
func countBuiltin(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	if err := internalArgs("*=", args, kwargs, 1); err != nil {
		return nil, err
	}
	switch args[0].(type) {
	case sl.Int, sl.String, sl.Bytes, *sl.List, sl.Tuple:
		st, err := stateOf(thread)
		if err != nil {
			return nil, err
		}
		return repeatOperand{st: st, v: args[0]}, nil
	}
	return args[0], nil
}

// plusBuiltin is $plus, which the right operand of x += y is wrapped in: a
// list extended in place by a long iterable is checked first.
func plusBuiltin(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	if err := internalArgs("+=", args, kwargs, 1); err != nil {
		return nil, err
	}
	v := args[0]
	switch v := v.(type) {
	case sl.Int, sl.Float:
		return v, nil
	case sl.String, sl.Bytes:
		// x += y allocates len(x) + len(y); y is a lower bound for x when
		// a string doubles, the case that matters.
		if n := uint64(sl.Len(v)); n >= smallAlloc {
			st, err := stateOf(thread)
			if err != nil {
				return nil, err
			}
			if err := st.allow(n, "concatenation"); err != nil {
				return nil, err
			}
		}
		return v, nil
	}
	if err := guardIterable(thread, v, sizeSlot, "+="); err != nil {
		return nil, err
	}
	if t, ok := v.(sl.Tuple); ok {
		st, err := stateOf(thread)
		if err != nil {
			return nil, err
		}
		return concatOperand{st: st, v: t}, nil
	}
	return v, nil
}

// guardIterable charges for iterating v and checks materialising it at per
// bytes an element. A value of unknown length passes.
func guardIterable(thread *sl.Thread, v sl.Value, per uint64, what string) error {
	return guardIterables(thread, sl.Tuple{v}, per, what)
}

// guardIterables is guardIterable for an operation over several values at
// once (a union of many sets): what they come to together is what it
// materialises.
func guardIterables(thread *sl.Thread, vs sl.Tuple, per uint64, what string) error {
	var n uint64
	for _, v := range vs {
		if l := sl.Len(v); l > 0 {
			n += uint64(l)
		}
	}
	if n == 0 {
		return nil
	}
	st, err := stateOf(thread)
	if err != nil {
		return err
	}
	if per > 0 {
		hi, est := bits.Mul64(n, per)
		if hi != 0 {
			est = ^uint64(0)
		}
		if err := st.allowFor(est, func() string { return fmt.Sprintf("%s of %d elements", what, n) }); err != nil {
			return err
		}
	}
	return st.chargeFor(thread, n/8, func() string { return fmt.Sprintf("%s over %d elements", what, n) })
}

// guardZip checks zip(*vs): as many tuples as the shortest has elements,
// each holding one of every argument.
func guardZip(thread *sl.Thread, vs sl.Tuple) error {
	if len(vs) == 0 {
		return nil
	}
	shortest := -1
	for _, v := range vs {
		if l := sl.Len(v); l >= 0 && (shortest < 0 || l < shortest) {
			shortest = l
		}
	}
	if shortest <= 0 {
		return nil
	}
	st, err := stateOf(thread)
	if err != nil {
		return err
	}
	per := uint64(len(vs))*sizeSlot + 3*sizeSlot
	hi, est := bits.Mul64(uint64(shortest), per)
	if hi != 0 {
		est = ^uint64(0)
	}
	if err := st.allowFor(est, func() string { return fmt.Sprintf("zip of %d sequences of %d elements", len(vs), shortest) }); err != nil {
		return err
	}
	return st.chargeFor(thread, uint64(shortest)*uint64(len(vs))/8, func() string { return "zip" })
}

// attrBuiltin is $attr, which x.name is rewritten to for the names in
// guardedAttrs.
func attrBuiltin(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	if err := internalArgs(".", args, kwargs, 2); err != nil {
		return nil, err
	}
	name, _ := sl.AsString(args[1])
	return guardedAttr(args[0], name)
}

func noAttr(x sl.Value, name string) error {
	return fmt.Errorf("%s has no .%s field or method", x.Type(), name)
}

// guardedAttr is x.name, with the methods that can allocate without bound
// wrapped in a check.
func guardedAttr(x sl.Value, name string) (sl.Value, error) {
	ha, ok := x.(sl.HasAttrs)
	if !ok {
		return nil, noAttr(x, name)
	}
	v, err := ha.Attr(name)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, noAttr(x, name)
	}
	m, ok := v.(*sl.Builtin)
	if !ok || !guardedAttrs[name] {
		return v, nil
	}
	var check func(thread *sl.Thread, st *callState, args sl.Tuple, kwargs []sl.Tuple) error
	switch recv := x.(type) {
	case sl.String:
		check = stringGuard(string(recv), name)
	case *sl.List:
		switch name {
		case "extend":
			check = iterGuard(sizeSlot)
		case "sort":
			check = func(thread *sl.Thread, st *callState, _ sl.Tuple, _ []sl.Tuple) error {
				return chargeSort(thread, st, recv.Len(), "sort")
			}
		case "index", "remove":
			// Each element is compared with x, which may walk x.
			check = func(thread *sl.Thread, st *callState, args sl.Tuple, _ []sl.Tuple) error {
				if len(args) == 0 {
					return nil
				}
				return chargeSearch(thread, args[0], recv, "list."+name)
			}
		case "insert", "pop":
			// Each moves the elements after the place.
			check = func(thread *sl.Thread, st *callState, args sl.Tuple, _ []sl.Tuple) error {
				n := recv.Len()
				at := n
				if len(args) > 0 {
					if i, err := sl.AsInt32(args[0]); err == nil {
						if i < 0 {
							i += n
						}
						at = min(max(i, 0), n)
					}
				}
				return st.charge(thread, uint64(n-at), "list."+name)
			}
		}
	case *sl.Set:
		switch name {
		case "union", "update", "symmetric_difference":
			check = hashGuard(sizeEntry, false)
		case "issubset", "issuperset", "intersection", "difference":
			// The receiver's elements are looked up too.
			check = func(thread *sl.Thread, st *callState, args sl.Tuple, kwargs []sl.Tuple) error {
				return hashGuard(0, false)(thread, st, append(sl.Tuple{recv}, args...), kwargs)
			}
		}
	case *sl.Dict:
		switch name {
		case "update":
			check = hashGuard(sizeEntry, true)
		case "keys", "values":
			// A new list of what it holds.
			check = func(thread *sl.Thread, st *callState, _ sl.Tuple, _ []sl.Tuple) error {
				return st.charge(thread, uint64(recv.Len())/8, "dict."+name)
			}
		case "pop":
			check = func(thread *sl.Thread, _ *callState, args sl.Tuple, _ []sl.Tuple) error {
				if len(args) == 0 {
					return nil
				}
				return chargeHash(thread, args[0], "dict.pop")
			}
		case "items", "popitem":
			// Pairs of what the dict holds: a new tuple each.
			return sl.NewBuiltin(name, func(thread *sl.Thread, _ *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
				r, err := m.CallInternal(thread, args, kwargs)
				if err != nil {
					return nil, err
				}
				return r, checkNestedElems(thread, r, "dict."+name)
			}).BindReceiver(x), nil
		}
	}
	if check == nil {
		return v, nil
	}
	guarded := sl.NewBuiltin(name, func(thread *sl.Thread, _ *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
		st, err := stateOf(thread)
		if err != nil {
			return nil, err
		}
		if err := check(thread, st, args, kwargs); err != nil {
			return nil, err
		}
		return m.CallInternal(thread, args, kwargs)
	})
	return guarded.BindReceiver(x), nil
}

// chargeSort charges for sorting n elements, n log n comparisons: a sort
// is one builtin call, which nothing can stop once it has begun.
func chargeSort(thread *sl.Thread, st *callState, n int, what string) error {
	if n < 2 {
		return nil
	}
	steps := uint64(n) * uint64(bits.Len(uint(n))) / 8
	return st.chargeFor(thread, steps, func() string { return fmt.Sprintf("%s of %d elements", what, n) })
}

// hashGuard is iterGuard for an operation that hashes what it iterates
// (into a set or dict; pairs: key and value pairs, as dict.update takes).
func hashGuard(per uint64, pairs bool) func(*sl.Thread, *callState, sl.Tuple, []sl.Tuple) error {
	return func(thread *sl.Thread, _ *callState, args sl.Tuple, _ []sl.Tuple) error {
		if err := guardIterables(thread, args, per, "iterating"); err != nil {
			return err
		}
		return chargeHashing(thread, args, pairs, "iterating")
	}
}

func iterGuard(per uint64) func(*sl.Thread, *callState, sl.Tuple, []sl.Tuple) error {
	return func(thread *sl.Thread, _ *callState, args sl.Tuple, _ []sl.Tuple) error {
		return guardIterables(thread, args, per, "iterating")
	}
}

// kwarg returns the keyword argument name, or positional argument i.
func kwarg(args sl.Tuple, kwargs []sl.Tuple, i int, name string) sl.Value {
	for _, kv := range kwargs {
		if k, _ := sl.AsString(kv[0]); k == name {
			return kv[1]
		}
	}
	if i < len(args) {
		return args[i]
	}
	return nil
}

// fields is how many pieces s.split() makes: runs of what is not space.
func fields(s string) int {
	n, in := 0, false
	for _, r := range s {
		space := unicode.IsSpace(r)
		if !space && !in {
			n++
		}
		in = !space
	}
	return n + 1
}

func stringGuard(s, name string) func(*sl.Thread, *callState, sl.Tuple, []sl.Tuple) error {
	switch name {
	case "count", "find", "rfind", "index", "rindex", "strip", "lstrip", "rstrip",
		"partition", "rpartition", "isalnum", "isalpha", "isdigit", "islower",
		"isspace", "istitle", "isupper", "removeprefix", "removesuffix":
		return func(thread *sl.Thread, st *callState, _ sl.Tuple, _ []sl.Tuple) error {
			return st.chargeFor(thread, scanCost(len(s)), func() string { return "str." + name + " over " + strconv.Itoa(len(s)) + " bytes" })
		}
	case "lower", "upper", "title", "capitalize":
		return func(thread *sl.Thread, st *callState, _ sl.Tuple, _ []sl.Tuple) error {
			if err := st.chargeFor(thread, scanCost(len(s)), func() string { return "str." + name }); err != nil {
				return err
			}
			// A character may change its length in another case.
			return st.allow(3*uint64(len(s)), "str."+name)
		}
	case "format":
		return func(thread *sl.Thread, st *callState, args sl.Tuple, kwargs []sl.Tuple) error {
			vals := []sl.Value{args}
			for _, kv := range kwargs {
				vals = append(vals, kv[1])
			}
			return guardFormat(thread, st, s, '{', vals...)
		}
	case "join":
		return func(thread *sl.Thread, st *callState, args sl.Tuple, _ []sl.Tuple) error {
			if len(args) != 1 {
				return nil
			}
			seq, ok := args[0].(sl.Indexable)
			if !ok {
				return guardIterable(thread, args[0], 0, "join")
			}
			n := seq.Len()
			if err := st.chargeFor(thread, uint64(n), func() string { return fmt.Sprintf("join over %d elements", n) }); err != nil {
				return err
			}
			z := newSizer(st.limits.Heap)
			est := z.mul(uint64(len(s)), uint64(max(n-1, 0)))
			for i := range n {
				if e, ok := seq.Index(i).(sl.String); ok {
					est = z.add(est, uint64(len(e)))
				}
			}
			if err := st.allow(est, "join"); err != nil {
				return err
			}
			// The result grows as it is written, copied each time.
			return st.chargeFor(thread, satMul(est, stringifyUnits)/unitsPerStep, func() string { return "join" })
		}
	case "replace":
		return func(thread *sl.Thread, st *callState, args sl.Tuple, kwargs []sl.Tuple) error {
			// It reads s, counting, then writes it out replaced.
			if err := st.chargeFor(thread, scanCost(len(s)), func() string { return "str.replace over " + strconv.Itoa(len(s)) + " bytes" }); err != nil {
				return err
			}
			old, ok1 := sl.AsString(kwarg(args, kwargs, 0, "old"))
			repl, ok2 := sl.AsString(kwarg(args, kwargs, 1, "new"))
			if !ok1 || !ok2 {
				return nil
			}
			n := strings.Count(s, old)
			if old == "" {
				n = utf8.RuneCountInString(s) + 1
			}
			if len(repl) <= len(old) {
				return st.chargeFor(thread, scanCost(len(s))+uint64(n)/4, func() string { return "str.replace" })
			}
			if c, ok := kwarg(args, kwargs, 2, "count").(sl.Int); ok {
				if c64, ok := c.Int64(); ok && c64 >= 0 && c64 < int64(n) {
					n = int(c64)
				}
			}
			// Each replacement is a search and a write of its own.
			if err := st.chargeFor(thread, uint64(n)/4, func() string { return fmt.Sprintf("str.replace of %d matches", n) }); err != nil {
				return err
			}
			z := newSizer(st.limits.Heap)
			est := z.add(uint64(len(s)), z.mul(uint64(n), uint64(len(repl))))
			if err := st.allow(est, "replace"); err != nil {
				return err
			}
			return st.chargeFor(thread, est/writeBytesPerStep, func() string { return "str.replace" })
		}
	case "split", "rsplit", "splitlines":
		return func(thread *sl.Thread, st *callState, args sl.Tuple, kwargs []sl.Tuple) error {
			if err := st.chargeFor(thread, scanCost(len(s)), func() string { return "str." + name + " over " + strconv.Itoa(len(s)) + " bytes" }); err != nil {
				return err
			}
			var pieces int
			switch {
			case name == "splitlines":
				pieces = strings.Count(s, "\n") + strings.Count(s, "\r") + 1
			default:
				if sep, ok := sl.AsString(kwarg(args, kwargs, 0, "sep")); ok && sep != "" {
					pieces = strings.Count(s, sep) + 1
				} else {
					pieces = fields(s)
				}
				if m, ok := kwarg(args, kwargs, 1, "maxsplit").(sl.Int); ok {
					if m64, ok := m.Int64(); ok && m64 >= 0 && m64+1 < int64(pieces) {
						pieces = int(m64 + 1)
					}
				}
			}
			// A piece each a string of its own.
			if err := st.chargeFor(thread, 2*uint64(pieces), func() string { return fmt.Sprintf("str.%s into %d pieces", name, pieces) }); err != nil {
				return err
			}
			return st.allow(uint64(pieces)*sizePiece, name)
		}
	}
	return nil
}
