package starlark

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/the-loop/the-loop/graph"
)

// benchFamilies are one operation of each charged family, repeated: the
// benchmark reports the wall time of each charged step (ns/step), which
// must stay bounded, and about the interpreter's own step, whatever the
// operation.
var benchFamilies = []struct{ name, setup, op string }{
	{"loop", "", "pass"},
	{"compare-shared-lists", "a = [1]\n    b = [1]\n    for i in range(4):\n        a = [a] * 20\n        b = [b] * 20", "r = a == b"},
	{"compare-long-strings", "s = \"x\" * (1 << 20)\n    t = (s + \"y\")[:-1]", "r = s == t"},
	{"search-list", "a = [[1, 2]] * 1000\n    b = [[1, 3]] * 1000", "r = [1, 2] in a"},
	{"sort-strings", "l = [\"%d\" % i for i in range(1000)]", "r = sorted(l)"},
	{"set-of-strings", "l = [\"x%d\" % i for i in range(1000)]", "r = set(l)"},
	{"set-of-long-strings", "s = \"x\" * 4096\n    l = [s] * 1000", "r = set(l)"},
	{"str-of-ints", "l = list(range(10000))", "r = str(l)"},
	{"repr-of-strings", "l = [\"ab\\n\"] * 10000", "r = repr(l)"},
	{"format", "l = list(range(1000))", "r = \"%s %s\" % (l, l)"},
	{"json-encode", "l = [{\"a\": [1, 2, \"x\"]}] * 1000", "r = json.encode(l)"},
	{"json-decode", "j = json.encode([{\"a\": [1, 2, \"x\"]}] * 1000)", "r = json.decode(j)"},
	{"json-indent", "j = json.encode([{\"a\": [1, 2, \"x\"]}] * 1000)", "r = json.indent(j)"},
	{"replace", "s = \"abc\" * 100000", "r = s.replace(\"b\", \"xx\")"},
	{"split", "s = \"a b \" * 100000", "r = s.split(\" \")"},
	{"join", "l = [\"abc\"] * 100000", "r = \",\".join(l)"},
	{"repeat", "s = \"abc\" * 1000", "r = s * 1000"},
	{"concat", "s = \"x\" * (2 << 20)", "r = s + s"},
	{"list-insert", "l = [1] * 100000", "l.insert(0, 1)\n        l.pop(0)"},
	{"re-nested-groups", "p = re.compile(\"(\" * 100 + \"a\" + \")\" * 100)\n    s = \"a\" * 10000", "r = p.search(s)"},
}

func BenchmarkChargedStep(b *testing.B) {
	for _, f := range benchFamilies {
		b.Run(f.name, func(b *testing.B) {
			limits := DefaultLimits
			limits.Steps = 1 << 50
			limits.Deadline = time.Hour
			limits.Heap = 1 << 30
			src := "def _h(ctx):\n    " + f.setup + "\n    for i in range(N):\n        " + f.op + "\n    return ok()\n\nhook(\"x-h\", _h)\n"
			run := func(n int) (uint64, time.Duration) {
				root := writeTree(b, map[string]string{hooksFile: replaceN(src, n)})
				table := mustLoadWith(b, root, limits)
				ctx := gctx(root)
				ctx.Trace = &graph.HookTrace{}
				start := time.Now()
				r, err := table["x-h"].Run(ctx)
				if err != nil || r.Status != graph.StatusPass {
					b.Fatalf("%+v %v", r, err)
				}
				return ctx.Trace.Steps, time.Since(start)
			}
			// What the setup costs is taken off.
			s0, t0 := run(0)
			s1, t1 := run(b.N)
			steps := max(s1-s0, 1)
			b.ReportMetric(float64((t1-t0).Nanoseconds())/float64(steps), "ns/step")
			b.ReportMetric(float64(steps)/float64(b.N), "steps/op")
		})
	}
}

func replaceN(src string, n int) string {
	return strings.Replace(src, "range(N)", "range("+strconv.Itoa(n)+")", 1)
}

func mustLoadWith(t testing.TB, root string, limits Limits) map[string]graph.Hook {
	t.Helper()
	table, err := Load([]Module{declared}, Options{Repo: root, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	return table
}
