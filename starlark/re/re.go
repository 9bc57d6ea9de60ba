package re

import (
	"fmt"
	"math/bits"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"

	sl "go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// Module is the re module.
var Module = &starlarkstruct.Module{Name: "re", Members: members()}

// Costs of a call, in a Budget's steps and bytes.
const (
	// scanDivisor: scanning a string costs its length times the pattern's
	// program size over this many steps; matching runs the program over
	// the input, and that is the work a call cannot be stopped in.
	scanDivisor = 256
	// groupsPerCopy: a scan costs once more for each this many groups
	// the pattern has (the offsets each thread of the program carries).
	groupsPerCopy = 2
	// compileBytesPerInst is about what one program instruction costs to
	// compile and hold, counting the three programs a pattern may need
	// (as given, anchored at the start, anchored at both ends).
	compileBytesPerInst = 256
	// perIndex is one match's bookkeeping besides its groups: the slice
	// header of its offsets and the slot it takes in the result.
	perIndex = 64
	// perGroup is one group of one match: its two offsets, the string
	// header of its text and the slot it takes in a list or tuple.
	perGroup = 16 + 16 + 16
	// matchShare is the part of a call's allowance one collection of
	// matches may take before it is refused: the result still has to be
	// built from them.
	matchShare = 4
)

// regex is a compiled pattern, the value re.compile returns. It is
// immutable and safe to share between threads.
type regex struct {
	pattern string
	re      *regexp.Regexp
	insts   int // the size of its program: what one byte of input costs

	once              sync.Once
	anchored, entire  *regexp.Regexp
	anchorErr, fulErr error
}

var (
	_ sl.HasAttrs = (*regex)(nil)
	_ sl.HasAttrs = (*matchValue)(nil)
)

// compile compiles pattern, charging the thread for it first: the size of
// its program is known only once parsed, and a pattern of a few bytes can
// expand to thousands of instructions (x{1000}).
func compile(thread *sl.Thread, fn, pattern string) (*regex, error) {
	b := budgetOf(thread)
	if err := b.Charge(thread, uint64(len(pattern))/64+1, func() string { return fn + " parsing a pattern" }); err != nil {
		return nil, err
	}
	parsed, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", fn, err)
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return nil, fmt.Errorf("%s: %v", fn, err)
	}
	insts := len(prog.Inst)
	what := func() string { return fmt.Sprintf("%s compiling a pattern of %d instructions", fn, insts) }
	if err := b.Allow(uint64(insts)*compileBytesPerInst, what); err != nil {
		return nil, err
	}
	if err := b.Charge(thread, uint64(insts)/16+1, what); err != nil {
		return nil, err
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", fn, err)
	}
	return &regex{pattern: pattern, re: re, insts: insts}, nil
}

// anchors compiles, once, the pattern anchored at the start (for match)
// and at both ends (for fullmatch).
func (r *regex) anchors() {
	r.once.Do(func() {
		r.anchored, r.anchorErr = regexp.Compile(`\A(?:` + r.pattern + `)`)
		r.entire, r.fulErr = regexp.Compile(`\A(?:` + r.pattern + `)\z`)
	})
}

// scan charges the thread for running r over s: each byte runs the
// program, and each thread of the program that a byte advances carries
// the offsets of every group, copied as it goes, so a pattern of many
// groups (nested or not) costs that many times more a byte.
func (r *regex) scan(thread *sl.Thread, fn, s string) error {
	groups := uint64(r.re.NumSubexp())
	hi, per := bits.Mul64(uint64(r.insts), 1+groups/groupsPerCopy)
	hi2, cost := bits.Mul64(uint64(len(s))+1, per)
	if hi != 0 || hi2 != 0 {
		cost = ^uint64(0)
	}
	return budgetOf(thread).Charge(thread, cost/scanDivisor+1, func() string {
		return fmt.Sprintf("%s over %d bytes with a pattern of %d instructions and %d groups", fn, len(s), r.insts, groups)
	})
}

func (r *regex) String() string { return fmt.Sprintf("re.compile(%q)", r.pattern) }

// StringSize bounds len(String()), for a host that estimates what
// stringifying a value builds: %q writes a byte as at most ten.
func (r *regex) StringSize() uint64 { return 10*uint64(len(r.pattern)) + 16 }

func (r *regex) Type() string          { return "re.pattern" }
func (r *regex) Freeze()               {}
func (r *regex) Truth() sl.Bool        { return sl.True }
func (r *regex) Hash() (uint32, error) { return sl.String(r.pattern).Hash() }
func (r *regex) AttrNames() []string {
	return []string{"findall", "finditer", "fullmatch", "groups", "match", "pattern", "search", "split", "sub"}
}

func (r *regex) Attr(name string) (sl.Value, error) {
	switch name {
	case "pattern":
		return sl.String(r.pattern), nil
	case "groups":
		return sl.MakeInt(r.re.NumSubexp()), nil
	}
	fn, ok := methods[name]
	if !ok {
		return nil, nil
	}
	return sl.NewBuiltin(name, func(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
		return fn(thread, b.Name(), r, args, kwargs)
	}).BindReceiver(r), nil
}

type method func(thread *sl.Thread, fn string, r *regex, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error)

var methods = map[string]method{
	"match":     finder("match"),
	"search":    finder("search"),
	"fullmatch": finder("fullmatch"),
	"findall":   findall,
	"finditer":  finditer,
	"sub":       sub,
	"split":     split,
}

// finder is match (anchored at the start), search (anywhere) or fullmatch
// (the whole string).
func finder(mode string) method {
	return func(thread *sl.Thread, fn string, r *regex, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
		return find(thread, fn, r, args, kwargs, mode)
	}
}

func members() sl.StringDict {
	m := sl.StringDict{
		"compile": sl.NewBuiltin("re.compile", func(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			var pattern string
			if err := sl.UnpackArgs(b.Name(), args, kwargs, "pattern", &pattern); err != nil {
				return nil, err
			}
			return compile(thread, b.Name(), pattern)
		}),
		"escape": sl.NewBuiltin("re.escape", func(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			var s string
			if err := sl.UnpackArgs(b.Name(), args, kwargs, "s", &s); err != nil {
				return nil, err
			}
			// At most one backslash per byte.
			if err := budgetOf(thread).Allow(2*uint64(len(s)), func() string { return b.Name() }); err != nil {
				return nil, err
			}
			return sl.String(regexp.QuoteMeta(s)), nil
		}),
	}
	for name, fn := range methods {
		full := "re." + name
		m[name] = sl.NewBuiltin(full, func(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			if len(args) == 0 {
				return nil, fmt.Errorf("%s: missing argument pattern", full)
			}
			var r *regex
			switch p := args[0].(type) {
			case *regex:
				r = p
			case sl.String:
				var err error
				if r, err = compile(thread, full, string(p)); err != nil {
					return nil, err
				}
			default:
				return nil, fmt.Errorf("%s: pattern: got %s, want string", full, args[0].Type())
			}
			return fn(thread, full, r, args[1:], kwargs)
		})
	}
	return m
}

// allMatches returns the offsets of r's matches in s, at most n of them
// when n > 0. Each match costs its groups, so the number the call may
// collect is its allowance shared by what one match holds; finding more
// than that stops the search at once and refuses the call, before the
// matches are built into anything.
func allMatches(thread *sl.Thread, fn string, r *regex, s string, n int) ([][]int, error) {
	b := budgetOf(thread)
	per := perIndex + uint64(r.re.NumSubexp()+1)*perGroup
	limit := int(min(b.Allowance()/matchShare/per, 1<<30))
	if n <= 0 || n > limit {
		n = limit + 1
	}
	ms := r.re.FindAllStringSubmatchIndex(s, n)
	if len(ms) > limit {
		return nil, b.Refuse(func() string {
			return fmt.Sprintf("%s found more than %d matches of %d groups each", fn, limit, r.re.NumSubexp())
		})
	}
	return ms, b.Charge(thread, uint64(len(ms)), func() string { return fn })
}

func find(thread *sl.Thread, fn string, r *regex, args sl.Tuple, kwargs []sl.Tuple, mode string) (sl.Value, error) {
	var s string
	if err := sl.UnpackArgs(fn, args, kwargs, "string", &s); err != nil {
		return nil, err
	}
	if err := r.scan(thread, fn, s); err != nil {
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

// matchesIn reads the one string argument of findall and finditer, and
// finds every match of r in it, charged.
func matchesIn(thread *sl.Thread, fn string, r *regex, args sl.Tuple, kwargs []sl.Tuple) (string, [][]int, error) {
	var s string
	if err := sl.UnpackArgs(fn, args, kwargs, "string", &s); err != nil {
		return "", nil, err
	}
	if err := r.scan(thread, fn, s); err != nil {
		return "", nil, err
	}
	ms, err := allMatches(thread, fn, r, s, -1)
	return s, ms, err
}

// findall returns, for each match, the whole match when the pattern has no
// group, the group when it has one, and a tuple of the groups otherwise; a
// group that took no part is "".
func findall(thread *sl.Thread, fn string, r *regex, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	s, ms, err := matchesIn(thread, fn, r, args, kwargs)
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

// finditer returns every match, as a match, in order: a list, since
// Starlark has no iterators, charged as findall's matches are.
func finditer(thread *sl.Thread, fn string, r *regex, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	s, ms, err := matchesIn(thread, fn, r, args, kwargs)
	if err != nil {
		return nil, err
	}
	out := make([]sl.Value, len(ms))
	for i, m := range ms {
		out[i] = &matchValue{s: s, idx: m, r: r}
	}
	return sl.NewList(out), nil
}

// sub replaces the first count matches (all when count is 0) with repl: a
// template in which \1 to \99, \g<1> and \g<name> insert a group (a group
// that took no part inserts ""), \\ a backslash and \n, \t, \r the control
// characters; or a function called with the match that returns a string.
func sub(thread *sl.Thread, fn string, r *regex, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
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
	if err := r.scan(thread, fn, s); err != nil {
		return nil, err
	}
	ms, err := allMatches(thread, fn, r, s, count)
	if err != nil {
		return nil, err
	}
	var out strings.Builder
	b := budgetOf(thread)
	// What is built is checked before each piece is written: a builder
	// doubles, so keeping it within half the allowance keeps it within the
	// whole; and one match's replacement can be the template's length times
	// the match's.
	limit := b.Allowance() / 2
	grow := func(n int) error {
		if uint64(out.Len())+uint64(n) > limit {
			return b.Refuse(func() string {
				return fmt.Sprintf("%s building a string of over %d bytes", fn, uint64(out.Len())+uint64(n))
			})
		}
		return nil
	}
	last := 0
	for _, m := range ms {
		if err := grow(m[0] - last); err != nil {
			return nil, err
		}
		out.WriteString(s[last:m[0]])
		if callable != nil {
			v, err := sl.Call(thread, callable, sl.Tuple{&matchValue{s: s, idx: m, r: r}}, nil)
			if err != nil {
				return nil, err
			}
			str, ok := v.(sl.String)
			if !ok {
				return nil, fmt.Errorf("%s: repl returned %s, want string", fn, v.Type())
			}
			if err := grow(len(str)); err != nil {
				return nil, err
			}
			out.WriteString(string(str))
		} else {
			n := 0
			for _, p := range tmpl {
				if p.group < 0 {
					n += len(p.lit)
				} else if m[2*p.group] >= 0 {
					n += m[2*p.group+1] - m[2*p.group]
				}
			}
			if err := grow(n); err != nil {
				return nil, err
			}
			for _, p := range tmpl {
				if p.group < 0 {
					out.WriteString(p.lit)
				} else if m[2*p.group] >= 0 {
					out.WriteString(s[m[2*p.group]:m[2*p.group+1]])
				}
			}
		}
		last = m[1]
	}
	if err := grow(len(s) - last); err != nil {
		return nil, err
	}
	out.WriteString(s[last:])
	return sl.String(out.String()), nil
}

// split splits s at each match, at most maxsplit times when maxsplit is
// above 0; the pattern's groups are put between the pieces (None for a
// group that took no part).
func split(thread *sl.Thread, fn string, r *regex, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var s string
	maxsplit := 0
	if err := sl.UnpackArgs(fn, args, kwargs, "string", &s, "maxsplit?", &maxsplit); err != nil {
		return nil, err
	}
	if err := r.scan(thread, fn, s); err != nil {
		return nil, err
	}
	ms, err := allMatches(thread, fn, r, s, maxsplit)
	if err != nil {
		return nil, err
	}
	ng := r.re.NumSubexp()
	out := make([]sl.Value, 0, len(ms)*(ng+1)+1)
	last := 0
	for _, m := range ms {
		out = append(out, sl.String(s[last:m[0]]))
		for g := 1; g <= ng; g++ {
			out = append(out, group(s, m, g))
		}
		last = m[1]
	}
	out = append(out, sl.String(s[last:]))
	return sl.NewList(out), nil
}
