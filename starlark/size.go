package starlark

import (
	"fmt"
	"math/bits"
	"unicode"
	"unicode/utf8"
	"unsafe"

	sl "go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// maxNesting bounds how deeply a value or a JSON document may nest for the
// operations that walk it recursively in Go (str, repr, print, formatting,
// json.encode, json.decode, json.indent): past it they are refused, where
// Go's stack would otherwise grow with the depth and, at a million levels,
// end the process. Python's own recursion limit is about the same.
const maxNesting = 1000

// errTooDeep is what a refused nesting says.
func errTooDeep(what string) error {
	return fmt.Errorf("%s: refused a value nested more than %d deep", what, maxNesting)
}

// sizer estimates the length of a value's str() without building it, and
// whether it nests past maxNesting. A string is counted as repr and
// json.encode would write it at worst (every escape at its longest), so
// an estimate is never short of what either builds. Each container is
// measured once (by identity), so a structure that refers to the same
// large value many times is measured in time proportional to its distinct
// parts while its estimate still counts every reference. Every sum
// saturates at cap.
//
// Measuring is itself work: each element visited costs elemUnits and each
// string byte quoted a unit (see cost.go), and a long string is quoted
// once however often it is referred to. A sizer lent a call's budget
// (paidBy) stops once it has cost what the call has left, so that a
// format's estimate cannot walk for longer than the call may run.
type sizer struct {
	cap  uint64
	memo map[unsafe.Pointer]measured
	// deep is set once a value nests past maxNesting; its estimate is
	// then cap, and the caller refuses the operation as too deep.
	deep bool
	// strs remembers the long strings quoted, by their bytes' address
	// and length.
	strs map[strKey]uint64
	// work is what measuring has cost, in units; past limit it stops,
	// and over is set.
	work, limit uint64
	over        bool
}

type strKey struct {
	p *byte
	n int
}

type measured struct {
	size   uint64
	height int // how deeply the container nests, itself included
}

func newSizer(limit uint64) *sizer {
	return &sizer{cap: limit + 1, memo: map[unsafe.Pointer]measured{}, limit: costCap}
}

// paidBy is a sizer for st's call on thread: it may spend what the call
// has left of its steps.
func paidBy(st *callState, thread *sl.Thread) *sizer {
	z := newSizer(st.limits.Heap)
	if thread != nil {
		var left uint64
		if thread.Steps < st.limits.Steps {
			left = st.limits.Steps - thread.Steps
		}
		z.limit = satMul(left, unitsPerStep)
	}
	return z
}

// spend accounts for u units of measuring; false once it has cost more
// than it may.
func (z *sizer) spend(u uint64) bool {
	z.work = satAdd(z.work, u)
	if z.work > z.limit {
		z.over = true
	}
	return !z.over
}

// quoted is quotedSize(s), remembered for a long s.
func (z *sizer) quoted(s string) uint64 {
	if len(s) < bigCompare {
		z.spend(uint64(len(s)))
		return quotedSize(s)
	}
	k := strKey{unsafe.StringData(s), len(s)}
	if n, ok := z.strs[k]; ok {
		return n
	}
	if !z.spend(uint64(len(s))) {
		return z.cap
	}
	if z.strs == nil {
		z.strs = map[strKey]uint64{}
	}
	n := quotedSize(s)
	z.strs[k] = n
	return n
}

// charge charges the call for the measuring and for writing est bytes,
// refusing the operation when that is more than it has left, or when the
// value nests too deep.
func (z *sizer) charge(thread *sl.Thread, st *callState, est uint64, what string) error {
	return z.chargeAt(thread, st, est, stringifyUnits, what)
}

// chargeAt is charge at perByte units a byte written.
func (z *sizer) chargeAt(thread *sl.Thread, st *callState, est, perByte uint64, what string) error {
	if z.deep {
		return errTooDeep(what)
	}
	if z.over {
		return st.chargeFor(thread, costCap/unitsPerStep, func() string { return what + " measuring its arguments" })
	}
	// What would not fit in memory is refused as such, by the caller.
	if est >= st.limits.Heap {
		est = 0
	}
	return st.chargeFor(thread, satAdd(z.work, satMul(est, perByte))/unitsPerStep, func() string { return what })
}

func (z *sizer) add(a, b uint64) uint64 {
	if s := a + b; s >= a && s < z.cap {
		return s
	}
	return z.cap
}

func (z *sizer) mul(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 || lo >= z.cap {
		return z.cap
	}
	return lo
}

// inProgress marks a container being measured, so a cycle (printed "[...]")
// ends the recursion.
const inProgress = -1

// size estimates len(str(v)).
func (z *sizer) size(v sl.Value) uint64 {
	n, _ := z.measure(v, 0)
	return n
}

// measure is size at nesting depth, and v's height.
func (z *sizer) measure(v sl.Value, depth int) (uint64, int) {
	switch v := v.(type) {
	case sl.String:
		return z.add(z.quoted(string(v)), 2), 0
	case sl.Bytes:
		return z.add(z.quoted(string(v)), 3), 0
	case sl.Int:
		if _, ok := v.Int64(); ok {
			return 20, 0
		}
		z.spend(intDecimalUnits(v))
		return uint64(v.BigInt().BitLen()/3 + 2), 0
	case sl.Float:
		return 32, 0
	case sl.Bool, sl.NoneType:
		return 5, 0
	case *sl.List:
		return z.container(unsafe.Pointer(v), depth, func() (uint64, int) { return z.elems(v.Len(), v.Index, depth) })
	case sl.Tuple:
		if len(v) == 0 {
			return 2, 0
		}
		return z.container(unsafe.Pointer(unsafe.SliceData(v)), depth, func() (uint64, int) { return z.elems(len(v), v.Index, depth) })
	case *sl.Dict:
		return z.container(unsafe.Pointer(v), depth, func() (uint64, int) {
			n, h := uint64(2), 0
			for _, kv := range v.Items() {
				if !z.spend(elemUnits) {
					return z.cap, h
				}
				k, kh := z.measure(kv[0], depth+1)
				x, xh := z.measure(kv[1], depth+1)
				n, h = z.add(n, z.add(z.add(k, x), 4)), max(h, kh, xh)
				if n >= z.cap {
					break
				}
			}
			return n, h
		})
	case *sl.Set:
		return z.container(unsafe.Pointer(v), depth, func() (uint64, int) {
			n, h := uint64(5), 0
			for x := range v.Elements() {
				if !z.spend(elemUnits) {
					return z.cap, h
				}
				s, xh := z.measure(x, depth+1)
				n, h = z.add(n, z.add(s, 2)), max(h, xh)
				if n >= z.cap {
					break
				}
			}
			return n, h
		})
	case *starlarkstruct.Struct:
		return z.container(unsafe.Pointer(v), depth, func() (uint64, int) {
			n, h := z.measure(v.Constructor(), depth+1)
			for name, x := range v.Entries() {
				if !z.spend(elemUnits) {
					return z.cap, h
				}
				s, xh := z.measure(x, depth+1)
				n, h = z.add(n, z.add(s, uint64(len(name)+3))), max(h, xh)
				if n >= z.cap {
					break
				}
			}
			return n, h
		})
	}
	if s, ok := v.(stringSized); ok {
		return z.add(s.StringSize(), 0), 0
	}
	if n := sl.Len(v); n > 0 {
		return z.add(64, z.mul(uint64(n), 8)), 0
	}
	return 64, 0
}

// stringSized is a host value whose String writes out text of its own (a
// message's, a match's, a pattern's): it says how long that can be.
type stringSized interface {
	// StringSize is at least len(String()).
	StringSize() uint64
}

// container measures a container at depth once; its height is remembered
// with its size, so a container met again deeper down is still judged by
// how deep it then reaches.
func (z *sizer) container(key unsafe.Pointer, depth int, measure func() (uint64, int)) (uint64, int) {
	if depth >= maxNesting {
		z.deep = true
		return z.cap, 1
	}
	m, ok := z.memo[key]
	switch {
	case ok && m.height == inProgress:
		return 5, 0
	case ok:
		if depth+m.height > maxNesting {
			z.deep = true
		}
		return m.size, m.height
	}
	z.memo[key] = measured{height: inProgress}
	n, h := measure()
	z.memo[key] = measured{size: n, height: h + 1}
	return n, h + 1
}

func (z *sizer) elems(n int, at func(int) sl.Value, depth int) (uint64, int) {
	total, h := uint64(2), 0
	for i := range n {
		if !z.spend(elemUnits) {
			return z.cap, h
		}
		s, xh := z.measure(at(i), depth+1)
		total, h = z.add(total, z.add(s, 2)), max(h, xh)
		if total >= z.cap {
			break
		}
	}
	return total, h
}

// quotedSize is the longest a string's bytes can be once quoted: repr
// writes a control byte or a byte of broken UTF-8 as \xNN, JSON as
// \u00NN; a character that does not print may become \UNNNNNNNN; a quote
// or backslash takes a backslash. Plain text costs what it is.
func quotedSize(s string) uint64 {
	n := uint64(0)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c < 0x20 || c == 0x7f:
				n += 6
			case c == '"' || c == '\\' || c == '<' || c == '>' || c == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w == 1:
			n += 6
		case !unicode.IsPrint(r):
			n += 10
		default:
			n += uint64(w)
		}
		i += w
	}
	return n
}

// strSize estimates len(str(v)), saturating just above limit; deep reports
// a value nested past maxNesting.
func strSize(v sl.Value, limit uint64) (size uint64, deep bool) {
	z := newSizer(limit)
	return z.size(v), z.deep
}

// argUnits is an argument of a format measured: two steps, since the
// call that passes it copies it and the format walks it again.
const argUnits = 128

// largestArg is the largest str() estimate among the values a format may
// substitute: the elements of a tuple, the values of a mapping, or v.
func (z *sizer) largestArg(v sl.Value) uint64 {
	var most uint64
	switch v := v.(type) {
	case sl.Tuple:
		for _, x := range v {
			if !z.spend(argUnits) {
				return z.cap
			}
			most = max(most, z.size(x))
		}
	case *sl.Dict:
		for _, kv := range v.Items() {
			if !z.spend(argUnits) {
				return z.cap
			}
			most = max(most, z.size(kv[1]))
		}
	default:
		most = z.size(v)
	}
	return most
}
