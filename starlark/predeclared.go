package starlark

import (
	"fmt"

	starlarkjson "go.starlark.net/lib/json"
	starlarkmath "go.starlark.net/lib/math"
	sl "go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/starlark/re"
)

// predeclared returns the environment every module is executed in: the
// hook API, the json, math and re modules, struct, the guarded universal
// functions and the internal names the rewritten syntax tree calls. All of
// it is stateless (per-execution state travels on the thread), so one
// environment serves every module and every call of one Load.
func predeclared() sl.StringDict {
	env := universe()
	api := sl.StringDict{
		"hook":    sl.NewBuiltin("hook", hookBuiltin),
		"ok":      resultBuiltin("ok", graph.StatusPass),
		"block":   resultBuiltin("block", graph.StatusBlock),
		"wait":    resultBuiltin("wait", graph.StatusWait),
		"skip":    resultBuiltin("skip", graph.StatusSkip),
		"message": sl.NewBuiltin("message", messageBuiltin),
		"json":    jsonModule(),
		"math":    starlarkmath.Module,
		"re":      re.Module,
		"struct": sl.NewBuiltin("struct", func(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			s, err := starlarkstruct.Make(thread, b, args, kwargs)
			if err != nil {
				return nil, err
			}
			return s, checkNested(thread, s, "struct")
		}),

		nameAdd:      sl.NewBuiltin("+", addBuiltin),
		nameMul:      sl.NewBuiltin("*", mulBuiltin),
		nameMod:      sl.NewBuiltin("%", modBuiltin),
		nameCount:    sl.NewBuiltin("*=", countBuiltin),
		namePlus:     sl.NewBuiltin("+=", plusBuiltin),
		nameAttr:     sl.NewBuiltin(".", attrBuiltin),
		nameTuple:    sl.NewBuiltin("tuple", tupleBuiltin),
		nameIn:       sl.NewBuiltin("in", inBuiltin),
		nameSearched: sl.NewBuiltin("searched", searchedBuiltin),
		nameFloorDiv: sl.NewBuiltin("//", floorDivBuiltin),
	}
	for op, name := range compareNames {
		api[name] = sl.NewBuiltin(op.String(), compareBuiltin(op))
	}
	for name, v := range api {
		env[name] = v
	}
	env.Freeze()
	return env
}

// jsonModule is starlark-go's json module with each function checked for
// the size of what it would build.
func jsonModule() *starlarkstruct.Module {
	orig := starlarkjson.Module.Members
	upstream := func(name string) *sl.Builtin { return orig[name].(*sl.Builtin) }
	encode, decode, indent := upstream("encode"), upstream("decode"), upstream("indent")
	state := func(thread *sl.Thread) *callState {
		st, _ := stateOf(thread)
		return st
	}
	encodeCheck := func(thread *sl.Thread, b *sl.Builtin, args sl.Tuple) error {
		st := state(thread)
		if st == nil || len(args) == 0 {
			return nil
		}
		z := paidBy(st, thread)
		size := z.size(args[0])
		if err := z.charge(thread, st, size, b.Name()); err != nil {
			return err
		}
		return st.allow(size, b.Name())
	}
	indentCheck := func(thread *sl.Thread, b *sl.Builtin, s string, kwargs []sl.Tuple) error {
		st := state(thread)
		if st == nil {
			return nil
		}
		prefix, ind := "", "\t"
		for _, kv := range kwargs {
			k, _ := sl.AsString(kv[0])
			v, _ := sl.AsString(kv[1])
			switch k {
			case "prefix":
				prefix = v
			case "indent":
				ind = v
			}
		}
		size, depth := indentSize(s, len(prefix), len(ind), st.limits.Heap)
		if depth > maxNesting {
			return errTooDeep(b.Name())
		}
		// Scanning the text, and writing it out indented.
		if err := st.chargeFor(thread, satMul(satAdd(uint64(len(s)), size), stringifyUnits)/unitsPerStep, func() string { return b.Name() }); err != nil {
			return err
		}
		return st.allow(size, b.Name())
	}
	return &starlarkstruct.Module{Name: "json", Members: sl.StringDict{
		"encode": sl.NewBuiltin("json.encode", func(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			if err := encodeCheck(thread, b, args); err != nil {
				return nil, err
			}
			return encode.CallInternal(thread, args, kwargs)
		}),
		"decode": sl.NewBuiltin("json.decode", func(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			if st := state(thread); st != nil && len(args) > 0 {
				if s, ok := sl.AsString(args[0]); ok {
					sh := shapeOfJSON(s)
					// The decoder recurses once per level of the document.
					if sh.depth > maxNesting {
						return nil, errTooDeep(b.Name())
					}
					// Parsing a long integer is quadratic in its digits:
					// refused past what int() takes.
					if n := sh.longestNumber; n > maxIntDigits {
						return nil, fmt.Errorf("%s: a number of %d characters exceeds the limit of %d digits", b.Name(), n, maxIntDigits)
					}
					// Decoding builds a value for every few bytes.
					if err := st.chargeFor(thread, uint64(len(s))/decodeBytesPerStep, func() string { return fmt.Sprintf("%s of %d bytes", b.Name(), len(s)) }); err != nil {
						return nil, err
					}
					if err := st.allow(uint64(len(s))*sizeSlot, b.Name()); err != nil {
						return nil, err
					}
				}
			}
			return decode.CallInternal(thread, args, kwargs)
		}),
		"indent": sl.NewBuiltin("json.indent", func(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			if len(args) > 0 {
				if s, ok := sl.AsString(args[0]); ok {
					if err := indentCheck(thread, b, s, kwargs); err != nil {
						return nil, err
					}
				}
			}
			return indent.CallInternal(thread, args, kwargs)
		}),
		"encode_indent": sl.NewBuiltin("json.encode_indent", func(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			if err := encodeCheck(thread, b, args); err != nil {
				return nil, err
			}
			s, err := encode.CallInternal(thread, args, nil)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", b.Name(), trimPrefix(err, "json.encode: "))
			}
			if err := indentCheck(thread, b, string(s.(sl.String)), kwargs); err != nil {
				return nil, err
			}
			return indent.CallInternal(thread, sl.Tuple{s}, kwargs)
		}),
	}}
}

func trimPrefix(err error, prefix string) string {
	msg := err.Error()
	if len(msg) >= len(prefix) && msg[:len(prefix)] == prefix {
		return msg[len(prefix):]
	}
	return msg
}

// decodeBytesPerStep is how many bytes of JSON text json.decode is charged
// a step for: it builds a value (a dict, a list, a string) every few
// bytes, each an allocation or several (BenchmarkChargedStep).
const decodeBytesPerStep = 1

// jsonShape is what one pass over a JSON text tells about it, outside its
// strings: how many lines json.indent would break it into, how deeply it
// nests its arrays and objects, and its longest number (a run of digits,
// signs, points and exponents).
type jsonShape struct {
	lines, depth, longestNumber int
}

func shapeOfJSON(s string) jsonShape {
	sh := jsonShape{lines: 1}
	depth, run := 0, 0
	inString, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			run++
			sh.longestNumber = max(sh.longestNumber, run)
			continue
		}
		run = 0
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
			sh.depth = max(sh.depth, depth)
			sh.lines++
		case ']', '}':
			depth--
			sh.lines++
		case ',':
			sh.lines++
		}
	}
	return sh
}

// indentSize bounds the length of json.indent's output (every structural
// character may start a line indented to the document's greatest depth)
// and says how deep that is.
func indentSize(s string, prefix, indent int, limit uint64) (size uint64, depth int) {
	z := newSizer(limit)
	sh := shapeOfJSON(s)
	perLine := z.add(uint64(prefix)+1, z.mul(uint64(indent), uint64(sh.depth)))
	return z.add(uint64(len(s)), z.mul(uint64(sh.lines), perLine)), sh.depth
}
