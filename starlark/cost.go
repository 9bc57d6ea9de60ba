package starlark

// What comparing and hashing cost.
//
// A comparison, a search of a list, a sort or the building of a set is one
// step of the interpreter's, or one builtin call, however much it walks:
// x == y on two lists built from the same inner lists doubled many levels
// visits exponentially many elements; set([s, t] * n) hashes a long string
// n times; sorted of long strings that share a prefix compares them n log n
// times. Each is therefore charged, before it runs, an upper bound on what
// it will do, measured by a coster: it walks each distinct container once
// (by identity, so a structure made of shared parts is measured in time
// proportional to its distinct parts) and counts every reference, as the
// operation will. The walk is itself charged, and stops as soon as it has
// cost what the call has left, so measuring cannot outlast the budget
// either.

import (
	"fmt"
	"math/bits"
	"unsafe"

	sl "go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
)

// Costs are counted in units: a byte compared or hashed is one, an
// element visited elemUnits, and a step unitsPerStep (a step a cache line,
// as scanCost charges a scan).
//
// The rates are measured (BenchmarkChargedStep): each family's charged
// step should take no more than a few hundred nanoseconds, about what the
// interpreter's costliest instructions do, so that a budget of steps
// bounds the wall time a call can take.
const (
	unitsPerStep = 64
	elemUnits    = 8
	// compareUnits is an element compared: a step a quarter.
	compareUnits = 16
	// insertUnits is an element hashed into a new set or dict: two
	// steps, its entry's allocation and insertion.
	insertUnits = 128
	// stringifyUnits is a byte str, repr, a format or json.encode
	// writes: a step every four.
	stringifyUnits = 16
	// formatUnits is a byte a format (% or str.format) may write: its
	// estimate counts the largest argument at every directive, so it is
	// charged at a quarter of that.
	formatUnits = 4
	// costCap is where every sum of units saturates.
	costCap = uint64(1) << 62
)

// writeBytesPerStep is what writing a new value (a repetition, a
// concatenation, a replacement) is charged: memory is written faster than
// it is compared.
const writeBytesPerStep = 256

// bigCompare is the length from which comparing two strings is charged:
// below it a comparison costs less than the step that makes it.
const bigCompare = 1 << 10

func satAdd(a, b uint64) uint64 {
	if s := a + b; s >= a && s < costCap {
		return s
	}
	return costCap
}

func satMul(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 || lo >= costCap {
		return costCap
	}
	return lo
}

// costKey identifies a container measured at a depth: a tuple by its
// elements and length (two tuples may share elements), anything else by
// its address; depth is -1 for a hash, which has no depth limit.
type costKey struct {
	p     unsafe.Pointer
	n     int
	depth int
}

// coster measures what comparing or hashing values costs, for one
// operation.
type coster struct {
	memo map[costKey]uint64
	// work is what the measuring itself has cost, in units; past limit it
	// stops, and over is set.
	work, limit uint64
	over        bool
}

// newCoster is a coster that may spend what the thread has left of its
// budget.
func newCoster(st *callState, thread *sl.Thread) *coster {
	var left uint64
	if thread.Steps < st.limits.Steps {
		left = st.limits.Steps - thread.Steps
	}
	return &coster{limit: satMul(left, unitsPerStep)}
}

// visit accounts for walking n elements; false once the walk has cost
// more than it may.
func (c *coster) visit(n int) bool {
	c.work = satAdd(c.work, satMul(uint64(max(n, 1)), elemUnits))
	if c.work > c.limit {
		c.over = true
	}
	return !c.over
}

// memoized measures the container at key once.
func (c *coster) memoized(key costKey, n int, measure func() uint64) uint64 {
	if u, ok := c.memo[key]; ok {
		return u
	}
	if !c.visit(n) {
		return costCap
	}
	if c.memo == nil {
		c.memo = map[costKey]uint64{}
	}
	c.memo[key] = costCap // a cycle costs all there is
	u := measure()
	c.memo[key] = u
	return u
}

// compare bounds, in units, what comparing v with another value does,
// depth levels of starlark-go's comparison deep (past that it fails, see
// sl.CompareLimit). Comparing two values costs at most the smaller of
// their bounds.
func (c *coster) compare(v sl.Value, depth int) uint64 {
	if depth <= 0 {
		return elemUnits
	}
	switch v := v.(type) {
	case sl.String:
		return elemUnits + uint64(len(v))
	case sl.Bytes:
		return elemUnits + uint64(len(v))
	case sl.Int:
		return elemUnits + uint64(intBits(v)/8)
	case *sl.List:
		return c.memoized(costKey{unsafe.Pointer(v), 0, depth}, v.Len(), func() uint64 {
			return c.elems(v.Len(), v.Index, depth)
		})
	case sl.Tuple:
		if len(v) == 0 {
			return elemUnits
		}
		return c.memoized(costKey{unsafe.Pointer(unsafe.SliceData(v)), len(v), depth}, len(v), func() uint64 {
			return c.elems(len(v), v.Index, depth)
		})
	case *sl.Dict:
		// Each of its keys is looked up in the other (hashed and
		// compared), and each value compared.
		return c.memoized(costKey{unsafe.Pointer(v), 0, depth}, v.Len(), func() uint64 {
			u := uint64(elemUnits)
			for _, kv := range v.Items() {
				u = satAdd(u, satAdd(satMul(2, c.hash(kv[0])), c.compare(kv[1], depth-1)))
				if c.over {
					return costCap
				}
			}
			return u
		})
	case *sl.Set:
		return c.memoized(costKey{unsafe.Pointer(v), 0, depth}, v.Len(), func() uint64 {
			u := uint64(elemUnits)
			for x := range v.Elements() {
				u = satAdd(u, satMul(2, c.hash(x)))
				if c.over {
					return costCap
				}
			}
			return u
		})
	case *starlarkstruct.Struct:
		return c.memoized(costKey{unsafe.Pointer(v), 0, depth}, len(v.AttrNames()), func() uint64 {
			u := uint64(elemUnits)
			for name, x := range v.Entries() {
				u = satAdd(u, satAdd(uint64(len(name)), c.compare(x, depth-1)))
				if c.over {
					return costCap
				}
			}
			return u
		})
	}
	return elemUnits
}

func (c *coster) elems(n int, at func(int) sl.Value, depth int) uint64 {
	u := uint64(elemUnits)
	for i := range n {
		u = satAdd(u, compareUnits+c.compare(at(i), depth-1))
		if c.over {
			return costCap
		}
	}
	return u
}

// hash bounds, in units, what hashing v (or comparing it with a key of the
// same hash) does. Only strings, bytes, numbers, tuples and structs hash
// to more than a constant, and those nest at most maxNesting deep (see
// nesting.go).
func (c *coster) hash(v sl.Value) uint64 {
	switch v := v.(type) {
	case sl.String:
		return elemUnits + uint64(len(v))
	case sl.Bytes:
		return elemUnits + uint64(len(v))
	case sl.Int:
		return elemUnits + uint64(intBits(v)/8)
	case sl.Tuple:
		if len(v) == 0 {
			return elemUnits
		}
		return c.memoized(costKey{unsafe.Pointer(unsafe.SliceData(v)), len(v), -1}, len(v), func() uint64 {
			u := uint64(elemUnits)
			for _, x := range v {
				u = satAdd(u, c.hash(x))
				if c.over {
					return costCap
				}
			}
			return u
		})
	case *starlarkstruct.Struct:
		return c.memoized(costKey{unsafe.Pointer(v), 0, -1}, len(v.AttrNames()), func() uint64 {
			u := uint64(elemUnits)
			for name, x := range v.Entries() {
				u = satAdd(u, satAdd(uint64(len(name)), c.hash(x)))
				if c.over {
					return costCap
				}
			}
			return u
		})
	}
	return elemUnits
}

// charge charges the thread for u units of the operation's work and for
// the measuring, refusing the operation when that is more than the call
// has left (or the measuring ran out first).
func (c *coster) charge(thread *sl.Thread, st *callState, u uint64, what func() string) error {
	if c.over {
		u = costCap
	}
	return st.chargeFor(thread, satAdd(u, c.work)/unitsPerStep, what)
}

// container reports whether v is compared element by element.
func container(v sl.Value) bool {
	switch v.(type) {
	case *sl.List, sl.Tuple, *sl.Dict, *sl.Set, *starlarkstruct.Struct:
		return true
	}
	return false
}

// pair bounds, in units, what comparing x with y (of the same type) by op
// does.
func (c *coster) pair(op syntax.Token, x, y sl.Value) uint64 {
	if sl.Len(x) != sl.Len(y) && (op == syntax.EQL || op == syntax.NEQ) {
		switch x.(type) {
		case *sl.List, sl.Tuple, *sl.Dict, *sl.Set:
			return 0 // told apart by their lengths
		}
	}
	switch x.(type) {
	case *sl.Dict:
		// x's keys are looked up in y.
		return c.compare(x, sl.CompareLimit)
	case *sl.Set:
		return satAdd(c.compare(x, sl.CompareLimit), c.compare(y, sl.CompareLimit))
	}
	return min(c.compare(x, sl.CompareLimit), c.compare(y, sl.CompareLimit))
}

// chargeCompare charges for x op y before it runs.
func chargeCompare(thread *sl.Thread, op syntax.Token, x, y sl.Value, what string) error {
	switch x := x.(type) {
	case sl.String:
		if y, ok := y.(sl.String); ok && min(len(x), len(y)) >= bigCompare {
			return chargeScan(thread, min(len(x), len(y)), what)
		}
		return nil
	case sl.Bytes:
		if y, ok := y.(sl.Bytes); ok && min(len(x), len(y)) >= bigCompare {
			return chargeScan(thread, min(len(x), len(y)), what)
		}
		return nil
	}
	if !container(x) || x.Type() != y.Type() {
		return nil
	}
	st, err := stateOf(thread)
	if err != nil {
		return err
	}
	c := newCoster(st, thread)
	u := c.pair(op, x, y)
	return c.charge(thread, st, u, func() string { return fmt.Sprintf("comparing two values of type %s (%s)", x.Type(), what) })
}

// chargeScan charges for reading n bytes once.
func chargeScan(thread *sl.Thread, n int, what string) error {
	st, err := stateOf(thread)
	if err != nil {
		return err
	}
	return st.chargeFor(thread, scanCost(n), func() string { return fmt.Sprintf("%s over %d bytes", what, n) })
}

// searchUnits bounds, in units, what looking for x among n elements costs,
// each compared with it for equality until one is found.
func (c *coster) search(x sl.Value, n int, at func(int) sl.Value) uint64 {
	u := satMul(uint64(n), elemUnits)
	for i := range n {
		e := at(i)
		switch x := x.(type) {
		case sl.String:
			// Strings of different lengths differ at once.
			if e, ok := e.(sl.String); ok && len(e) == len(x) && len(x) >= bigCompare {
				u = satAdd(u, uint64(len(x)))
			}
			continue
		case sl.Bytes:
			if e, ok := e.(sl.Bytes); ok && len(e) == len(x) && len(x) >= bigCompare {
				u = satAdd(u, uint64(len(x)))
			}
			continue
		}
		if !container(x) || e.Type() != x.Type() {
			continue
		}
		u = satAdd(u, c.pair(syntax.EQL, x, e))
		if c.over {
			return costCap
		}
	}
	return u
}

// chargeSearch charges for looking for x in y, a list or tuple, before
// it is looked for.
func chargeSearch(thread *sl.Thread, x sl.Value, y sl.Indexable, what string) error {
	st, err := stateOf(thread)
	if err != nil {
		return err
	}
	n := y.Len()
	c := newCoster(st, thread)
	u := c.search(x, n, y.Index)
	return c.charge(thread, st, u, func() string { return fmt.Sprintf("%s over %d elements", what, n) })
}

// chargeHash charges for hashing x (a lookup in a dict or set) before it
// is hashed, when that costs more than the step that asks.
func chargeHash(thread *sl.Thread, x sl.Value, what string) error {
	switch x := x.(type) {
	case sl.String:
		if len(x) < bigCompare {
			return nil
		}
	case sl.Bytes:
		if len(x) < bigCompare {
			return nil
		}
	case sl.Tuple, *starlarkstruct.Struct:
	default:
		return nil
	}
	st, err := stateOf(thread)
	if err != nil {
		return err
	}
	c := newCoster(st, thread)
	u := satMul(2, c.hash(x))
	return c.charge(thread, st, u, func() string { return what + " hashing a " + x.Type() })
}

// elementsOf calls f with each element of v when v is a list, tuple, set
// or dict (its keys) and reports whether it was; it stops when f returns
// false.
func elementsOf(v sl.Value, f func(sl.Value) bool) bool {
	switch v := v.(type) {
	case sl.Indexable:
		if _, ok := v.(sl.String); ok {
			return false
		}
		if _, ok := v.(sl.Bytes); ok {
			return false
		}
		for i := range v.Len() {
			if !f(v.Index(i)) {
				break
			}
		}
		return true
	case *sl.Set:
		for x := range v.Elements() {
			if !f(x) {
				break
			}
		}
		return true
	case *sl.Dict:
		for _, kv := range v.Items() {
			if !f(kv[0]) {
				break
			}
		}
		return true
	}
	return false
}

// chargeHashing charges for hashing every element of vs into a set or
// dict (pairs: each element is a key and value pair, as dict() and
// dict.update take them), before they are.
func chargeHashing(thread *sl.Thread, vs sl.Tuple, pairs bool, what string) error {
	st, err := stateOf(thread)
	if err != nil {
		return err
	}
	c := newCoster(st, thread)
	var u uint64
	n := 0
	for _, v := range vs {
		_, mapping := v.(*sl.Dict) // its keys are the keys
		elementsOf(v, func(e sl.Value) bool {
			n++
			if pairs && !mapping {
				if p, ok := e.(sl.Indexable); ok && p.Len() == 2 {
					e = p.Index(0)
				}
			}
			u = satAdd(u, satAdd(insertUnits, satMul(2, c.hash(e))))
			return !c.over
		})
		if c.over {
			break
		}
	}
	return c.charge(thread, st, u, func() string { return fmt.Sprintf("%s hashing %d elements", what, n) })
}

// ordering tracks the two dearest of the values an ordering compares: a
// comparison of two values costs at most the smaller of their bounds, so
// no comparison among them costs more than the second dearest.
type ordering struct {
	first, second uint64
	n             int
}

func (o *ordering) add(u uint64) {
	o.n++
	switch {
	case u > o.first:
		o.first, o.second = u, o.first
	case u > o.second:
		o.second = u
	}
}

// perComparison is what one comparison among the values may cost.
func (o *ordering) perComparison() uint64 { return max(o.second, compareUnits) }

// sortUnits bounds a sort of the values: n log n comparisons.
func (o *ordering) sortUnits() uint64 {
	if o.n < 2 {
		return 0
	}
	return satMul(satMul(uint64(o.n), uint64(bits.Len(uint(o.n)))), o.perComparison())
}

// scanUnits bounds min or max of the values: n - 1 comparisons.
func (o *ordering) scanUnits() uint64 {
	if o.n < 2 {
		return 0
	}
	return satMul(uint64(o.n-1), o.perComparison())
}

// compareBuiltin is $== and the other comparisons, which x == y and so on
// are rewritten to: charged for what comparing x with y will walk.
func compareBuiltin(op syntax.Token) func(*sl.Thread, *sl.Builtin, sl.Tuple, []sl.Tuple) (sl.Value, error) {
	return func(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
		if err := internalArgs(op.String(), args, kwargs, 2); err != nil {
			return nil, err
		}
		if err := chargeCompare(thread, op, args[0], args[1], op.String()); err != nil {
			return nil, err
		}
		ok, err := sl.Compare(op, args[0], args[1])
		if err != nil {
			return nil, err
		}
		return sl.Bool(ok), nil
	}
}

// chargeOrdering charges sorted, min and max for their comparisons before
// they run, and returns the keyword arguments to call them with. Without
// a key the values themselves are compared, and measured first. A key
// function's results are measured as it returns them, through a wrapper
// put in its place; once the last has been returned, before any is
// compared, they are measured again as they then are, since a key
// function may change what it returned before.
func chargeOrdering(thread *sl.Thread, name string, args sl.Tuple, kwargs []sl.Tuple) ([]sl.Tuple, error) {
	if len(args) == 0 {
		return kwargs, nil
	}
	st, err := stateOf(thread)
	if err != nil {
		return nil, err
	}
	units := (*ordering).scanUnits
	if name == "sorted" {
		units = (*ordering).sortUnits
	}
	var values sl.Value = args
	if name == "sorted" || len(args) == 1 {
		values = args[0]
	}
	what := func() string { return fmt.Sprintf("%s of %d elements", name, max(sl.Len(values), 0)) }
	for i, kv := range kwargs {
		if k, _ := sl.AsString(kv[0]); k != "key" || kv[1] == sl.None {
			continue
		}
		key, ok := kv[1].(sl.Callable)
		if !ok {
			return kwargs, nil // upstream says what is wrong
		}
		n := sl.Len(values)
		var keys []sl.Value
		var o ordering
		var charged uint64 // steps
		pay := func(c *coster, u uint64) error {
			if c.over {
				return c.charge(thread, st, 0, what)
			}
			need := satAdd(u, c.work) / unitsPerStep
			if need <= charged {
				return nil
			}
			err := st.chargeFor(thread, need-charged, what)
			charged = need
			return err
		}
		c := newCoster(st, thread)
		wrapped := sl.NewBuiltin(key.Name(), func(thread *sl.Thread, _ *sl.Builtin, a sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
			r, err := sl.Call(thread, key, a, kw)
			if err != nil {
				return nil, err
			}
			keys = append(keys, r)
			if n >= 0 && len(keys) == n {
				// The last: all of them as they are now.
				c, o = newCoster(st, thread), ordering{}
				for _, k := range keys {
					o.add(c.compare(k, sl.CompareLimit))
				}
				return r, pay(c, units(&o))
			}
			o.add(c.compare(r, sl.CompareLimit))
			return r, pay(c, units(&o))
		})
		out := append([]sl.Tuple(nil), kwargs...)
		out[i] = sl.Tuple{kv[0], wrapped}
		return out, nil
	}
	c := newCoster(st, thread)
	var o ordering
	elementsOf(values, func(e sl.Value) bool {
		o.add(c.compare(e, sl.CompareLimit))
		return !c.over
	})
	return kwargs, c.charge(thread, st, units(&o), what)
}

// intWords is how many machine words x takes.
func intWords(x sl.Int) uint64 { return uint64(intBits(x))/64 + 1 }

// chargeIntOp charges x op y on two integers for the words it multiplies,
// divides or converts: quadratic at worst, and a few steps for a product
// of integers of a few hundred thousand bits that the memory limit lets
// through would otherwise take tens of milliseconds.
func chargeIntOp(thread *sl.Thread, op syntax.Token, x, y sl.Int) error {
	wx, wy := intWords(x), intWords(y)
	if wx == 1 && wy == 1 {
		return nil
	}
	var u uint64
	switch op {
	case syntax.STAR:
		u = satMul(wx, wy)
	case syntax.SLASHSLASH, syntax.PERCENT:
		if wx < wy {
			return nil
		}
		u = satMul(wx-wy+1, wy)
	default:
		return nil
	}
	if u < intWordsPerStep {
		return nil
	}
	st, err := stateOf(thread)
	if err != nil {
		return err
	}
	return st.chargeFor(thread, u/intWordsPerStep, func() string {
		return fmt.Sprintf("%s of integers of %d and %d bits", op, intBits(x), intBits(y))
	})
}

// intWordsPerStep is how many word products of an integer operation a
// step pays for.
const intWordsPerStep = 16

// intDecimalUnits is what writing x in decimal costs, in units: the
// conversion divides it down recursively, quadratic at worst.
func intDecimalUnits(x sl.Int) uint64 {
	if _, ok := x.Int64(); ok {
		return 0
	}
	w := intWords(x)
	return satMul(satMul(w, w), unitsPerStep/intWordsPerStep)
}

// floorDivBuiltin is $//, which x // y is rewritten to.
func floorDivBuiltin(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	if err := internalArgs("//", args, kwargs, 2); err != nil {
		return nil, err
	}
	if x, ok := args[0].(sl.Int); ok {
		if y, ok := args[1].(sl.Int); ok {
			if err := chargeIntOp(thread, syntax.SLASHSLASH, x, y); err != nil {
				return nil, err
			}
		}
	}
	return sl.Binary(syntax.SLASHSLASH, args[0], args[1])
}
