package starlark

import (
	"strings"
	"testing"
	"time"
)

// deep builds two lists of the same shape from inner lists repeated at
// every level: comparing them walks 50^8 elements, in a few steps.
const deep = "a = [1]\n    b = [1]\n    for i in range(8):\n        a = [a] * 50\n        b = [b] * 50\n    "

// deepDicts is deep for dicts.
const deepDicts = "a = {}\n    b = {}\n    for i in range(8):\n        a = {j: a for j in range(50)}\n        b = {j: b for j in range(50)}\n    "

// twins are two long strings equal in every byte, held apart.
const twins = "s = \"x\" * (4 << 20)\n    t = (s + \"y\")[:-1]\n    "

// wideTuples are two tuples of a million values each, equal, held apart.
const wideTuples = "u = tuple(range(1000))\n    v = tuple(range(1000))\n    a = tuple([u] * 1000)\n    b = tuple([v] * 1000)\n    "

// workFamilies are operations that do far more work than the steps they
// take, by family. Each must be stopped by the step budget (or refused by
// size, with want saying how) before it has done that work.
var workFamilies = []struct {
	family string
	cases  []struct{ name, body string }
}{
	{"comparison", []struct{ name, body string }{
		{"lists that share structure, ==", deep + "r = a == b"},
		{"a list with itself", deep + "r = a == a"},
		{"lists that share structure, <", deep + "r = a < b"},
		{"lists that share structure, !=", deep + "r = a != b"},
		{"dicts that share structure", deepDicts + "r = a == b"},
		{"structs that share structure", deep + "r = struct(x = a) == struct(x = b)"},
		{"tuples of a million values, again and again", wideTuples + "for i in range(100):\n        r = a == b"},
		{"lists of long strings", twins + "r = [s] * 10000 == [t] * 10000"},
		{"long strings, again and again", twins + "for i in range(100000):\n        r = s == t"},
		{"sets of long strings", twins + "for i in range(100000):\n        r = set([s]) == set([t])"},
	}},
	{"search", []struct{ name, body string }{
		{"in a list, a shared structure", deep + "r = a in [1, 2, b]"},
		{"not in a tuple", deep + "r = a not in (1, b)"},
		{"list.index", deep + "r = [b].index(a)"},
		{"list.remove", deep + "[b].remove(a)"},
		{"a long string in a list of its equals", twins + "r = s in [t] * 100000"},
		{"a long key in a dict, again and again", twins + "d = {s: 1}\n    for i in range(1000000):\n        r = t in d"},
		{"a long key in a set, again and again", twins + "d = set([s])\n    for i in range(1000000):\n        r = t not in d"},
		{"dict.pop of a long key, again and again", twins + "for i in range(1000000):\n        r = {s: 1}.pop(t)"},
	}},
	{"ordering", []struct{ name, body string }{
		{"sorted", deep + "r = sorted([a, b])"},
		{"max", deep + "r = max([a, b])"},
		{"min of arguments", deep + "r = min(a, b)"},
		{"sorted by a key", deep + "r = sorted([1, 2], key = lambda x: a if x == 1 else b)"},
		{"max by a key", deep + "r = max([1, 2], key = lambda x: a if x == 1 else b)"},
		{"sorted by a key that changes what it returned", "a = [1]\n    b = [1]\n    for i in range(8):\n        a = [a] * 50\n        b = [b] * 50\n    c = [0]\n    d = [0]\n    def k(x):\n        if x == 2:\n            c[0] = a\n            d[0] = b\n        return c if x == 1 else d\n    r = sorted([1, 2], key = k)"},
		{"sorted long strings", twins + "r = sorted([s, t] * 10000)"},
		{"max of long strings", twins + "r = max([s, t] * 10000)"},
	}},
	{"hashing", []struct{ name, body string }{
		{"set of long strings", twins + "r = set([s, t] * 100000)"},
		{"dict of long keys", twins + "r = dict([(s, 1), (t, 2)] * 100000)"},
		{"dict of long keys as lists", twins + "r = dict([[s, 1], [t, 2]] * 100000)"},
		{"set.union", twins + "r = set().union([s, t] * 100000)"},
		{"set.issubset", twins + "r = set([s]).issubset([s, t] * 100000)"},
		{"dict.update", twins + "d = {}\n    d.update([(s, 1), (t, 2)] * 100000)"},
		{"a set of long tuples", "u = tuple([\"x\" * 1000] * 1000)\n    r = set([u] * 1000000)"},
	}},
	{"formatting", []struct{ name, body string }{
		{"% of a mapping of a million entries, again and again", "d = {i: i for i in range(1000000)}\n    for i in range(100):\n        r = \"%(a)s\" % d"},
		{"% of many references to a long string, again and again", "s = \"x\" * (2 << 20)\n    for i in range(100000):\n        r = (\"%s\" * 10) % ((s,) * 10)"},
		{"format of a million arguments, again and again", "s = \"x\" * (4 << 20)\n    l = [s] * 1000000\n    for i in range(100):\n        r = \"{}\".format(*l)"},
		{"str of a long list, again and again", "l = list(range(100000))\n    for i in range(100000):\n        r = str(l)"},
		{"repr of a shared structure, again and again", "l = [list(range(1000))] * 100\n    for i in range(100000):\n        r = repr(l)"},
		{"json.encode, again and again", "l = [\"x\" * 1000] * 1000\n    for i in range(100000):\n        r = json.encode(l)"},
		{"json.indent, again and again", "j = json.encode(list(range(100000)))\n    for i in range(100000):\n        r = json.indent(j)"},
	}},
	{"decoding", []struct{ name, body string }{
		{"a long document, again and again", "j = json.encode(list(range(100000)))\n    for i in range(100000):\n        r = json.decode(j)"},
	}},
	{"strings", []struct{ name, body string }{
		{"replace, again and again", "s = \"x\" * (8 << 20)\n    for i in range(100000):\n        s.replace(\"a\", \"b\")"},
		{"replace that grows, again and again", "s = \"x\" * (1 << 20)\n    for i in range(100000):\n        s.replace(\"x\", \"yy\")"},
		{"split, again and again", "s = \"x\" * (8 << 20)\n    for i in range(100000):\n        s.split(\"a\")"},
		{"splitlines, again and again", "s = \"x\" * (8 << 20)\n    for i in range(100000):\n        s.splitlines()"},
		{"join, again and again", "l = [\"x\" * 1000] * 10000\n    for i in range(100000):\n        \"\".join(l)"},
		{"repetition, again and again", "s = \"x\" * (4 << 20)\n    for i in range(100000):\n        r = s * 2"},
		{"concatenation, again and again", "s = \"x\" * (4 << 20)\n    for i in range(100000):\n        r = s + s"},
	}},
	{"regular expressions of many groups", []struct{ name, body string }{
		{"nested groups, findall", "p = \"(\" * 300 + \"a|b\" + \")*\" * 300 + \"c\"\n    r = re.findall(p, \"ab\" * 5000)"},
		{"many groups, findall", "p = \"(?:(a)|b)*\" * 200 + \"c\"\n    r = re.findall(p, \"ab\" * 5000)"},
		{"groups of groups, sub", "p = \"((a)*)*\" * 100 + \"c\"\n    r = re.sub(p, \"x\", \"a\" * 10000)"},
		{"nested groups, search of a compiled pattern", "p = re.compile(\"(\" * 500 + \"a*\" + \")\" * 500 + \"c\")\n    r = p.search(\"a\" * 20000)"},
	}},
	{"integers", []struct{ name, body string }{
		{"squaring", "x = 3\n    for i in range(19):\n        x = x * x"},
		{"squaring in place", "x = 3\n    for i in range(19):\n        x *= x"},
		{"multiplying in place, again and again", "x = 3\n    for i in range(17):\n        x = x * x\n    for i in range(1000):\n        y = x\n        y *= x"},
		{"floor division in place, again and again", "x = 3\n    for i in range(17):\n        x = x * x\n    y = 7\n    for i in range(16):\n        y = y * y\n    for i in range(1000):\n        s = x\n        s //= y"},
		{"str of a long integer, again and again", "x = 3\n    for i in range(17):\n        x = x * x\n    for i in range(100):\n        s = str(x)"},
		{"% formatting a long integer, again and again", "x = 3\n    for i in range(17):\n        x = x * x\n    for i in range(100):\n        s = \"%d\" % x"},
		{"json.encode of a long integer, again and again", "x = 3\n    for i in range(17):\n        x = x * x\n    for i in range(100):\n        s = json.encode(x)"},
		{"floor division, again and again", "x = 3\n    for i in range(17):\n        x = x * x\n    y = 7\n    for i in range(16):\n        y = y * y\n    for i in range(1000):\n        s = x // y"},
		{"modulo, again and again", "x = 3\n    for i in range(17):\n        x = x * x\n    y = 3\n    for i in range(16):\n        y = y * y\n    for i in range(1000):\n        s = x % y"},
	}},
	{"lists", []struct{ name, body string }{
		{"insert at the front, again and again", "l = [1] * 3000000\n    for i in range(1000000):\n        l.insert(0, 1)"},
		{"pop from the front, again and again", "l = [1] * 3000000\n    for i in range(1000000):\n        l.pop(0)"},
		{"dict.keys, again and again", "d = {i: i for i in range(100000)}\n    for i in range(1000000):\n        r = d.keys()"},
	}},
}

func TestBuiltinsThatDoMuchWorkInAFewStepsArePaidForByTheStepBudget(t *testing.T) {
	limits := testLimits
	limits.Heap = 256 << 20
	// Only the step budget may stop them: a deadline reached would mean
	// work not charged for.
	limits.Deadline = time.Minute
	for _, f := range workFamilies {
		for _, tc := range f.cases {
			t.Run(f.family+"/"+tc.name, func(t *testing.T) {
				r, err, _ := limited(t, limits, bombSource(tc.body))
				wantLimitBlock(t, r, err, "x-h exceeded its step budget of 1000000 steps")
			})
		}
	}
}

func TestAJSONNumberPastIntsLimitIsRefusedBeforeItIsParsed(t *testing.T) {
	for _, doc := range []string{
		`"1" * 1000000`,
		`"[" + "7" * 5000 + "]"`,
		`"{\"a\": -" + "9" * 4301 + "}"`,
		`"1." + "1" * 5000`,
		`"[1, 2, " + "1" * 10000 + "e5]"`,
	} {
		_, err, _ := limited(t, testLimits, bombSource("r = json.decode("+doc+")"))
		if err == nil {
			t.Fatalf("%s: decoded", doc)
		}
		contains(t, doc, err.Error(), "json.decode: a number of ", "characters exceeds the limit of 4300 digits")
	}
	// What int() takes, json.decode takes.
	r, err, _ := limited(t, testLimits, "def _h(ctx):\n    return ok(str(json.decode(\"[\" + \"7\" * 4300 + \", \\\"\" + \"1\" * 9000 + \"\\\"]\")[0] % 10))\n\nhook(\"x-h\", _h)\n")
	if err != nil || r.Status != "pass" || r.Messages[0].Text != "7" {
		t.Errorf("a number of 4300 digits and a long string of digits: %+v %v", r, err)
	}
}

// TestChargedBuiltinsStillWorkWithinTheBudget: what is charged still
// gives the answers it gave.
func TestChargedBuiltinsStillWorkWithinTheBudget(t *testing.T) {
	src := `def _h(ctx):
    a = [1]
    b = [1]
    for i in range(3):
        a = [a] * 3
        b = [b] * 3
    c = a + [[]]
    got = [
        a == b, a != b, a < c, c > a, a <= b, a >= c,
        {1: a} == {1: b}, {1: a} == {1: c}, set([1, 2]) == set([2, 1]), set([1]) < set([1, 2]),
        struct(x = a) == struct(x = b), (1, a) == (1, b),
        a in [1, b], c not in [a, b], [1, b].index(a),
        sorted([c, a, b]) == [a, b, c], max([a, c]) == c, min(c, a) == a,
        sorted(["b", "a", "c"], key = lambda s: [s]), max(["b", "a"], key = lambda s: (s,)),
        sorted(["b", "a"], reverse = True),
        len(set(["x" * 2000, "x" * 2000, "y"])), dict([["k", 1], ("k", 2)]),
        "%s-%s" % ("a", [1]), "{}{}".format("a", "b"), str([1, "x"]),
        "a,b".split(","), "a\nb".splitlines(), "abc".replace("b", "xx"), "-".join(["a", "b"]),
        1 == 1.0, "a" < "b", None == None,
    ]
    return ok(str(got))

hook("x-h", _h)
`
	r, err, _ := limited(t, testLimits, src)
	if err != nil || r.Status != "pass" {
		t.Fatalf("%+v %v", r, err)
	}
	want := `[True, False, True, True, True, False, True, False, True, True, True, True, True, True, 1, True, True, True, ["a", "b", "c"], "b", ["b", "a"], 2, {"k": 2}, "a-[1]", "ab", "[1, \"x\"]", ["a", "b"], ["a", "b"], "axxc", "a-b", True, True, True]`
	if got := r.Messages[0].Text; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestAComparisonThatFailsStillSaysWhy(t *testing.T) {
	for body, want := range map[string]string{
		"r = [1] < {}":      "list < dict not implemented",
		"r = {1: 2} < {}":   "dict < dict not implemented",
		"r = [1] < [\"a\"]": "int < string not implemented",
	} {
		_, err, _ := limited(t, testLimits, bombSource(body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", body, err, want)
		}
	}
}
