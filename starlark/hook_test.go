package starlark

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	sl "go.starlark.net/starlark"

	"github.com/the-loop/the-loop/graph"
)

func TestAReturnedResultBecomesAGraphResult(t *testing.T) {
	table, root := loadSource(t, `
hook("x-ok", lambda ctx: ok("fine", data = {"n": 1, "f": 2.5, "b": True, "z": None, "l": [1, "a"], "t": (1,), "d": {"k": "v"}}))
hook("x-block", lambda ctx: block(message("no header", path = "a.go", line = 3), retriable = False))
hook("x-block-plain", lambda ctx: block("one", "two"))
hook("x-wait", lambda ctx: wait("a human"))
hook("x-skip", lambda ctx: skip())
hook("x-silent-block", lambda ctx: block())
`)
	cases := []struct {
		hook string
		want graph.Result
	}{
		{"x-ok", graph.Result{Status: graph.StatusPass, Hook: "x-ok", Retriable: true,
			Messages: []graph.Message{{Text: "fine", Severity: "notice"}},
			Data:     map[string]any{"n": 1, "f": 2.5, "b": true, "z": nil, "l": []any{1, "a"}, "t": []any{1}, "d": map[string]any{"k": "v"}}}},
		{"x-block", graph.Result{Status: graph.StatusBlock, Hook: "x-block", Retriable: false,
			Messages: []graph.Message{{Text: "no header", Path: "a.go", Line: 3, Severity: "error"}}}},
		{"x-block-plain", graph.Result{Status: graph.StatusBlock, Hook: "x-block-plain", Retriable: true,
			Messages: []graph.Message{{Text: "one", Severity: "error"}, {Text: "two", Severity: "error"}}}},
		{"x-wait", graph.Result{Status: graph.StatusWait, Hook: "x-wait", Retriable: true,
			Messages: []graph.Message{{Text: "a human", Severity: "notice"}}}},
		{"x-skip", graph.Result{Status: graph.StatusSkip, Hook: "x-skip", Retriable: true}},
		{"x-silent-block", graph.Result{Status: graph.StatusBlock, Hook: "x-silent-block", Retriable: true,
			Messages: []graph.Message{{Text: "x-silent-block blocked without saying why", Severity: "error"}}}},
	}
	for _, c := range cases {
		t.Run(c.hook, func(t *testing.T) {
			got := mustRun(t, table, c.hook, root)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %#v\nwant %#v", got, c.want)
			}
		})
	}
}

func TestAnythingButAResultIsANonRetriableBlockNamingWhatWasReturned(t *testing.T) {
	table, root := loadSource(t, `
def _none(ctx):
    pass

hook("x-none", _none)
hook("x-string", lambda ctx: "ok")
hook("x-dict", lambda ctx: {"status": "pass"})
hook("x-true", lambda ctx: True)
`)
	for name, typ := range map[string]string{"x-none": "None", "x-string": "string", "x-dict": "dict", "x-true": "bool"} {
		r := mustRun(t, table, name, root)
		if r.Status != graph.StatusBlock || r.Retriable {
			t.Errorf("%s: %+v, want a non-retriable block", name, r)
		}
		want := fmt.Sprintf("%s returned %s, not a result; a hook must return ok(), block(), wait() or skip()", name, typ)
		if len(r.Messages) != 1 || r.Messages[0].Text != want {
			t.Errorf("%s: messages %+v, want %q", name, r.Messages, want)
		}
	}
}

func TestAStarlarkErrorIsReturnedNamingTheHookAndTheWayThere(t *testing.T) {
	table, root := loadSource(t, "def _check(ctx):\n    return helper(0)\n\ndef helper(n):\n    return ok(str(1 // n))\n\nhook(\"x-div\", _check)\n")
	r, err := run(t, table, "x-div", root)
	if err == nil {
		t.Fatalf("got %+v, want an error", r)
	}
	var he *HookError
	var ee *sl.EvalError
	if !errors.As(err, &he) || !errors.As(err, &ee) {
		t.Fatalf("got %T, want a *HookError carrying a *starlark.EvalError", err)
	}
	// One line: it is shown in a table of messages.
	want := "x-div: " + hooksFile + ":5:21: floored division by zero (in helper, called from " + hooksFile + ":2:18 in _check)"
	if err.Error() != want {
		t.Errorf("error %q\nwant  %q", err.Error(), want)
	}
}

// attach returns the test loop with table's hooks appended to node's exit
// chain, as the policy layer would build it.
func attach(t *testing.T, table map[string]graph.Hook, node string, hooks ...string) *graph.Graph {
	t.Helper()
	var atts []graph.Attachment
	for _, h := range hooks {
		atts = append(atts, graph.Attachment{Hook: h, Node: node, Params: map[string]any{"board": "platform"}})
	}
	g, err := graph.Apply(compileLoop(t), table, atts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func runExit(t *testing.T, g *graph.Graph, node, root string) graph.ChainOutcome {
	t.Helper()
	n, err := g.Node(node)
	if err != nil {
		t.Fatal(err)
	}
	ctx := gctx(root)
	ctx.Graph, ctx.Node = g, n
	ctx.Log = slog.New(slog.DiscardHandler)
	return graph.RunChain(n.Exit, ctx)
}

func TestARaisingRepositoryHookBlocks(t *testing.T) {
	table, root := loadSource(t, "def _raise(ctx):\n    fail(\"broken\")\n\nhook(\"x-raise\", _raise)\n")
	out := runExit(t, attach(t, table, "implementation", "x-raise"), "implementation", root)
	if out.Status != graph.StatusBlock || out.Blocking.Hook != "x-raise" || out.Blocking.Retriable {
		t.Fatalf("got %+v, want a non-retriable block by x-raise", out)
	}
	contains(t, "message", out.Render(), "the x-raise hook failed to run: x-raise: "+hooksFile+":2:9: fail: broken")
}

func TestARepositoryHookCannotRescueABlockedChain(t *testing.T) {
	root := writeTree(t, map[string]string{hooksFile: "def _yes(ctx):\n    print(\"x-yes ran\")\n    return ok()\n\nhook(\"x-yes\", _yes)\n"})
	logs := &captured{}
	table, err := Load([]Module{declared}, Options{Repo: root, Log: slog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	out := runExit(t, attach(t, table, "review", "x-yes"), "review", root)
	if out.Status != graph.StatusBlock || out.Blocking.Hook != "nope" {
		t.Fatalf("got %+v, want the shipped block", out)
	}
	if p := logs.prints(); len(p) != 0 {
		t.Errorf("x-yes ran after a shipped block: %q", p)
	}
}

func TestARepositoryHookCannotDeclareAnOutcome(t *testing.T) {
	table, root := loadSource(t, "hook(\"x-approve\", lambda ctx: ok(data = {\"outcome\": \"approved\", \"kept\": 1}))\n")
	out := runExit(t, attach(t, table, "implementation", "x-approve"), "implementation", root)
	if out.Status != graph.StatusPass || out.Outcome() != graph.OutcomePass {
		t.Fatalf("got %+v (outcome %s), want a pass that routes on pass", out, out.Outcome())
	}
	if d := out.Results[len(out.Results)-1].Data; d["kept"] != 1 || d["outcome"] != nil {
		t.Errorf("data %v", d)
	}
	if len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0].Text, "x-approve declared outcome approved") {
		t.Errorf("warnings %+v", out.Warnings)
	}
}

func TestAttachedHooksSeeTheirParamsAndTheEarlierResults(t *testing.T) {
	table, root := loadSource(t, "hook(\"x-see\", lambda ctx: ok(\"%s %s %s\" % (ctx.params[\"board\"], ctx.results[0].hook, ctx.node.id)))\n")
	out := runExit(t, attach(t, table, "implementation", "x-see"), "implementation", root)
	if got := out.Results[1].Messages[0].Text; got != "platform ok implementation" {
		t.Errorf("got %q", got)
	}
}

func TestTwoRepositoriesKeepTheirOwnImplementations(t *testing.T) {
	a, rootA := loadSource(t, "hook(\"x-check\", lambda ctx: ok(\"repository a\"))\n")
	b, rootB := loadSource(t, "hook(\"x-check\", lambda ctx: block(\"repository b\"))\n")
	ga, gb := attach(t, a, "implementation", "x-check"), attach(t, b, "implementation", "x-check")
	if out := runExit(t, ga, "implementation", rootA); out.Status != graph.StatusPass || out.Results[1].Messages[0].Text != "repository a" {
		t.Errorf("a: %+v", out)
	}
	if out := runExit(t, gb, "implementation", rootB); out.Status != graph.StatusBlock || out.Blocking.Messages[0].Text != "repository b" {
		t.Errorf("b: %+v", out)
	}
}

func TestMutatingCtxIsAStarlarkErrorAndSoABlock(t *testing.T) {
	table, root := loadSource(t, "def _mutate(ctx):\n    ctx.params[\"board\"] = \"mine\"\n    return ok()\n\nhook(\"x-mutate\", _mutate)\n")
	out := runExit(t, attach(t, table, "implementation", "x-mutate"), "implementation", root)
	if out.Status != graph.StatusBlock || out.Blocking.Retriable {
		t.Fatalf("got %+v", out)
	}
	contains(t, "message", out.Render(), "cannot insert into frozen hash table")
}

func TestRegisteringWhileAHookRunsIsRefused(t *testing.T) {
	table, root := loadSource(t, "def _late(ctx):\n    hook(\"x-later\", _late)\n    return ok()\n\nhook(\"x-late\", _late)\n")
	_, err := run(t, table, "x-late", root)
	if err == nil {
		t.Fatal("registering at call time succeeded")
	}
	contains(t, "error", err.Error(), `hook: "x-later": hooks are registered by a module's top level as it loads, not by a running hook`)
}

func TestPrintGoesToTheDebugLog(t *testing.T) {
	root := writeTree(t, map[string]string{hooksFile: "print(\"loading\")\ndef _p(ctx):\n    print(\"checking\", ctx.hook)\n    return ok()\n\nhook(\"x-p\", _p)\n"})
	logs := &captured{}
	table, err := Load([]Module{declared}, Options{Repo: root, Log: slog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, table, "x-p", root)
	if got := logs.prints(); !reflect.DeepEqual(got, []string{"loading", "checking x-p"}) {
		t.Errorf("prints %q", got)
	}
	for _, r := range logs.records {
		if r.Message == "starlark print" && r.Level != slog.LevelDebug {
			t.Errorf("print logged at %s", r.Level)
		}
	}
}

func TestTheSandboxOffersNoClockEnvironmentRandomnessOrFiles(t *testing.T) {
	for _, name := range []string{"time", "os", "environ", "getenv", "random", "open", "sys", "now", "exec", "eval", "http", "load_file"} {
		root := writeTree(t, map[string]string{hooksFile: fmt.Sprintf("hook(\"x-a\", lambda ctx: ok(str(%s)))\n", name)})
		ce := mustFailLoad(t, Options{Repo: root}, declared)
		contains(t, name, ce.Error(), "undefined: "+name)
	}
}

func TestTheSameInputsGiveTheSameResult(t *testing.T) {
	root := fixtureRepo(t)
	src := `
def _facts(ctx):
    files = ctx.repo.glob("**/*")
    return ok(
        ", ".join(files),
        data = {
            "config": [k for k in ctx.config],
            "params": [k for k in ctx.params["nested"]],
            "sizes": {f: len(ctx.repo.read(f)) for f in files if f.endswith(".go")},
            "set": list(set(["b", "a", "b"])),
            "hash": hash("abc"),
        },
    )

hook("x-facts", _facts)
`
	if err := os.MkdirAll(filepath.Join(root, ".the-loop/hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, hooksFile), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var first graph.Result
	for i := range 5 {
		table := mustLoad(t, root, declared)
		r, err := table["x-facts"].Run(fixtureContext(t, root))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = r
			if r.Data["config"].([]any)[0] != "a" || r.Data["params"].([]any)[2] != "c" {
				t.Errorf("maps not in key order: %v", r.Data)
			}
			continue
		}
		if !reflect.DeepEqual(r, first) {
			t.Fatalf("run %d differs:\n%+v\n%+v", i, r, first)
		}
	}
}

func TestReadsAreBoundedPerCall(t *testing.T) {
	files := map[string]string{hooksFile: "def _all(ctx):\n    return ok([str(len(ctx.repo.read(p))) for p in ctx.repo.glob(\"data/*\")])\n\nhook(\"x-all\", _all)\n"}
	for i := range 5 {
		files[fmt.Sprintf("data/%d", i)] = strings.Repeat("x", 1000)
	}
	root := writeTree(t, files)
	table := mustLoad(t, root, declared)
	// Read straight from disk, and read ahead as under check.
	for _, c := range []*graph.Context{gctx(root), pureCtx(root)} {
		_, err := table["x-all"].Run(c)
		if err == nil {
			t.Fatal("reading 5000 bytes with a per-call limit of 4096 succeeded")
		}
		contains(t, "error", err.Error(), "reading data/4 would take this call past its read limit of 4096 bytes")
	}
	// Each call has its own allowance.
	files[hooksFile] = "hook(\"x-one\", lambda ctx: ok(ctx.repo.read(\"data/0\")[:1]))\n"
	root = writeTree(t, files)
	table = mustLoad(t, root, declared)
	for range 10 {
		mustRun(t, table, "x-one", root)
	}
}

// TestGlobbingOftenHoldsNoMemory is a hook that globs the same files
// many times and reads none of them: under check, where globs read ahead,
// it must cost only what it keeps, and end the same way every time.
func TestGlobbingOftenHoldsNoMemory(t *testing.T) {
	files := map[string]string{hooksFile: `
def _count(ctx):
    n = 0
    for i in range(3000):
        n += len(ctx.repo.glob("src/**/*.go"))
    for i in range(200):
        for p in ctx.repo.glob("src/*/f1.go"):
            n += len(ctx.repo.read(p))
    return ok(str(n))

hook("x-count", _count)
`}
	for i := range 20 {
		files[fmt.Sprintf("src/d%d/f%d.go", i, i%3)] = strings.Repeat("x", 100)
	}
	root := writeTree(t, files)
	// What is measured is memory: a deadline far past the default keeps a
	// busy machine (the race detector, other packages' tests) from
	// deciding the outcome.
	h, err := newHost(Options{Repo: root, Limits: Limits{Heap: 64 << 20, Deadline: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	table, err := h.load([]Module{declared})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		r, err := table["x-count"].Run(pureCtx(root))
		if err != nil || r.Status != graph.StatusPass || r.Messages[0].Text != "200000" {
			t.Fatalf("%+v, %v; want a pass counting 200000", r, err)
		}
	}
}

func TestHooksMayRunConcurrently(t *testing.T) {
	table, root := loadSource(t, `
PATTERN = re.compile("(a+)")
COUNTS = {"base": 1}

def _work(ctx):
    n = sum_of([len(m) for m in PATTERN.findall("a aa aaa")])
    return ok(data = {"n": n + COUNTS["base"], "files": ctx.repo.glob("**")})

def sum_of(xs):
    total = 0
    for x in xs:
        total += x
    return total

hook("x-work", _work)
`)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			r, err := table["x-work"].Run(gctx(root))
			if err != nil {
				errs <- err
				return
			}
			if r.Data["n"] != 7 {
				errs <- fmt.Errorf("got %v", r.Data)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestTheContextRepositoryIsTheOneConfined(t *testing.T) {
	table, _ := loadSource(t, "hook(\"x-read\", lambda ctx: ok(ctx.repo.read(\"mine.txt\")))\n")
	other := writeTree(t, map[string]string{"mine.txt": "other repository"})
	if r := mustRun(t, table, "x-read", other); r.Messages[0].Text != "other repository" {
		t.Errorf("got %+v", r)
	}
}

// TestReadsFollowACheckoutReplacedBetweenCalls: a long-running process
// keeps a repository's hooks loaded; when the checkout is replaced under
// it, the next call reads the new tree, as its globs list it.
func TestReadsFollowACheckoutReplacedBetweenCalls(t *testing.T) {
	files := map[string]string{hooksFile: "def _r(ctx):\n    return ok([ctx.repo.read(p) for p in ctx.repo.glob(\"*.txt\")])\n\nhook(\"x-r\", _r)\n", "a.txt": "old"}
	root := writeTree(t, files)
	table := mustLoad(t, root, declared)
	read := func() string {
		r, err := table["x-r"].Run(pureCtx(root))
		if err != nil || len(r.Messages) != 1 {
			t.Fatalf("%+v, %v", r, err)
		}
		return r.Messages[0].Text
	}
	if got := read(); got != "old" {
		t.Fatalf("first call read %q", got)
	}
	if err := os.Rename(root, root+".old"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root + ".old") })
	files["a.txt"] = "new"
	writeFiles(t, root, files)
	if got := read(); got != "new" {
		t.Errorf("after the checkout was replaced the hook read %q, want the new tree's \"new\"", got)
	}
}

func TestAHookErrorIsOneLineWhateverItsText(t *testing.T) {
	table, root := loadSource(t, "hook(\"x-fail\", lambda ctx: fail(\"first line\\nsecond line\\n\"))\n")
	_, err := run(t, table, "x-fail", root)
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "first line / second line") {
		t.Errorf("error %q, want one line keeping both lines' text", err)
	}
}

func TestAResultCarriesBoundedText(t *testing.T) {
	root := writeTree(t, map[string]string{hooksFile: "def _h(ctx):\n    m = \"x\" * 1000000\n    return block([m] * 2000 + [message(m, path = m)])\n\nhook(\"x-h\", _h)\n"})
	table, err := Load([]Module{declared}, Options{Repo: root, Limits: testLimits})
	if err != nil {
		t.Fatal(err)
	}
	r, err := table["x-h"].Run(gctx(root))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, m := range r.Messages {
		total += len(m.Text) + len(m.Path)
	}
	last := r.Messages[len(r.Messages)-1].Text
	if r.Status != graph.StatusBlock || total > 2<<20 || !strings.Contains(last, "more message(s), not kept") {
		t.Errorf("a result of %d messages, %d bytes of text, ending %q", len(r.Messages), total, last)
	}
}
