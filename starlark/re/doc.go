// Package re is a Starlark module of regular expressions on Go's regexp,
// which is RE2: matching is linear in the input, and there are no
// backreferences and no lookaround. Its names follow Python's re where RE2
// allows, so a rule reads as a Python author expects.
//
// To use it, add Module to a thread's predeclared names:
//
//	predeclared := starlark.StringDict{"re": re.Module}
//
//	re.compile(pattern) -> a pattern with .match, .search, .fullmatch,
//	    .findall, .sub, .split and the attributes pattern and groups
//	re.match, re.search, re.fullmatch, re.findall, re.sub, re.split
//	    take the pattern (a string or a compiled pattern) first
//	re.escape(s) quotes s
//
// match(s) anchors at the start of s, search(s) finds the first match
// anywhere, fullmatch(s) must match all of s; each returns None or a match
// with group(*g), groups(default=None), groupdict(default=None),
// start(g=0), end(g=0), span(g=0) and string. Offsets are byte offsets, as
// Starlark indexes strings. findall(s) returns strings, the one group, or
// tuples of the groups; sub(repl, s, count=0) takes a template (\1, \g<1>,
// \g<name>, \\, \n, \t, \r) or a function of the match; split(s,
// maxsplit=0) puts the groups between the pieces.
//
// # Bounds
//
// Without a Budget the module runs unbounded, as starlark-go's own modules
// do. A host that runs code it does not trust lends each thread one with
// SetBudget, and every call is then paid for before it runs: compiling a
// pattern and scanning a string are charged steps in proportion to the
// pattern's program, its groups and the string's length (so no single
// call can run for long once the thread is out of steps), and every call
// that returns
// a list or builds a string has what it would allocate estimated first,
// counting each match's groups, and refused when the Budget will not allow
// it. A call that finds more matches than its allowance stops at once
// rather than collecting them all.
package re
