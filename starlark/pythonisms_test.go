package starlark

import (
	"fmt"
	"strings"
	"testing"
)

// TestAPythonHabitIsAnsweredWithWhatStarlarkWants loads a module that makes
// one Python habit and requires the error to keep Starlark's own message
// at its file:line:col, then say what Starlark wants instead.
func TestAPythonHabitIsAnsweredWithWhatStarlarkWants(t *testing.T) {
	const reg = "hook(\"x-one\", lambda ctx: ok())\n"
	cases := []struct {
		name      string
		src       string
		line, col int
		starlark  string // Starlark's own message, kept
		hint      string
	}{
		{"an f-string", "X = f\"total {n}\"\n" + reg, 1, 17, "got string literal, want newline", `"total: %d" % n`},
		{"an rf-string", "X = rf'a{b}'\n" + reg, 1, 13, "got string literal", "no f-strings"},
		{"import re", "import re\n" + reg, 1, 1, "got import, want primary expression", "json, math and re are predeclared in every rule: delete the import and call re.… directly"},
		{"import json in a function", reg + "def f():\n    import json\n", 3, 5, "got import", "call json.… directly"},
		{"import os", "import os\n" + reg, 1, 1, "got import", "a rule has no os: a rule reads the repository only through ctx.repo"},
		{"from x import y", "from foo import bar\n" + reg, 1, 1, "got from", `load("other.star", "name")`},
		{"a while loop", reg + "def f(n):\n    while n > 0:\n        n -= 1\n", 3, 5, "does not support while loops", "for _ in range(n)"},
		{"try/except", reg + "def f():\n    try:\n        pass\n    except:\n        pass\n", 3, 5, "got try", "Starlark has no exceptions"},
		{"raise", reg + "def f():\n    raise ValueError(\"x\")\n", 3, 5, "got raise", `fail("why")`},
		{"a class", "class Rule:\n    pass\n" + reg, 1, 1, "got class", "struct(name = value"},
		{"with open", reg + "def f():\n    with open(\"a\") as fh:\n        pass\n", 3, 5, "got with", "ctx.repo.read(path)"},
		{"yield", reg + "def f():\n    yield 1\n", 3, 5, "got yield", "build a list and return it"},
		{"global", reg + "def f():\n    global X\n", 3, 5, "got global", "cannot assign a global"},
		{"is None", reg + "def f(x):\n    return x is None\n", 3, 16, "got is", "x == None"},
		{"is not None", reg + "def f(x):\n    return x is not None\n", 3, 16, "got is", "x != None"},
		{"a set literal", "S = {1, 2}\n" + reg, 1, 8, "got ',', want ':'", "set([1, 2])"},
		{"a one-element set", "S = {1}\n" + reg, 1, 8, "got '}', want ':'", "no set literal"},
		{"a set comprehension", "S = {x for x in [1]}\n" + reg, 1, 11, "got for, want ':'", "set([x for x in xs])"},
		{"a global reassigned at the top level", "X = 1\nX += 1\n" + reg, 2, 1, "cannot reassign global X", "x += 1 is allowed"},
		{"a for loop at the top level", "for x in []:\n    pass\n" + reg, 1, 1, "for loop not within a function", "inside a function"},
		{"assert", reg + "def f():\n    assert 1\n", 3, 13, "got int literal, want newline", "Starlark has no assert"},
		{"a decorator", "@cache\ndef f():\n    pass\n" + reg, 1, 1, "unexpected input character '@'", "no decorators"},
		{"a power operator", "X = 2 ** 3\n" + reg, 1, 9, "got '**'", "math.pow(x, y)"},
		{"a return annotation", reg + "def f() -> int:\n    pass\n", 2, 10, "got '-', want ':'", "no type annotations"},
		{"a parameter annotation", reg + "def f(x: int):\n    pass\n", 2, 9, "got ':', want ')'", "no type annotations"},
		{"open()", reg + "def f():\n    return open(\"a\")\n", 3, 12, "undefined: open", "ctx.repo.read(path)"},
		{"isinstance()", reg + "def f(x):\n    return isinstance(x, str)\n", 3, 12, "undefined: isinstance", `type(x) == "string"`},
		{"an exception class", reg + "def f():\n    return ValueError\n", 3, 12, "undefined: ValueError", `fail("why")`},
		{"re.IGNORECASE at load", "P = re.search(\"a\", \"A\", re.IGNORECASE)\n" + reg, 1, 27, "module has no .IGNORECASE field or method", "(?i)"},
		{"re.compile with flags", "P = re.compile(\"a\", flags = 2)\n" + reg, 1, 15, `re.compile: unexpected keyword argument "flags"`, "(?i)"},
		{"recursion at load", "def f(n):\n    return f(n - 1) if n else 0\nX = f(2)\n" + reg, 2, 24, "called recursively", "worklist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := writeTree(t, map[string]string{hooksFile: c.src})
			ce := mustFailLoad(t, Options{Repo: root}, declared)
			if ce.File != hooksFile || ce.Line != c.line || ce.Col != c.col {
				t.Errorf("at %s:%d:%d, want %s:%d:%d (%v)", ce.File, ce.Line, ce.Col, hooksFile, c.line, c.col, ce)
			}
			msg := ce.Error()
			before, after, ok := strings.Cut(msg, hintMark)
			if !ok {
				t.Fatalf("no hint in %q", msg)
			}
			contains(t, "Starlark's message", before, fmt.Sprintf("%s:%d:%d: ", hooksFile, c.line, c.col), c.starlark)
			contains(t, "the hint", after, c.hint)
		})
	}
}

// TestAPythonWordInAStringOrCommentEarnsNoHint: the hints read the source
// as tokens, so "import" or f"…" inside a string or a comment near a real
// error is not mistaken for the habit.
func TestAPythonWordInAStringOrCommentEarnsNoHint(t *testing.T) {
	cases := []struct{ name, src string }{
		{"a string that says import", "X = \"import re\" ]\n"},
		{"a comment that says is", "X = 1 # x is None\nY = ]\n"},
		{"a string literal after a name that is not f", "X = g \"a\"\n"},
		{"a string in a triple-quoted string", "X = \"\"\"f\"a\" \"\"\" \"b\"\n"},
		{"a dict with a missing colon is a dict", "D = {\"a\" 1}\n"},
		{"a comma in a call", "X = len(1 2)\n"},
		{"an undefined name no habit explains", "X = frobnicate\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := writeTree(t, map[string]string{hooksFile: c.src})
			ce := mustFailLoad(t, Options{Repo: root}, declared)
			if strings.Contains(ce.Error(), hintMark) {
				t.Errorf("got a hint: %v", ce)
			}
		})
	}
}

// TestAPythonHabitAtRunTimeIsHinted: a hook that recurses or passes re a
// flag fails when it runs, and its error says what to write instead.
func TestAPythonHabitAtRunTimeIsHinted(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"re.IGNORECASE", "    return ok() if re.search(\"a\", \"A\", re.IGNORECASE) else block()\n", "(?i)"},
		{"a flags argument", "    return ok() if re.search(\"a\", \"A\", 2) else block()\n", "(?i)"},
		{"recursion", "    return _impl(ctx)\n", "worklist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			table, root := loadSource(t, "def _impl(ctx):\n"+c.body+"hook(\"x-one\", _impl)\n")
			_, err := run(t, table, "x-one", root)
			if err == nil {
				t.Fatal("the hook succeeded")
			}
			_, hint, ok := strings.Cut(err.Error(), hintMark)
			if !ok {
				t.Fatalf("no hint in %q", err)
			}
			contains(t, "the hint", hint, c.want)
		})
	}
}
