package starlark

import (
	"errors"
	"strings"
	"unicode/utf8"

	"go.starlark.net/resolve"
	sl "go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Rule authors write Python first. Starlark's own messages say what the
// parser got ("got string literal, want newline"), not what the author
// meant (an f-string), so each error a Python habit causes gets a hint
// saying what Starlark wants instead. A hint is recognised from the
// error's message and the source at the error's position, read with a
// small tokenizer that knows strings and comments, so a word in a string
// or a comment never earns one. The message and its position stay as
// Starlark gave them; the hint follows on the same line, after hintMark,
// because every message the-loop shows is one line.

// hintMark separates Starlark's message from the hint.
const hintMark = "; hint: "

// withHint adds to err, a Starlark parse, resolve or evaluation error of
// the file whose source is src, the hint for the Python habit that caused
// it, if one did. The error keeps its type and position; only its message
// grows.
func withHint(err error, src []byte) error {
	switch x := err.(type) {
	case syntax.Error:
		if h := syntaxHint(x.Pos, x.Msg, src); h != "" {
			x.Msg += hintMark + h
		}
		return x
	case resolve.ErrorList:
		for i := range x {
			if h := resolveHint(x[i].Msg); h != "" {
				x[i].Msg += hintMark + h
			}
		}
		return x
	}
	var ee *sl.EvalError
	if errors.As(err, &ee) && !strings.Contains(ee.Msg, hintMark) {
		if h := evalHint(ee.Msg); h != "" {
			ee.Msg += hintMark + h
		}
	}
	return err
}

const (
	hintFormat = `Starlark has no f-strings: write "total: %d" % n, or "total: {}".format(n)`
	hintTry    = `Starlark has no exceptions: test before acting (ctx.repo.exists(p)) and return block("why"); fail("why") stops the hook, which blocks it`
	hintFlags  = `Starlark's re (RE2) takes no flags: put them in the pattern, re.search("(?i)draft", s) for IGNORECASE, (?m) for MULTILINE, (?s) for DOTALL`
	hintWhile  = `Starlark has no while: loop over a bounded range, for _ in range(n): ... with break (recursion is not allowed either)`
	hintFiles  = `a rule reads the repository only through ctx.repo: ctx.repo.read(path), ctx.repo.exists(path), ctx.repo.glob(pattern)`
	hintFail   = `Starlark has no exceptions: return block("why"), or call fail("why"), which stops the hook and blocks it`
)

// keywordHints are the Python statements Starlark's scanner knows as
// reserved words and its parser refuses, by the word.
var keywordHints = map[string]string{
	"try":      hintTry,
	"except":   hintTry,
	"finally":  hintTry,
	"raise":    hintFail,
	"class":    `Starlark has no classes: use struct(name = value, ...) or a dict for data, and functions for behaviour`,
	"with":     `Starlark has no with: ` + hintFiles + `, which returns the whole text`,
	"yield":    `Starlark has no generators: build a list and return it`,
	"global":   `a Starlark function cannot assign a global: return the value instead, or change a list or dict the global holds`,
	"nonlocal": `a Starlark function cannot assign an enclosing function's variable: return the value instead, or change a list or dict it holds`,
	"is":       `Starlark has no is: compare with == and != (x == None, x != None)`,
	"del":      `Starlark has no del: build a new list or dict without the entry, or use d.pop(key) or l.remove(x)`,
	"as":       `Starlark has no import ... as or with ... as; load("file.star", alias = "name") renames what it loads`,
	"async":    `Starlark has no async: every call is synchronous`,
	"await":    `Starlark has no async: every call is synchronous`,
}

// predeclaredModules are the modules every rule has without loading them.
var predeclaredModules = map[string]bool{"re": true, "json": true, "math": true}

// sandboxedModules are Python modules whose work a rule does through ctx.
var sandboxedModules = map[string]bool{"os": true, "sys": true, "pathlib": true, "glob": true, "io": true, "subprocess": true, "shutil": true}

// syntaxHint is the hint for a parse error at pos saying msg, or "".
func syntaxHint(pos syntax.Position, msg string, src []byte) string {
	toks := tokenize(src)
	cands := tokensAt(toks, pos)
	// at is the token at pos whose text is text, or -1.
	at := func(text string) int {
		for _, i := range cands {
			if toks[i].text == text {
				return i
			}
		}
		return -1
	}
	got, want, ok := gotWant(msg)
	if !ok {
		if i := at("@"); msg == "unexpected input character '@'" && i >= 0 && toks[i].first {
			return `Starlark has no decorators: call one function on the other, f = decorate(f), or register a hook with hook("x-name", impl)`
		}
		return ""
	}
	switch {
	case got == "string literal":
		// f"…" is the name f, then a string: the parser stops at the string.
		for _, i := range cands {
			if toks[i].kind == tokString && strings.ContainsAny(toks[i].prefix, "fF") {
				return hintFormat
			}
		}
	case got == "import" || got == "from":
		i := at(got)
		if i < 0 {
			return ""
		}
		if i+1 < len(toks) && toks[i+1].kind == tokIdent {
			name, _, _ := strings.Cut(toks[i+1].text, ".")
			switch {
			case predeclaredModules[name]:
				return `json, math and re are predeclared in every rule: delete the import and call ` + name + `.… directly`
			case sandboxedModules[name]:
				return `Starlark has no import, and a rule has no ` + name + `: ` + hintFiles
			}
		}
		return `Starlark has no import: re, json and math are predeclared, and load("other.star", "name") loads a name from another .star file`
	case keywordHints[got] != "":
		if at(got) >= 0 {
			return keywordHints[got]
		}
	case got == "'**'":
		if at("**") >= 0 {
			return `Starlark has no ** operator outside calls: use math.pow(x, y), which returns a float, or multiply`
		}
	case got == "'-'" && want == "':'":
		if at("->") >= 0 {
			return `Starlark has no type annotations: drop the -> and the type`
		}
	case got == "':'" && want == "')'":
		if i := at(":"); i >= 0 && toks[i].open == '(' && toks[i].inDef {
			return `Starlark has no type annotations: drop the : and the type`
		}
	case got == "':'" && want == "newline":
		if i := at(":"); i > 0 && toks[i].open == 0 && toks[i-1].kind == tokIdent && toks[i-1].first {
			return `Starlark has no variable annotations: drop the : and the type`
		}
	case want == "':'" && (got == "','" || got == "'}'" || got == "for"):
		for _, i := range cands {
			if t := toks[i]; t.open == '{' && (t.text == "," || t.text == "}" || t.text == "for") {
				return `Starlark has no set literal or set comprehension: write set([1, 2]) or set([x for x in xs])`
			}
		}
	}
	if want == "newline" {
		for _, i := range cands {
			if i > 0 && toks[i-1].text == "assert" && toks[i-1].first && toks[i-1].ecol < toks[i].col {
				return `Starlark has no assert: write if not cond: fail("why"), or return block("why") from the hook`
			}
		}
	}
	return ""
}

// gotWant splits the parser's "got X, want Y".
func gotWant(msg string) (got, want string, ok bool) {
	rest, ok := strings.CutPrefix(msg, "got ")
	if !ok {
		return "", "", false
	}
	got, want, ok = strings.Cut(rest, ", want ")
	if !ok {
		got, _, ok = strings.Cut(rest, " after expression")
	}
	return got, want, ok
}

// undefinedHints are the Python builtins a rule may reach for, by name.
var undefinedHints = map[string]string{
	"open":       hintFiles,
	"file":       hintFiles,
	"isinstance": `Starlark has no isinstance: compare type(x) == "string" (or "list", "dict", "int", "NoneType")`,
	"input":      `a rule reads no input: everything it may use is on ctx`,
	"exec":       `Starlark has no exec or eval`,
	"eval":       `Starlark has no exec or eval`,
	"null":       `Starlark's null is None`,
	"nil":        `Starlark's null is None`,
	"true":       `Starlark's booleans are True and False`,
	"false":      `Starlark's booleans are True and False`,
	"Exception":  hintFail,
}

// resolveHint is the hint for a resolve error saying msg, or "".
func resolveHint(msg string) string {
	switch {
	case strings.Contains(msg, "does not support while loops"):
		return hintWhile
	case strings.HasSuffix(msg, "not within a function"):
		return `a module's top level cannot loop or branch: do it inside a function (the hook's own), or use a comprehension or x if cond else y`
	case strings.HasPrefix(msg, "cannot reassign global"):
		return `a global is assigned once: compute its value in one expression, or do the work inside a function, where x += 1 is allowed`
	case strings.HasPrefix(msg, "undefined: "):
		name, _, _ := strings.Cut(strings.TrimPrefix(msg, "undefined: "), " ")
		switch {
		case undefinedHints[name] != "":
			return undefinedHints[name]
		case sandboxedModules[name]:
			return `a rule has no ` + name + `: ` + hintFiles
		case strings.HasSuffix(name, "Error") && len(name) > len("Error"):
			return hintFail
		}
	}
	return ""
}

// reFlagNames are Python's re flag constants of more than one letter:
// no module here has a member of such a name, so a message naming one
// is about re. The one-letter names (re.I) are found by hooks check,
// which sees the source.
var reFlagNames = map[string]bool{"IGNORECASE": true, "MULTILINE": true, "DOTALL": true, "VERBOSE": true, "ASCII": true, "UNICODE": true, "NOFLAG": true, "LOCALE": true}

// evalHint is the hint for a Starlark evaluation error saying msg, or "".
func evalHint(msg string) string {
	switch {
	case strings.HasSuffix(msg, "called recursively"):
		return `Starlark forbids recursion: walk a worklist with for _ in range(limit): ... and break when it is empty`
	case strings.HasPrefix(msg, "re.") && (strings.Contains(msg, `unexpected keyword argument "flags"`) || strings.Contains(msg, "arguments, want at most")):
		return hintFlags
	case strings.HasPrefix(msg, "module has no ."):
		name, _, _ := strings.Cut(strings.TrimPrefix(msg, "module has no ."), " ")
		if reFlagNames[name] {
			return hintFlags
		}
	}
	return ""
}

// A token of the tokenizer the hints read the source with.
type token struct {
	kind      tokKind
	text      string // for a string, its prefix and quotes too
	prefix    string // a string's prefix letters (r, b, f, ...)
	line, col int32  // where it starts, as syntax.Position counts
	eline     int32  // where it ends: the position after its last rune
	ecol      int32
	first     bool // the first token of a logical line
	open      rune // the innermost bracket open around it, 0 if none
	inDef     bool // that bracket is a def's parameter list
}

type tokKind int

const (
	tokOther tokKind = iota
	tokIdent
	tokString
)

// tokenize reads src into tokens as far as the hints need: names,
// strings (prefixed, triple-quoted, escaped), comments skipped, brackets
// tracked. It never fails; what it cannot read it skips.
func tokenize(src []byte) []token {
	s := string(src)
	var toks []token
	line, col := int32(1), int32(1)
	i := 0
	// next consumes one rune and advances the position as the scanner does.
	next := func() rune {
		r, w := rune(s[i]), 1
		if r >= 0x80 {
			r, w = utf8.DecodeRuneInString(s[i:])
		}
		i += w
		if r == '\r' && i < len(s) && s[i] == '\n' {
			i++
		}
		if r == '\n' || r == '\r' {
			line, col = line+1, 1
			return '\n'
		}
		col++
		return r
	}
	type bracket struct {
		r     rune
		isDef bool
	}
	var stack []bracket
	first := true
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\n' || c == '\r':
			next()
			if len(stack) == 0 {
				first = true
			}
			continue
		case c == ' ' || c == '\t' || c == '\f' || c == '\\':
			next()
			continue
		case c == '#':
			for i < len(s) && s[i] != '\n' && s[i] != '\r' {
				next()
			}
			continue
		}
		t := token{line: line, col: col, first: first}
		if len(stack) > 0 {
			t.open, t.inDef = stack[len(stack)-1].r, stack[len(stack)-1].isDef
		}
		first = false
		start := i
		switch {
		case isIdentStart(c):
			for i < len(s) && isIdentPart(s[i]) {
				next()
			}
			t.kind = tokIdent
			if i < len(s) && (s[i] == '"' || s[i] == '\'') && len(s[start:i]) <= 3 && strings.Trim(s[start:i], "rRbBfFuU") == "" {
				t.kind, t.prefix = tokString, s[start:i]
				readString(s, &i, next)
			}
		case c == '"' || c == '\'':
			t.kind = tokString
			readString(s, &i, next)
		case c >= '0' && c <= '9':
			for i < len(s) && (isIdentPart(s[i]) || s[i] == '.') {
				next()
			}
		default:
			next()
			if i < len(s) && (c == '*' && s[i] == '*' || c == '-' && s[i] == '>') {
				next()
			}
			switch c {
			case '(', '[', '{':
				n := len(toks)
				isDef := c == '(' && n >= 2 && toks[n-1].kind == tokIdent && toks[n-2].text == "def"
				stack = append(stack, bracket{rune(c), isDef})
			case ')', ']', '}':
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
			}
		}
		t.text, t.eline, t.ecol = s[start:i], line, col
		toks = append(toks, t)
	}
	return toks
}

// readString consumes a string literal whose opening quote is at s[*i].
func readString(s string, i *int, next func() rune) {
	q := s[*i]
	triple := strings.HasPrefix(s[*i:], strings.Repeat(string(q), 3))
	if triple {
		next()
		next()
	}
	next()
	for *i < len(s) {
		switch {
		case s[*i] == '\\':
			next()
			if *i < len(s) {
				next()
			}
		case triple && strings.HasPrefix(s[*i:], strings.Repeat(string(q), 3)):
			next()
			next()
			next()
			return
		case !triple && s[*i] == q:
			next()
			return
		case !triple && (s[*i] == '\n' || s[*i] == '\r'):
			return // unterminated: the scanner says so itself
		default:
			next()
		}
	}
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdentPart(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// before reports whether position (l1, c1) comes before (l2, c2).
func before(l1, c1, l2, c2 int32) bool { return l1 < l2 || l1 == l2 && c1 < c2 }

// tokensAt are the indexes of the tokens the parser may mean by pos: the
// one that ends there (it reports some errors after the token) and the one
// that holds it.
func tokensAt(toks []token, pos syntax.Position) []int {
	var out []int
	for i, t := range toks {
		if t.eline == pos.Line && t.ecol == pos.Col {
			out = append(out, i)
		}
		if !before(pos.Line, pos.Col, t.line, t.col) && before(pos.Line, pos.Col, t.eline, t.ecol) {
			out = append(out, i)
		}
	}
	return out
}
