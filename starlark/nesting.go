package starlark

// Hashing a tuple or a struct, and freezing one, walks every value it
// holds and every value those hold, inside one step the interpreter cannot
// interrupt, on the Go stack. A tuple may hold the same tuple many times
// over: t = (t, t), forty times, is forty small steps to build and 2^40 to
// hash; and a million-deep t = (t,) is a million Go frames. So every way a
// tuple or a struct is made (a literal, + and *, +=, tuple(), zip(),
// enumerate(), struct(), dict.items() and dict.popitem()) measures what it
// made: how many values it expands to, counting a shared part each time it
// is used, and how deeply it nests; past maxExpanded or maxNesting it is
// refused, as an error at the line.

import (
	"fmt"
	"unsafe"

	sl "go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
)

// maxExpanded bounds how many values one tuple or struct may expand to.
const maxExpanded = 1 << 20

// nestKey identifies a tuple (its elements and length: two tuples may
// share elements) or a struct.
type nestKey struct {
	p unsafe.Pointer
	n int
}

type nestMeasure struct {
	expanded uint64
	height   int
}

// measureNesting returns how many values v expands to (saturating just
// past maxExpanded) and how deeply it nests (saturating just past
// maxNesting). Tuples and structs that hold others are remembered for the
// call, so a value built from parts already measured costs only its own
// length.
func (st *callState) measureNesting(v sl.Value, depth int) (uint64, int) {
	var key nestKey
	var elems func(yield func(sl.Value) bool)
	switch v := v.(type) {
	case sl.Tuple:
		if len(v) == 0 {
			return 1, 1
		}
		key = nestKey{unsafe.Pointer(unsafe.SliceData(v)), len(v)}
		elems = func(yield func(sl.Value) bool) {
			for _, e := range v {
				if !yield(e) {
					return
				}
			}
		}
	case *starlarkstruct.Struct:
		key = nestKey{unsafe.Pointer(v), -1}
		elems = func(yield func(sl.Value) bool) {
			for _, e := range v.Entries() {
				if !yield(e) {
					return
				}
			}
		}
	default:
		return 1, 0
	}
	if m, ok := st.nested[key]; ok {
		return m.expanded, m.height
	}
	if depth > maxNesting {
		return maxExpanded + 1, maxNesting + 1
	}
	expanded, height, holds := uint64(1), 0, false
	for e := range elems {
		switch e.(type) {
		case sl.Tuple, *starlarkstruct.Struct:
			holds = true
		}
		x, h := st.measureNesting(e, depth+1)
		expanded = min(expanded+x, maxExpanded+1)
		height = max(height, h)
		if expanded > maxExpanded || height > maxNesting {
			break
		}
	}
	height = min(height+1, maxNesting+1)
	if holds {
		if st.nested == nil {
			st.nested = map[nestKey]nestMeasure{}
		}
		st.nested[key] = nestMeasure{expanded, height}
	}
	return expanded, height
}

// checkNesting refuses a tuple or struct that expands past maxExpanded
// values or nests past maxNesting levels; what made it is named first,
// unless it was a tuple expression.
func (st *callState) checkNesting(v sl.Value, what string) error {
	expanded, height := st.measureNesting(v, 0)
	var err error
	switch {
	case height > maxNesting:
		err = fmt.Errorf("refused a %s nested more than %d deep", v.Type(), maxNesting)
	case expanded > maxExpanded:
		err = fmt.Errorf("refused a %s that holds more than %d values once its shared parts are counted each time they are used (hashing or freezing it would not end)", v.Type(), maxExpanded)
	}
	if err != nil && what != "" {
		err = fmt.Errorf("%s: %w", what, err)
	}
	return err
}

// checkNested is checkNesting for a value just made on thread, when it is
// a tuple or a struct.
func checkNested(thread *sl.Thread, v sl.Value, what string) error {
	switch v.(type) {
	case sl.Tuple, *starlarkstruct.Struct:
	default:
		return nil
	}
	st, err := stateOf(thread)
	if err != nil {
		return err
	}
	return st.checkNesting(v, what)
}

// checkNestedElems is checkNested for each element of a list just made
// (zip's and enumerate's tuples, dict.items()'s pairs).
func checkNestedElems(thread *sl.Thread, v sl.Value, what string) error {
	l, ok := v.(*sl.List)
	if !ok {
		return checkNested(thread, v, what)
	}
	for i := range l.Len() {
		if err := checkNested(thread, l.Index(i), what); err != nil {
			return err
		}
	}
	return nil
}

// tupleBuiltin is $tuple, which a tuple expression (a, b) is rewritten to.
func tupleBuiltin(thread *sl.Thread, _ *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	if len(kwargs) != 0 {
		return nil, fmt.Errorf("internal error: a tuple with keyword arguments")
	}
	// The arguments may be the interpreter's own stack: the tuple gets a
	// copy.
	t := make(sl.Tuple, len(args))
	copy(t, args)
	if err := checkNested(thread, t, ""); err != nil {
		return nil, err
	}
	return t, nil
}

// concatOperand is what $plus turns the right operand of x += y into when y
// is a tuple: x + y is then checked as it is made. It is iterable, so a
// list on the left is extended in place as ever.
type concatOperand struct {
	st *callState
	v  sl.Tuple
}

var (
	_ sl.HasBinary = concatOperand{}
	_ sl.Iterable  = concatOperand{}
)

func (c concatOperand) String() string        { return c.v.String() }
func (c concatOperand) Type() string          { return c.v.Type() }
func (c concatOperand) Freeze()               { c.v.Freeze() }
func (c concatOperand) Truth() sl.Bool        { return c.v.Truth() }
func (c concatOperand) Hash() (uint32, error) { return c.v.Hash() }
func (c concatOperand) Iterate() sl.Iterator  { return c.v.Iterate() }

func (c concatOperand) Binary(op syntax.Token, y sl.Value, side sl.Side) (sl.Value, error) {
	x, z := y, sl.Value(c.v)
	if side == sl.Left {
		x, z = c.v, y
	}
	r, err := sl.Binary(op, x, z)
	if err != nil {
		return nil, err
	}
	if t, ok := r.(sl.Tuple); ok {
		if err := c.st.checkNesting(t, "+="); err != nil {
			return nil, err
		}
	}
	return r, nil
}
