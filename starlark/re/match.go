package re

import (
	"fmt"

	sl "go.starlark.net/starlark"
)

// matchValue is a match: group(), groups(), groupdict(), start(), end()
// and span(), with byte offsets as Starlark indexes strings.
type matchValue struct {
	s   string
	idx []int
	r   *regex
}

func (m *matchValue) String() string {
	return fmt.Sprintf("<re.match span=(%d, %d) match=%q>", m.idx[0], m.idx[1], m.s[m.idx[0]:m.idx[1]])
}

// StringSize bounds len(String()): %q writes a byte as at most ten.
func (m *matchValue) StringSize() uint64 { return 10*uint64(m.idx[1]-m.idx[0]) + 64 }

func (m *matchValue) Type() string          { return "re.match" }
func (m *matchValue) Freeze()               {}
func (m *matchValue) Truth() sl.Bool        { return sl.True }
func (m *matchValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: re.match") }
func (m *matchValue) AttrNames() []string {
	return []string{"end", "group", "groupdict", "groups", "span", "start", "string"}
}

func (m *matchValue) groupIndex(fn string, v sl.Value) (int, error) {
	switch v := v.(type) {
	case sl.String:
		if g := m.r.re.SubexpIndex(string(v)); g >= 0 {
			return g, nil
		}
		return 0, fmt.Errorf("%s: no group named %q", fn, string(v))
	case sl.Int:
		g, ok := v.Int64()
		if !ok || g < 0 || g > int64(m.r.re.NumSubexp()) {
			return 0, fmt.Errorf("%s: no group %s", fn, v)
		}
		return int(g), nil
	}
	return 0, fmt.Errorf("%s: group: got %s, want int or string", fn, v.Type())
}

func (m *matchValue) Attr(name string) (sl.Value, error) {
	var fn func(b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error)
	switch name {
	case "string":
		return sl.String(m.s), nil
	case "group":
		fn = func(b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			if len(kwargs) > 0 {
				return nil, fmt.Errorf("%s: unexpected keyword arguments", b.Name())
			}
			if len(args) == 0 {
				return group(m.s, m.idx, 0), nil
			}
			out := make(sl.Tuple, len(args))
			for i, a := range args {
				g, err := m.groupIndex(b.Name(), a)
				if err != nil {
					return nil, err
				}
				out[i] = group(m.s, m.idx, g)
			}
			if len(out) == 1 {
				return out[0], nil
			}
			return out, nil
		}
	case "groups":
		fn = func(b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			var def sl.Value = sl.None
			if err := sl.UnpackArgs(b.Name(), args, kwargs, "default?", &def); err != nil {
				return nil, err
			}
			out := make(sl.Tuple, m.r.re.NumSubexp())
			for g := range out {
				out[g] = group(m.s, m.idx, g+1)
				if out[g] == sl.None {
					out[g] = def
				}
			}
			return out, nil
		}
	case "groupdict":
		fn = func(b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			var def sl.Value = sl.None
			if err := sl.UnpackArgs(b.Name(), args, kwargs, "default?", &def); err != nil {
				return nil, err
			}
			d := sl.NewDict(0)
			for g, n := range m.r.re.SubexpNames() {
				if n == "" {
					continue
				}
				v := group(m.s, m.idx, g)
				if v == sl.None {
					v = def
				}
				_ = d.SetKey(sl.String(n), v)
			}
			return d, nil
		}
	case "start", "end", "span":
		fn = func(b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			var gv sl.Value = sl.MakeInt(0)
			if err := sl.UnpackArgs(b.Name(), args, kwargs, "group?", &gv); err != nil {
				return nil, err
			}
			g, err := m.groupIndex(b.Name(), gv)
			if err != nil {
				return nil, err
			}
			start, end := sl.MakeInt(m.idx[2*g]), sl.MakeInt(m.idx[2*g+1])
			switch name {
			case "start":
				return start, nil
			case "end":
				return end, nil
			}
			return sl.Tuple{start, end}, nil
		}
	default:
		return nil, nil
	}
	return sl.NewBuiltin(name, func(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
		return fn(b, args, kwargs)
	}).BindReceiver(m), nil
}
