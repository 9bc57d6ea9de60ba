package starlark

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	sl "go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// The re module: regular expressions on Go's regexp, which is RE2 (linear
// time in the input; no backreferences, no lookaround). Its functions
// follow Python's re where RE2 allows: see doc.go.

// regex is a compiled pattern, the value re.compile returns. It is
// immutable and safe to share between threads.
type regex struct {
	pattern string
	re      *regexp.Regexp

	once              sync.Once
	anchored, entire  *regexp.Regexp
	anchorErr, fulErr error
}

var (
	_ sl.HasAttrs = (*regex)(nil)
	_ sl.HasAttrs = (*matchValue)(nil)
)

func compileRegex(fn, pattern string) (*regex, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", fn, err)
	}
	return &regex{pattern: pattern, re: re}, nil
}

// anchors compiles, once, the pattern anchored at the start (for match)
// and at both ends (for fullmatch).
func (r *regex) anchors() {
	r.once.Do(func() {
		r.anchored, r.anchorErr = regexp.Compile(`\A(?:` + r.pattern + `)`)
		r.entire, r.fulErr = regexp.Compile(`\A(?:` + r.pattern + `)\z`)
	})
}

func (r *regex) String() string        { return fmt.Sprintf("re.compile(%q)", r.pattern) }
func (r *regex) Type() string          { return "re.pattern" }
func (r *regex) Freeze()               {}
func (r *regex) Truth() sl.Bool        { return sl.True }
func (r *regex) Hash() (uint32, error) { return sl.String(r.pattern).Hash() }
func (r *regex) AttrNames() []string {
	return []string{"findall", "fullmatch", "groups", "match", "pattern", "search", "split", "sub"}
}

func (r *regex) Attr(name string) (sl.Value, error) {
	switch name {
	case "pattern":
		return sl.String(r.pattern), nil
	case "groups":
		return sl.MakeInt(r.re.NumSubexp()), nil
	}
	fn, ok := regexMethods[name]
	if !ok {
		return nil, nil
	}
	return sl.NewBuiltin(name, func(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
		return fn(thread, b.Name(), r, args, kwargs)
	}).BindReceiver(r), nil
}

type regexMethod func(thread *sl.Thread, fn string, r *regex, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error)

var regexMethods = map[string]regexMethod{
	"match":     finder("match"),
	"search":    finder("search"),
	"fullmatch": finder("fullmatch"),
	"findall":   reFindall,
	"sub":       reSub,
	"split":     reSplit,
}

// finder is match (anchored at the start), search (anywhere) or fullmatch
// (the whole string).
func finder(mode string) regexMethod {
	return func(thread *sl.Thread, fn string, r *regex, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
		return reFind(thread, fn, r, args, kwargs, mode)
	}
}

// reModule builds the re module value.
func reModule() *starlarkstruct.Module {
	members := sl.StringDict{
		"compile": sl.NewBuiltin("re.compile", func(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			var pattern string
			if err := sl.UnpackArgs(b.Name(), args, kwargs, "pattern", &pattern); err != nil {
				return nil, err
			}
			return compileRegex(b.Name(), pattern)
		}),
		"escape": sl.NewBuiltin("re.escape", func(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			var s string
			if err := sl.UnpackArgs(b.Name(), args, kwargs, "s", &s); err != nil {
				return nil, err
			}
			return sl.String(regexp.QuoteMeta(s)), nil
		}),
	}
	for name, method := range regexMethods {
		full := "re." + name
		members[name] = sl.NewBuiltin(full, func(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			if len(args) == 0 {
				return nil, fmt.Errorf("%s: missing argument pattern", full)
			}
			var r *regex
			switch p := args[0].(type) {
			case *regex:
				r = p
			case sl.String:
				var err error
				if r, err = compileRegex(full, string(p)); err != nil {
					return nil, err
				}
			default:
				return nil, fmt.Errorf("%s: pattern: got %s, want string", full, args[0].Type())
			}
			return method(thread, full, r, args[1:], kwargs)
		})
	}
	return &starlarkstruct.Module{Name: "re", Members: members}
}

// scan charges the thread for running a pattern over s.
func scan(thread *sl.Thread, fn, s string) (*callState, error) {
	st, err := stateOf(thread)
	if err != nil {
		return nil, err
	}
	return st, st.charge(thread, uint64(len(s))/64+1, fn)
}

// maxMatches is how many matches one call may collect before it is refused
// as a memory bomb.
func maxMatches(st *callState) int { return int(min(st.limits.Heap/128, 1<<30)) }

func allMatches(thread *sl.Thread, st *callState, fn string, r *regexp.Regexp, s string, n int) ([][]int, error) {
	limit := maxMatches(st)
	if n <= 0 || n > limit {
		n = limit + 1
	}
	ms := r.FindAllStringSubmatchIndex(s, n)
	if len(ms) > limit {
		return nil, st.refuse(limitMemory, "%s found more than %d matches", fn, limit)
	}
	return ms, st.charge(thread, uint64(len(ms)), fn)
}

func reFind(thread *sl.Thread, fn string, r *regex, args sl.Tuple, kwargs []sl.Tuple, mode string) (sl.Value, error) {
	var s string
	if err := sl.UnpackArgs(fn, args, kwargs, "string", &s); err != nil {
		return nil, err
	}
	if _, err := scan(thread, fn, s); err != nil {
		return nil, err
	}
	re := r.re
	if mode != "search" {
		r.anchors()
		re = r.anchored
		if r.anchorErr != nil {
			return nil, fmt.Errorf("%s: %v", fn, r.anchorErr)
		}
		if mode == "fullmatch" {
			re = r.entire
			if r.fulErr != nil {
				return nil, fmt.Errorf("%s: %v", fn, r.fulErr)
			}
		}
	}
	idx := re.FindStringSubmatchIndex(s)
	if idx == nil {
		return sl.None, nil
	}
	return &matchValue{s: s, idx: idx, r: r}, nil
}

func group(s string, idx []int, g int) sl.Value {
	if idx[2*g] < 0 {
		return sl.None
	}
	return sl.String(s[idx[2*g]:idx[2*g+1]])
}

// findall returns, for each match, the whole match when the pattern has no
// group, the group when it has one, and a tuple of the groups otherwise; a
// group that took no part is "".
func reFindall(thread *sl.Thread, fn string, r *regex, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var s string
	if err := sl.UnpackArgs(fn, args, kwargs, "string", &s); err != nil {
		return nil, err
	}
	st, err := scan(thread, fn, s)
	if err != nil {
		return nil, err
	}
	ms, err := allMatches(thread, st, fn, r.re, s, -1)
	if err != nil {
		return nil, err
	}
	ng := r.re.NumSubexp()
	out := make([]sl.Value, len(ms))
	str := func(idx []int, g int) sl.Value {
		if v, ok := group(s, idx, g).(sl.String); ok {
			return v
		}
		return sl.String("")
	}
	for i, m := range ms {
		switch ng {
		case 0:
			out[i] = str(m, 0)
		case 1:
			out[i] = str(m, 1)
		default:
			t := make(sl.Tuple, ng)
			for g := 1; g <= ng; g++ {
				t[g-1] = str(m, g)
			}
			out[i] = t
		}
	}
	return sl.NewList(out), nil
}

// sub replaces the first count matches (all when count is 0) with repl: a
// template in which \1 to \99, \g<1> and \g<name> insert a group (a group
// that took no part inserts ""), \\ a backslash and \n, \t, \r the control
// characters; or a function called with the match that returns a string.
func reSub(thread *sl.Thread, fn string, r *regex, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var repl sl.Value
	var s string
	count := 0
	if err := sl.UnpackArgs(fn, args, kwargs, "repl", &repl, "string", &s, "count?", &count); err != nil {
		return nil, err
	}
	if count < 0 {
		return nil, fmt.Errorf("%s: count: got %d, want 0 (all) or more", fn, count)
	}
	var tmpl []tmplPart
	var callable sl.Callable
	switch v := repl.(type) {
	case sl.String:
		var err error
		if tmpl, err = parseTemplate(string(v), r.re); err != nil {
			return nil, fmt.Errorf("%s: %v", fn, err)
		}
	case sl.Callable:
		callable = v
	default:
		return nil, fmt.Errorf("%s: repl: got %s, want string or function", fn, repl.Type())
	}
	st, err := scan(thread, fn, s)
	if err != nil {
		return nil, err
	}
	ms, err := allMatches(thread, st, fn, r.re, s, count)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	last := 0
	for i, m := range ms {
		b.WriteString(s[last:m[0]])
		if callable != nil {
			v, err := sl.Call(thread, callable, sl.Tuple{&matchValue{s: s, idx: m, r: r}}, nil)
			if err != nil {
				return nil, err
			}
			str, ok := v.(sl.String)
			if !ok {
				return nil, fmt.Errorf("%s: repl returned %s, want string", fn, v.Type())
			}
			b.WriteString(string(str))
		} else {
			for _, p := range tmpl {
				if p.group < 0 {
					b.WriteString(p.lit)
				} else if m[2*p.group] >= 0 {
					b.WriteString(s[m[2*p.group]:m[2*p.group+1]])
				}
			}
		}
		last = m[1]
		if uint64(b.Len()) > st.limits.Heap || (i%1024 == 1023 && st.trippedLimit() != limitNone) {
			return nil, st.refuse(limitMemory, "%s built a string of over %s", fn, formatBytes(uint64(b.Len())))
		}
	}
	b.WriteString(s[last:])
	return sl.String(b.String()), nil
}

// split splits s at each match, at most maxsplit times when maxsplit is
// above 0; the pattern's groups are put between the pieces (None for a
// group that took no part).
func reSplit(thread *sl.Thread, fn string, r *regex, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var s string
	maxsplit := 0
	if err := sl.UnpackArgs(fn, args, kwargs, "string", &s, "maxsplit?", &maxsplit); err != nil {
		return nil, err
	}
	st, err := scan(thread, fn, s)
	if err != nil {
		return nil, err
	}
	ms, err := allMatches(thread, st, fn, r.re, s, maxsplit)
	if err != nil {
		return nil, err
	}
	var out []sl.Value
	last := 0
	for _, m := range ms {
		out = append(out, sl.String(s[last:m[0]]))
		for g := 1; g <= r.re.NumSubexp(); g++ {
			out = append(out, group(s, m, g))
		}
		last = m[1]
	}
	out = append(out, sl.String(s[last:]))
	return sl.NewList(out), nil
}

type tmplPart struct {
	lit   string
	group int // -1 for a literal
}

func parseTemplate(repl string, re *regexp.Regexp) ([]tmplPart, error) {
	var parts []tmplPart
	var lit strings.Builder
	ref := func(g int) error {
		if g > re.NumSubexp() {
			return fmt.Errorf("invalid group reference %d", g)
		}
		if lit.Len() > 0 {
			parts = append(parts, tmplPart{lit: lit.String(), group: -1})
			lit.Reset()
		}
		parts = append(parts, tmplPart{group: g})
		return nil
	}
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		if c != '\\' {
			lit.WriteByte(c)
			continue
		}
		if i+1 == len(repl) {
			return nil, fmt.Errorf("bad escape (end of pattern)")
		}
		i++
		switch c := repl[i]; {
		case c >= '0' && c <= '9':
			j := i + 1
			if j < len(repl) && repl[j] >= '0' && repl[j] <= '9' {
				j++
			}
			g, _ := strconv.Atoi(repl[i:j])
			if err := ref(g); err != nil {
				return nil, err
			}
			i = j - 1
		case c == 'g':
			end := strings.IndexByte(repl[i:], '>')
			if i+1 >= len(repl) || repl[i+1] != '<' || end < 0 {
				return nil, fmt.Errorf("missing group name in \\g<...>")
			}
			name := repl[i+2 : i+end]
			g, err := strconv.Atoi(name)
			if err != nil {
				g = re.SubexpIndex(name)
				if g < 0 {
					return nil, fmt.Errorf("unknown group name %q", name)
				}
			}
			if err := ref(g); err != nil {
				return nil, err
			}
			i += end
		case c == '\\':
			lit.WriteByte('\\')
		case c == 'n':
			lit.WriteByte('\n')
		case c == 't':
			lit.WriteByte('\t')
		case c == 'r':
			lit.WriteByte('\r')
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			return nil, fmt.Errorf("bad escape \\%c", c)
		default:
			lit.WriteByte('\\')
			lit.WriteByte(c)
		}
	}
	if lit.Len() > 0 {
		parts = append(parts, tmplPart{lit: lit.String(), group: -1})
	}
	return parts, nil
}

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
