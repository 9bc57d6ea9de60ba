package starlark

import (
	"unsafe"

	sl "go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// Freezing a value (which a module's globals are, once it has run) walks
// everything it holds, recursively, on the Go stack: a list nested a few
// million deep would take the process down with it. Before a module's
// globals and hooks are frozen, how deeply they nest is measured without
// recursing, and past maxNesting the module is refused.

// height is how deeply v nests, measured with an explicit stack rather
// than the Go one, each container once; it stops counting past maxNesting.
func height(v sl.Value) int {
	type frame struct {
		key      unsafe.Pointer
		children []sl.Value
		next     int
		most     int
	}
	memo := map[unsafe.Pointer]int{} // -1 while on the stack: a cycle adds nothing
	var stack []*frame
	push := func(v sl.Value) (int, bool) {
		key, children := containerOf(v)
		if key == nil {
			return 0, true
		}
		if h, ok := memo[key]; ok {
			return max(h, 0), true
		}
		memo[key] = -1
		stack = append(stack, &frame{key: key, children: children})
		return 0, false
	}
	result := 0
	if h, done := push(v); done {
		return h
	}
	for len(stack) > 0 {
		top := stack[len(stack)-1]
		if len(stack) > maxNesting {
			return maxNesting + 1
		}
		if top.next < len(top.children) {
			child := top.children[top.next]
			top.next++
			if h, done := push(child); done {
				top.most = max(top.most, h)
			}
			continue
		}
		h := top.most + 1
		memo[top.key] = h
		stack = stack[:len(stack)-1]
		if len(stack) > 0 {
			parent := stack[len(stack)-1]
			parent.most = max(parent.most, h)
		} else {
			result = h
		}
	}
	return result
}

// containerOf is v's identity and what it holds, when freezing v walks
// into anything.
func containerOf(v sl.Value) (unsafe.Pointer, []sl.Value) {
	switch v := v.(type) {
	case *sl.List:
		out := make([]sl.Value, v.Len())
		for i := range out {
			out[i] = v.Index(i)
		}
		return unsafe.Pointer(v), out
	case sl.Tuple:
		if len(v) == 0 {
			return nil, nil
		}
		return unsafe.Pointer(unsafe.SliceData(v)), v
	case *sl.Dict:
		var out []sl.Value
		for _, kv := range v.Items() {
			out = append(out, kv[0], kv[1])
		}
		return unsafe.Pointer(v), out
	case *sl.Set:
		var out []sl.Value
		for x := range v.Elements() {
			out = append(out, x)
		}
		return unsafe.Pointer(v), out
	case *starlarkstruct.Struct:
		var out []sl.Value
		for _, x := range v.Entries() {
			out = append(out, x)
		}
		return unsafe.Pointer(v), out
	case *sl.Function:
		var out []sl.Value
		for i := range v.NumParams() {
			if d := v.ParamDefault(i); d != nil {
				out = append(out, d)
			}
		}
		for i := range v.NumFreeVars() {
			_, x := v.FreeVar(i)
			if x != nil {
				out = append(out, x)
			}
		}
		return unsafe.Pointer(v), out
	}
	return nil, nil
}
