package starlark

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sl "go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/the-loop/the-loop/graph"
)

// limited loads src (which registers x-h) with limits and runs x-h.
func limited(t *testing.T, limits Limits, src string) (graph.Result, error, time.Duration) {
	t.Helper()
	root := writeTree(t, map[string]string{hooksFile: src})
	table, err := Load([]Module{declared}, Options{Repo: root, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r, err := table["x-h"].Run(gctx(root))
	return r, err, time.Since(start)
}

func wantLimitBlock(t *testing.T, r graph.Result, err error, want string) {
	t.Helper()
	if err != nil {
		t.Fatalf("got error %v, want a block", err)
	}
	if r.Status != graph.StatusBlock || r.Retriable || r.Hook != "x-h" || len(r.Messages) != 1 {
		t.Fatalf("got %+v, want one non-retriable block by x-h", r)
	}
	if !strings.HasPrefix(r.Messages[0].Text, want) {
		t.Errorf("message %q, want it to start %q", r.Messages[0].Text, want)
	}
}

func TestAnInfiniteLoopExceedsTheStepBudget(t *testing.T) {
	r, err, _ := limited(t, testLimits, "def _spin(ctx):\n    for i in range(1 << 62):\n        pass\n    return ok()\n\nhook(\"x-h\", _spin)\n")
	wantLimitBlock(t, r, err, "x-h exceeded its step budget of 1000000 steps (stopped at "+hooksFile+":2:5)")
}

func TestAHookRunningPastItsDeadlineIsStopped(t *testing.T) {
	limits := testLimits
	limits.Steps = 1 << 62
	limits.Deadline = 200 * time.Millisecond
	r, err, took := limited(t, limits, "def _spin(ctx):\n    for i in range(1 << 62):\n        pass\n    return ok()\n\nhook(\"x-h\", _spin)\n")
	wantLimitBlock(t, r, err, "x-h exceeded its deadline of 200ms")
	if took > time.Second {
		t.Errorf("took %s to stop", took)
	}
}

func TestRecursionIsRefusedWhenAHookRecurses(t *testing.T) {
	_, err, _ := limited(t, testLimits, "def _deep(ctx):\n    return _deep(ctx)\n\nhook(\"x-h\", _deep)\n")
	if err == nil || !strings.Contains(err.Error(), "function _deep called recursively") {
		t.Fatalf("got %v", err)
	}
}

func TestAnOversizedIntegerIsAnError(t *testing.T) {
	limits := testLimits
	limits.Steps = 100_000_000 // the products are charged for their words
	_, err, _ := limited(t, limits, "def _grow(ctx):\n    x = 1 << 500\n    for i in range(30):\n        x = x * x\n    return ok()\n\nhook(\"x-h\", _grow)\n")
	if err == nil || !strings.Contains(err.Error(), "exceeds the limit of 1048576 bits") {
		t.Fatalf("got %v", err)
	}
}

// bombs are hostile hook bodies, each ending in the limit named. The
// memory limit in these tests is 32 MiB.
var bombs = []struct {
	name, body, limit string
}{
	{"a string repeated to 256 MiB", `"x" * (1 << 28)`, "memory"},
	{"a string doubled in a loop", "s = \"x\"\n    for i in range(40):\n        s = s + s", "memory"},
	{"a string doubled in place", "s = \"x\"\n    for i in range(40):\n        s += s", "memory"},
	{"a string doubled by repetition", "s = \"x\"\n    for i in range(40):\n        s *= 2", "memory"},
	{"a list repeated to 8 GiB", "[None] * (1 << 29)", "memory"},
	{"a tuple repeated", "(1, 2) * (1 << 27)", "memory"},
	{"a list doubled in place", "l = [0]\n    for i in range(40):\n        l += l", "memory"},
	{"a list doubled by extend", "l = [0]\n    for i in range(40):\n        l.extend(l)", "memory"},
	{"a replace that squares a string", "s = \"x\" * (1 << 20)\n    s.replace(\"x\", s)", "memory"},
	{"a join with a huge separator", "(\"x\" * (1 << 20)).join([\"a\"] * 1000)", "memory"},
	{"a format that repeats its argument", "(\"{0}\" * 10000).format(\"x\" * (1 << 20))", "memory"},
	{"a percent format that repeats its argument", "(\"%(a)s\" * 10000) % {\"a\": \"x\" * (1 << 20)}", "memory"},
	{"str of a list aliasing one string", "str([\"x\" * (1 << 20)] * 1000)", "memory"},
	{"print of an aliased list", "print([\"x\" * (1 << 20)] * 1000)", "memory"},
	{"fail with an aliased list", "fail([\"x\" * (1 << 20)] * 1000)", "memory"},
	{"json.encode of an aliased list", "json.encode([\"x\" * (1 << 20)] * 1000)", "memory"},
	{"json.decode of a long array", "json.decode(\"[\" + \"0,\" * (1 << 24) + \"0]\")", "memory"},
	{"json.indent of deep nesting", "json.indent(\"[\" * 900 + \"]\" * 900, indent = \"x\" * 100000)", "memory"},
	{"json.encode of a string that escapes sixfold", "json.encode(\"\\x01\" * (1 << 23))", "memory"},
	{"repr of a string that escapes fourfold", "repr(\"\\x01\" * (1 << 23))", "memory"},
	{"str of a list of escaping strings", "str([\"\\x01\" * (1 << 21)] * 4)", "memory"},
	{"a regexp split whose groups fan out", "re.split(\"(a?)\" * 200, \"b\" * 20000)", "memory"},
	{"a materialised huge range", "list(range(1 << 40))", "memory"},
	{"a huge range sorted", "sorted(range(1 << 40))", "memory"},
	{"a huge range made a set", "set(range(1 << 30))", "memory"},
	{"bytes of a huge range", "bytes(range(1 << 40))", "memory"},
	{"a huge range extended into a list", "[].extend(range(1 << 40))", "memory"},
	{"a string split into millions", "(\"x\" * (1 << 22)).split(\"x\")", "memory"},
	{"a string's elements materialised", "list((\"x\" * (1 << 24)).elems())", "memory"},
	{"a regexp substitution that explodes", "re.sub(\"\", \"x\" * (1 << 20), \"y\" * 10000)", "memory"},
	{"a regexp with millions of matches", "re.findall(\"\", \"x\" * (1 << 24))", "memory"},
	{"a list grown one element at a time", "l = []\n    for i in range(1 << 30):\n        l.append(\"%d\" % i * 64)", "memory"},
	{"a max over an endless range", "max(range(1 << 62))", "step budget"},
	{"str of a list of one long match", "m = re.search(\"(?s).+\", \"\\x01\" * (1 << 22))\n    str([m] * 20)", "memory"},
	{"a union of many ranges at once", "set().union(" + strings.Repeat("range(1000000), ", 40) + ")", "memory"},
	{"a zip of one range many times", "r = range(1000000)\n    zip(" + strings.Repeat("r, ", 70) + ")", "memory"},
	{"a dict comprehension over an endless range", "{i: i for i in range(1 << 62)}", "memory"},
}

// deepValues nest past what the recursive builtins walk: each is refused
// as an error at its line, and the process lives.
var deepValues = []struct{ name, body string }{
	{"json.decode of a million brackets", `json.decode("[" * 1500000 + "]" * 1500000)`},
	{"json.decode of nested objects", `json.decode("{\"a\":" * 2000 + "1" + "}" * 2000)`},
	{"json.indent of deep nesting", `json.indent("[" * 30000 + "]" * 30000)`},
	{"json.encode of a deep list", "l = []\n    for i in range(5000):\n        l = [l]\n    json.encode(l)"},
	{"str of a deep list", "l = []\n    for i in range(5000):\n        l = [l]\n    str(l)"},
	{"repr of a deep tuple", "t = ()\n    for i in range(5000):\n        t = (t,)\n    repr(t)"},
	{"print of a deep dict", "d = {}\n    for i in range(5000):\n        d = {\"k\": d}\n    print(d)"},
	{"a format of a deep list", "l = []\n    for i in range(5000):\n        l = [l]\n    \"%s\" % (l,)"},
	{"a deep list reached twice", "l = []\n    for i in range(900):\n        l = [l]\n    m = [l]\n    for i in range(900):\n        m = [m]\n    str([l, m])"},
}

func TestDeeplyNestedValuesAreRefusedNotFollowedDownTheStack(t *testing.T) {
	for _, d := range deepValues {
		t.Run(d.name, func(t *testing.T) {
			root := writeTree(t, map[string]string{hooksFile: bombSource(d.body)})
			table, err := Load([]Module{declared}, Options{Repo: root, Limits: testLimits})
			if err != nil {
				t.Fatal(err)
			}
			_, err = table["x-h"].Run(gctx(root))
			if err == nil || !strings.Contains(err.Error(), "nested more than 1000 deep") || !strings.Contains(err.Error(), "rules.star:") {
				t.Fatalf("got %v; want an error at the line, refusing the nesting", err)
			}
			if r := mustRun(t, table, "x-fine", root); r.Status != graph.StatusPass {
				t.Errorf("the next hook: %+v", r)
			}
		})
	}
}

// sharedValues refer to one value many times over, or nest a tuple or a
// struct deep: hashing or freezing one would not end, or would end the
// process, so each is refused where it is made.
var sharedValues = []struct{ name, body, want string }{
	{"a tuple doubled on itself", "t = (1,)\n    for i in range(64):\n        t = (t, t)\n    d = {t: 1}", "holds more than 1048576 values"},
	{"a tuple doubled by repetition", "t = (1,)\n    for i in range(64):\n        t = (t,) * 2\n    d = {t: 1}", "*: refused a tuple that holds more than"},
	{"a tuple doubled by concatenation", "t = (1,)\n    for i in range(64):\n        t = (t,) + (t,)\n    d = {t: 1}", "+: refused a tuple that holds more than"},
	{"a tuple doubled in place", "t = (1,)\n    for i in range(64):\n        u = (t,)\n        u += (t,)\n        t = u\n    d = {t: 1}", "+=: refused a tuple that holds more than"},
	{"a tuple doubled by tuple()", "t = (1,)\n    for i in range(64):\n        t = tuple([t, t])\n    d = {t: 1}", "tuple: refused a tuple that holds more than"},
	{"a tuple doubled by zip()", "t = (1,)\n    for i in range(64):\n        t = zip([t], [t])[0]\n    d = {t: 1}", "zip: refused a tuple that holds more than"},
	{"a tuple doubled by dict.items()", "t = 1\n    for i in range(64):\n        t = {t: t}.items()[0]\n    d = {t: 1}", "dict.items: refused a tuple that holds more than"},
	{"a struct doubled on itself", "s = struct(a = 1)\n    for i in range(64):\n        s = struct(a = s, b = s)\n    d = {s: 1}", "struct: refused a struct that holds more than"},
	{"a million-deep tuple", "t = ()\n    for i in range(100000):\n        t = (t,)\n    d = {t: 1}", "refused a tuple nested more than 1000 deep"},
	{"a deep tuple by enumerate()", "t = 1\n    for i in range(5000):\n        t = enumerate([t])[0]\n    d = {t: 1}", "enumerate: refused a tuple nested more than 1000 deep"},
}

func TestTuplesAndStructsThatCouldNotBeHashedAreRefusedWhereTheyAreMade(t *testing.T) {
	for _, c := range sharedValues {
		t.Run(c.name, func(t *testing.T) {
			root := writeTree(t, map[string]string{hooksFile: bombSource(c.body)})
			table, err := Load([]Module{declared}, Options{Repo: root, Limits: testLimits})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = table["x-h"].Run(gctx(root))
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "rules.star:") {
				t.Fatalf("got %v; want an error at the line saying %q", err, c.want)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %s", took)
			}
		})
	}
	// What is usual is left alone: pairs in a dict, a tuple of tuples.
	root := writeTree(t, map[string]string{hooksFile: bombSource("d = {(i, (i, str(i))): i for i in range(1000)}\n    pairs = sorted(d.items())\n    z = zip(pairs, pairs)\n    s = struct(a = (1, 2), b = [pairs])")})
	table, err := Load([]Module{declared}, Options{Repo: root, Limits: testLimits})
	if err != nil {
		t.Fatal(err)
	}
	if r := mustRun(t, table, "x-h", root); r.Status != graph.StatusPass {
		t.Errorf("ordinary tuples: %+v", r)
	}
}

func TestAModuleWhoseGlobalsNestTooDeepToFreezeIsALoadError(t *testing.T) {
	for _, src := range []string{
		"def _build():\n    l = []\n    for i in range(5000):\n        l = [l]\n    return l\n\nDEEP = _build()\nhook(\"x-h\", lambda ctx: ok())\n",
		"def _build():\n    l = []\n    for i in range(5000):\n        l = [l]\n    return lambda ctx: ok(str(len(l)))\n\nhook(\"x-h\", _build())\n",
	} {
		root := writeTree(t, map[string]string{hooksFile: src})
		_, err := Load([]Module{declared}, Options{Repo: root, Limits: testLimits})
		if err == nil || !strings.Contains(err.Error(), "nest") || !strings.Contains(err.Error(), "more than 1000 deep") {
			t.Errorf("Load = %v; want the module refused before freezing its deep value", err)
		}
	}
}

func TestADeeplyNestedDocumentAtAModulesTopLevelIsALoadError(t *testing.T) {
	root := writeTree(t, map[string]string{hooksFile: "json.decode(\"[\" * 1500000 + \"]\" * 1500000)\nhook(\"x-h\", lambda ctx: ok())\n"})
	_, err := Load([]Module{declared}, Options{Repo: root, Limits: testLimits})
	if err == nil || !strings.Contains(err.Error(), "nested more than 1000 deep") {
		t.Fatalf("Load = %v; want the module refused for its nesting", err)
	}
}

func bombSource(body string) string {
	return "def _bomb(ctx):\n    " + body + "\n    return ok()\n\nhook(\"x-h\", _bomb)\nhook(\"x-fine\", lambda ctx: ok(str(len(\"x\" * 1000))))\n"
}

// TestMemoryBombsEndAsBlocksAndTheNextHookStillRuns: none of these takes
// the process down; each is a non-retriable block naming the hook and the
// limit, and a hook run after it works.
func TestMemoryBombsEndAsBlocksAndTheNextHookStillRuns(t *testing.T) {
	limits := testLimits
	limits.Steps = 20_000_000
	// What is measured is steps and memory: a deadline of seconds fires
	// first on a loaded machine under the race detector.
	limits.Deadline = time.Minute
	limits.Heap = 32 << 20
	for _, b := range bombs {
		t.Run(b.name, func(t *testing.T) {
			root := writeTree(t, map[string]string{hooksFile: bombSource(b.body)})
			table, err := Load([]Module{declared}, Options{Repo: root, Limits: limits})
			if err != nil {
				t.Fatal(err)
			}
			r, err := table["x-h"].Run(gctx(root))
			want := "x-h exceeded its step budget of 20000000 steps"
			if b.limit == "memory" {
				want = "x-h exceeded its memory limit of 32 MiB"
			}
			wantLimitBlock(t, r, err, want)
			if r := mustRun(t, table, "x-fine", root); r.Status != graph.StatusPass || r.Messages[0].Text != "1000" {
				t.Errorf("the next hook: %+v", r)
			}
		})
	}
}

func TestABombAtAModulesTopLevelFailsTheLoad(t *testing.T) {
	root := writeTree(t, map[string]string{hooksFile: "def _bomb():\n    return \"x\" * (1 << 28)\n\nX = _bomb()\n" + registersOne})
	ce := mustFailLoad(t, Options{Repo: root}, declared)
	contains(t, "error", ce.Error(), "module "+hooksFile+" exceeded its memory limit of 64 MiB")
	if ce.File != hooksFile || ce.Line != 2 {
		t.Errorf("located at %s:%d", ce.File, ce.Line)
	}
}

func TestGarbageIsNotMistakenForGrowth(t *testing.T) {
	limits := testLimits
	limits.Deadline = time.Minute // what is measured is memory, not time
	limits.Steps = 10_000_000
	r, err, _ := limited(t, limits, "def _churn(ctx):\n    n = 0\n    for i in range(300):\n        n += len(\"x\" * (1 << 20))\n    return ok(str(n))\n\nhook(\"x-h\", _churn)\n")
	if err != nil || r.Status != graph.StatusPass {
		t.Fatalf("allocating 300 MiB of garbage under a 64 MiB limit: %+v %v", r, err)
	}
}

func TestChargingStepsStopsAtTheBudget(t *testing.T) {
	st := newCallState("x-h", Limits{Steps: 100}.withDefaults(), nil)
	th := &sl.Thread{}
	if err := st.charge(th, 50, "work"); err != nil {
		t.Fatal(err)
	}
	if err := st.charge(th, 60, "more work"); err == nil || !strings.Contains(err.Error(), "x-h exceeded its step budget of 100 steps") {
		t.Fatalf("got %v", err)
	}
	if st.trippedLimit() != limitSteps {
		t.Errorf("tripped %v", st.trippedLimit())
	}
}

func TestTheRewriteKeepsPositions(t *testing.T) {
	f, err := fileOptions().Parse("f.star", "x = [1] * 2\ny = \"%d\" % x\nz = \"a\".join([])\nw = \"a\" in f.read(\"p\")\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := rewrite(f); err != nil {
		t.Fatal(err)
	}
	var got []string
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok {
			if id, ok := c.Fn.(*syntax.Ident); ok && strings.HasPrefix(id.Name, "$") {
				got = append(got, fmt.Sprintf("%s@%d:%d", id.Name, c.Lparen.Line, c.Lparen.Col))
			}
		}
		return true
	})
	want := "$mul@1:9 $mod@2:10 $attr@3:8 $in@4:9 $searched@4:18"
	if strings.Join(got, " ") != want {
		t.Errorf("got %v, want %s", got, want)
	}
}

func TestTheRewriteLeavesASmallProductOfIntegerLiterals(t *testing.T) {
	for src, want := range map[string]bool{
		"1024 * 1024":                  false,
		"3037000499 * 3037000499":      true, // 32 + 32 bits: guardIntMul looks
		"4611686018427387904 * 2":      true,
		"1024 * n":                     true,
		"1024 * 1.5":                   true,
		"2 * \"ab\"":                   true,
		"1048576 * 1024 * 1024 * 1024": true, // the outer operand is not a literal
	} {
		f, err := fileOptions().Parse("f.star", "x = "+src+"\n", 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := rewrite(f); err != nil {
			t.Fatal(err)
		}
		rhs := f.Stmts[0].(*syntax.AssignStmt).RHS
		_, called := rhs.(*syntax.CallExpr)
		if called != want {
			t.Errorf("%s: rewritten to a call %v, want %v", src, called, want)
		}
	}
}

func TestPercentAssignOnAnElementIsRefusedAtLoad(t *testing.T) {
	root := writeTree(t, map[string]string{hooksFile: "def f(d):\n    d[\"k\"] %= 1\n" + registersOne})
	ce := mustFailLoad(t, Options{Repo: root}, declared)
	contains(t, "error", ce.Error(), hooksFile+":2:12: %= is supported on a name only")
	root = writeTree(t, map[string]string{hooksFile: "def f(d):\n    d[\"k\"] //= 1\n" + registersOne})
	ce = mustFailLoad(t, Options{Repo: root}, declared)
	contains(t, "error", ce.Error(), hooksFile+":2:12: //= is supported on a name only; write x[i] = x[i] // y")
}

// rssBombs are what TestStringBombsKeepPeakRSSBounded measures, each in a
// fresh process under DefaultLimits.
var rssBombs = map[string]string{
	"baseline":       `"x"`,
	"repeat-2^28":    `"x" * (1 << 28)`,
	"doubling-loop":  "s = \"x\"\n    for i in range(40):\n        s = s + s",
	"aliased-str":    "str([\"x\" * (1 << 20)] * 4096)",
	"growing-list":   "l = []\n    for i in range(1 << 30):\n        l.append(\"%d\" % i * 64)",
	"unguarded-2^28": "", // starlark-go itself, for comparison
}

// TestStringBombsKeepPeakRSSBounded runs each bomb in a child process (this
// test binary again) and reads the child's peak resident set size
// (VmHWM): with the default 256 MiB heap limit no bomb may take the
// process past 768 MiB. The figures are logged; run with -v to see them.
func TestStringBombsKeepPeakRSSBounded(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/status")
	}
	if testing.Short() {
		t.Skip("spawns a process per bomb")
	}
	for _, name := range []string{"baseline", "repeat-2^28", "doubling-loop", "aliased-str", "growing-list", "unguarded-2^28"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRSSChild$", "-test.v")
		cmd.Env = append(os.Environ(), "THE_LOOP_RSS_BOMB="+name)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		var peak int
		var result string
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "RSS "); ok {
				f := strings.SplitN(rest, " ", 3)
				peak, _ = strconv.Atoi(f[0])
				result = f[2]
			}
		}
		t.Logf("%-16s peak RSS %4d MiB  %s", name, peak>>10, result)
		if peak == 0 {
			t.Errorf("%s: no measurement in\n%s", name, out)
		}
		if !strings.HasPrefix(name, "unguarded") && peak > 768<<10 {
			t.Errorf("%s: peak RSS %d MiB exceeds 768 MiB", name, peak>>10)
		}
	}
}

// TestRSSChild is TestStringBombsKeepPeakRSSBounded's child process.
func TestRSSChild(t *testing.T) {
	name := os.Getenv("THE_LOOP_RSS_BOMB")
	if name == "" {
		t.Skip("run by TestStringBombsKeepPeakRSSBounded")
	}
	var result string
	start := time.Now()
	switch name {
	case "unguarded-2^28":
		_, err := sl.ExecFileOptions(&syntax.FileOptions{}, &sl.Thread{}, "b.star", "x = \"x\" * (1 << 28)\n", nil)
		result = fmt.Sprintf("starlark-go: err=%v", err)
	default:
		root := writeTree(t, map[string]string{hooksFile: bombSource(rssBombs[name])})
		table, err := Load([]Module{declared}, Options{Repo: root})
		if err != nil {
			t.Fatal(err)
		}
		r, err := table["x-h"].Run(gctx(root))
		if err != nil {
			result = "error: " + err.Error()
		} else {
			result = fmt.Sprintf("%s: %s", r.Status, r.Render())
		}
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb := strings.Fields(v)[0]
			fmt.Printf("RSS %s %s %s in %s\n", kb, "kB", strings.ReplaceAll(result, "\n", " "), time.Since(start).Round(time.Millisecond))
		}
	}
}

// TestAMemoryVerdictDoesNotDependOnWhatRunsBeside: eight calls at once,
// each building most of its memory limit, pass on any number of cores;
// eight each building past it block. The watchdog measures the process's
// heap, so without judging a tripped call again alone, neighbours would be
// charged to each other and the verdict would change from run to run.
func TestAMemoryVerdictDoesNotDependOnWhatRunsBeside(t *testing.T) {
	limits := testLimits
	limits.Steps = 50_000_000
	limits.Deadline = 30 * time.Second
	limits.Heap = 64 << 20
	build := func(mib int) string {
		return fmt.Sprintf("def _h(ctx):\n    parts = []\n    for i in range(%d):\n        parts.append(\"x\" * (1 << 20))\n    return ok()\n\nhook(\"x-h\", _h)\n", mib)
	}
	for _, c := range []struct {
		mib  int
		want graph.Status
	}{{40, graph.StatusPass}, {100, graph.StatusBlock}} {
		root := writeTree(t, map[string]string{hooksFile: build(c.mib)})
		table, err := Load([]Module{declared}, Options{Repo: root, Limits: limits})
		if err != nil {
			t.Fatal(err)
		}
		for _, procs := range []int{1, 2, 8} {
			t.Run(fmt.Sprintf("%d MiB on %d cores", c.mib, procs), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				for round := range 2 {
					var wg sync.WaitGroup
					got := make([]graph.Status, 8)
					for i := range got {
						wg.Go(func() {
							r, err := table["x-h"].Run(gctx(root))
							if err != nil {
								t.Error(err)
							}
							got[i] = r.Status
						})
					}
					wg.Wait()
					for i, s := range got {
						if s != c.want {
							t.Errorf("round %d, call %d: %s, want %s", round, i, s, c.want)
						}
					}
				}
			})
		}
	}
}

// TestAnAbandonedCallStopsOnceItsBuiltinReturns: a call stuck in one long
// builtin is abandoned after its deadline and grace, without holding up
// the calls after it, and it stops as soon as that builtin returns (it is
// cancelled).
func TestAnAbandonedCallStopsOnceItsBuiltinReturns(t *testing.T) {
	limits := testLimits
	limits.Steps = 1 << 40
	limits.Deadline = 100 * time.Millisecond
	limits.Heap = 1 << 30
	// A scan of some seconds: well past the deadline and its grace.
	size := 600000
	if raceEnabled {
		size /= 8
	}
	body := fmt.Sprintf("re.search(\"(a|b|c|d|e|f){200}z\", \"a\" * %d)\n    for i in range(1 << 40):\n        pass", size)
	root := writeTree(t, map[string]string{hooksFile: bombSource(body)})
	table, err := Load([]Module{declared}, Options{Repo: root, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r, err := table["x-h"].Run(gctx(root))
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("waited %s for a call past its deadline", took)
	}
	wantLimitBlock(t, r, err, "x-h exceeded its deadline of 100ms; it did not stop when cancelled and was abandoned")
	// It holds up no other call...
	if r := mustRun(t, table, "x-fine", root); r.Status != graph.StatusPass {
		t.Errorf("the next hook: %+v", r)
	}
	// ...and stops by itself once its builtin returns.
	deadline := time.Now().Add(2 * time.Minute)
	for lingering.Load() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the abandoned call is still running: it did not stop when its builtin returned")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestScanningAStringIsPaidFor: a loop of cheap-looking calls that each
// read ten megabytes runs out of steps, not for a minute.
func TestScanningAStringIsPaidFor(t *testing.T) {
	limits := testLimits
	// What is measured is steps; a deadline of seconds fires first on a
	// loaded machine under the race detector.
	limits.Deadline = time.Minute
	for _, body := range []string{
		"s = \"a\" * 10000000\n    for i in range(12000):\n        s.count(\"b\")",
		"s = \"a\" * 10000000\n    for i in range(12000):\n        \"b\" in s",
		"s = \"a\" * 10000000\n    for i in range(12000):\n        s.find(\"b\")",
		"l = list(range(1000000))\n    for i in range(12000):\n        l.index(999999)",
	} {
		root := writeTree(t, map[string]string{hooksFile: bombSource(body)})
		table, err := Load([]Module{declared}, Options{Repo: root, Limits: limits})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		r, err := table["x-h"].Run(gctx(root))
		wantLimitBlock(t, r, err, "x-h exceeded its step budget")
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("%q took %s", body, took)
		}
	}
}
