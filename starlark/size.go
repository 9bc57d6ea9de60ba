package starlark

import (
	"math/bits"
	"unsafe"

	sl "go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// sizer estimates the length of a value's str() without building it. Each
// container is measured once (by identity), so a structure that refers to
// the same large value many times is measured in time proportional to its
// distinct parts while its estimate still counts every reference. Every sum
// saturates at cap.
type sizer struct {
	cap  uint64
	memo map[unsafe.Pointer]uint64
}

func newSizer(limit uint64) *sizer {
	return &sizer{cap: limit + 1, memo: map[unsafe.Pointer]uint64{}}
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
const inProgress = ^uint64(0)

func (z *sizer) container(key unsafe.Pointer, measure func() uint64) uint64 {
	if key == nil {
		return measure()
	}
	if n, ok := z.memo[key]; ok {
		if n == inProgress {
			return 5
		}
		return n
	}
	z.memo[key] = inProgress
	n := measure()
	z.memo[key] = n
	return n
}

func (z *sizer) size(v sl.Value) uint64 {
	switch v := v.(type) {
	case sl.String:
		return z.add(uint64(len(v)), 2)
	case sl.Bytes:
		return z.add(uint64(len(v)), 3)
	case sl.Int:
		if _, ok := v.Int64(); ok {
			return 20
		}
		return uint64(v.BigInt().BitLen()/3 + 2)
	case sl.Float:
		return 32
	case sl.Bool, sl.NoneType:
		return 5
	case *sl.List:
		return z.container(unsafe.Pointer(v), func() uint64 { return z.elems(v.Len(), v.Index) })
	case sl.Tuple:
		if len(v) == 0 {
			return 2
		}
		return z.container(unsafe.Pointer(unsafe.SliceData(v)), func() uint64 { return z.elems(len(v), v.Index) })
	case *sl.Dict:
		return z.container(unsafe.Pointer(v), func() uint64 {
			n := uint64(2)
			for _, kv := range v.Items() {
				n = z.add(n, z.add(z.add(z.size(kv[0]), z.size(kv[1])), 4))
				if n >= z.cap {
					break
				}
			}
			return n
		})
	case *sl.Set:
		return z.container(unsafe.Pointer(v), func() uint64 {
			n := uint64(5)
			for x := range v.Elements() {
				n = z.add(n, z.add(z.size(x), 2))
				if n >= z.cap {
					break
				}
			}
			return n
		})
	case *starlarkstruct.Struct:
		return z.container(unsafe.Pointer(v), func() uint64 {
			n := z.size(v.Constructor())
			for name, x := range v.Entries() {
				n = z.add(n, z.add(z.size(x), uint64(len(name)+3)))
				if n >= z.cap {
					break
				}
			}
			return n
		})
	}
	if n := sl.Len(v); n > 0 {
		return z.add(64, z.mul(uint64(n), 8))
	}
	return 64
}

func (z *sizer) elems(n int, at func(int) sl.Value) uint64 {
	total := uint64(2)
	for i := range n {
		total = z.add(total, z.add(z.size(at(i)), 2))
		if total >= z.cap {
			break
		}
	}
	return total
}

// strSize estimates len(str(v)), saturating just above limit.
func strSize(v sl.Value, limit uint64) uint64 { return newSizer(limit).size(v) }

// largestArg is the largest str() estimate among the values a format may
// substitute: the elements of a tuple, the values of a mapping, or v.
func (z *sizer) largestArg(v sl.Value) uint64 {
	var most uint64
	switch v := v.(type) {
	case sl.Tuple:
		for _, x := range v {
			most = max(most, z.size(x))
		}
	case *sl.Dict:
		for _, kv := range v.Items() {
			most = max(most, z.size(kv[1]))
		}
	default:
		most = z.size(v)
	}
	return most
}
