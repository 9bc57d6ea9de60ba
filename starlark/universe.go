package starlark

import (
	"fmt"
	"strings"

	sl "go.starlark.net/starlark"
)

// universe returns the overrides of universal functions that materialise,
// iterate or stringify their arguments.
func universe() sl.StringDict {
	up := func(name string) *sl.Builtin { return sl.Universe[name].(*sl.Builtin) }
	iterating := func(name string, per uint64) *sl.Builtin {
		orig := up(name)
		return sl.NewBuiltin(name, func(thread *sl.Thread, _ *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			var seqs sl.Tuple
			for _, a := range args {
				if _, ok := a.(sl.String); !ok {
					seqs = append(seqs, a)
				}
			}
			guard := guardIterables
			if name == "zip" {
				guard = func(thread *sl.Thread, seqs sl.Tuple, _ uint64, _ string) error { return guardZip(thread, seqs) }
			}
			if err := guard(thread, seqs, per, name); err != nil {
				return nil, err
			}
			switch name {
			case "sorted", "min", "max":
				var err error
				if kwargs, err = chargeOrdering(thread, name, args, kwargs); err != nil {
					return nil, err
				}
			case "set":
				if err := chargeHashing(thread, seqs, false, name); err != nil {
					return nil, err
				}
			case "dict":
				if err := chargeHashing(thread, seqs, true, name); err != nil {
					return nil, err
				}
			}
			r, err := orig.CallInternal(thread, args, kwargs)
			if err != nil {
				return nil, err
			}
			switch name {
			case "tuple", "zip", "enumerate":
				// New tuples of what they were given.
				return r, checkNestedElems(thread, r, name)
			}
			return r, nil
		})
	}
	stringifying := func(name string) *sl.Builtin {
		orig := up(name)
		return sl.NewBuiltin(name, func(thread *sl.Thread, _ *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			st, err := stateOf(thread)
			if err != nil {
				return nil, err
			}
			z := paidBy(st, thread)
			var est uint64
			for _, a := range args {
				if name == "str" {
					if _, ok := a.(sl.String); ok {
						continue
					}
				}
				est = z.add(est, z.size(a))
			}
			if err := z.charge(thread, st, est, name); err != nil {
				return nil, err
			}
			if err := st.allow(est, name); err != nil {
				return nil, err
			}
			return orig.CallInternal(thread, args, kwargs)
		})
	}
	getattr := up("getattr")
	intFn := up("int")
	return sl.StringDict{
		"list":      iterating("list", sizeSlot),
		"tuple":     iterating("tuple", sizeSlot),
		"reversed":  iterating("reversed", sizeSlot),
		"sorted":    iterating("sorted", sizeSlot),
		"bytes":     iterating("bytes", 1),
		"set":       iterating("set", sizeEntry),
		"dict":      iterating("dict", sizeEntry),
		"enumerate": iterating("enumerate", sizeEntry),
		"zip":       iterating("zip", sizeEntry),
		"min":       iterating("min", 0),
		"max":       iterating("max", 0),
		"any":       iterating("any", 0),
		"all":       iterating("all", 0),
		"str":       stringifying("str"),
		"repr":      stringifying("repr"),
		"print":     stringifying("print"),
		"fail":      stringifying("fail"),
		"getattr": sl.NewBuiltin("getattr", func(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			if len(args) == 2 && len(kwargs) == 0 {
				if name, ok := sl.AsString(args[1]); ok && guardedAttrs[name] {
					return guardedAttr(args[0], name)
				}
			}
			return getattr.CallInternal(thread, args, kwargs)
		}),
		"int": sl.NewBuiltin("int", func(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			if len(args) > 0 {
				if s, ok := args[0].(sl.String); ok && len(strings.TrimSpace(string(s))) > maxIntDigits {
					return nil, fmt.Errorf("int: a string of %d characters exceeds the limit of %d digits", len(s), maxIntDigits)
				}
			}
			return intFn.CallInternal(thread, args, kwargs)
		}),
	}
}
