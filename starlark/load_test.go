package starlark

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	sl "go.starlark.net/starlark"

	"github.com/the-loop/the-loop/graph"
)

const registersOne = "hook(\"x-one\", lambda ctx: ok())\n"

// TestLoadRefuses is the seed's error table for declarations: each case is
// one rule, and the error must name the file (and the line, where Starlark
// reports one), the module and the rule.
func TestLoadRefuses(t *testing.T) {
	outside := writeTree(t, map[string]string{"evil.star": registersOne, "evil/lib.star": "X = 1\n"})
	cases := []struct {
		name    string
		files   map[string]string
		links   map[string]string // link path -> target (absolute)
		modules []Module
		opts    Options
		file    string // want ConfigError.File; "" = the declaration's
		line    int    // want ConfigError.Line; 0 = the declaration's
		want    []string
	}{
		{name: "an absolute module path",
			modules: []Module{{Path: "/etc/rules.star", File: declared.File, Line: 7}},
			want:    []string{"/etc/rules.star", "absolute"}},
		{name: "a module path escaping with ..",
			modules: []Module{{Path: "../rules.star", File: declared.File, Line: 7}},
			want:    []string{"../rules.star", "leaves the repository"}},
		{name: "a module path escaping through a symbolic link",
			links:   map[string]string{".the-loop/hooks/evil.star": filepath.Join(outside, "evil.star")},
			modules: []Module{{Path: ".the-loop/hooks/evil.star", File: declared.File, Line: 7}},
			want:    []string{"evil.star", "resolves outside the repository through a symbolic link"}},
		{name: "a module path through a linked directory that leaves the repository",
			links:   map[string]string{"vendor": outside},
			modules: []Module{{Path: "vendor/evil.star", File: declared.File, Line: 7}},
			want:    []string{"vendor/evil.star", "resolves outside the repository"}},
		{name: "a Python module",
			files:   map[string]string{".the-loop/hooks/rules.py": "import os\n"},
			modules: []Module{{Path: ".the-loop/hooks/rules.py", File: declared.File, Line: 7}},
			want:    []string{"rules.py", "is Python", "port it to .star"}},
		{name: "a module that is not .star",
			files:   map[string]string{"rules.txt": registersOne},
			modules: []Module{{Path: "rules.txt", File: declared.File, Line: 7}},
			want:    []string{"rules.txt", "is not a .star file"}},
		{name: "a missing module",
			modules: []Module{declared},
			want:    []string{hooksFile, "no such file"}},
		{name: "a module that is a directory",
			files:   map[string]string{"dir.star/x": ""},
			modules: []Module{{Path: "dir.star", File: declared.File, Line: 7}},
			want:    []string{"dir.star", "not a regular file"}},
		{name: "a syntax error, at its position",
			files:   map[string]string{hooksFile: "def f(:\n    pass\n"},
			modules: []Module{declared}, file: hooksFile, line: 1,
			want: []string{hooksFile + ":1:8: got", "(loading module " + hooksFile + ", declared at "}},
		{name: "a runtime error at the top level, with the way there",
			files:   map[string]string{hooksFile: "def f():\n    return 1 // 0\nf()\n" + registersOne},
			modules: []Module{declared}, file: hooksFile, line: 2,
			want: []string{hooksFile + ":2:14: floored division by zero (in f, called from " + hooksFile + ":3:2 in <toplevel>)"}},
		{name: "a while loop",
			files:   map[string]string{hooksFile: "def f():\n    while True:\n        pass\n" + registersOne},
			modules: []Module{declared}, file: hooksFile, line: 2,
			want: []string{hooksFile + ":2:5:", "while"}},
		{name: "recursion",
			files:   map[string]string{hooksFile: "def f(n):\n    return f(n - 1) if n else 0\nf(3)\n" + registersOne},
			modules: []Module{declared}, file: hooksFile, line: 2,
			want: []string{"function f called recursively"}},
		{name: "a reassigned global",
			files:   map[string]string{hooksFile: "x = 1\nx = 2\n" + registersOne},
			modules: []Module{declared}, file: hooksFile, line: 2,
			want: []string{hooksFile + ":2:1: cannot reassign global x"}},
		{name: "an if statement at the top level",
			files:   map[string]string{hooksFile: "if True:\n    pass\n" + registersOne},
			modules: []Module{declared}, file: hooksFile, line: 1,
			want: []string{"if statement not within a function"}},
		{name: "an undefined name",
			files:   map[string]string{hooksFile: "hook(\"x-a\", lambda ctx: undefined_thing)\n"},
			modules: []Module{declared}, file: hooksFile, line: 1,
			want: []string{"undefined: undefined_thing"}},
		{name: "a module that registers nothing",
			files:   map[string]string{hooksFile: "X = 1\n"},
			modules: []Module{declared},
			want:    []string{"module " + hooksFile + " registers no hook", "a module that registers no hook is a declaration that silently does nothing"}},
		{name: "an unprefixed name",
			files:   map[string]string{hooksFile: "hook(\"licence\", lambda ctx: ok())\n"},
			modules: []Module{declared}, file: hooksFile, line: 1,
			want: []string{"module " + hooksFile + " registers \"licence\"", "must be named x-<something>; the unprefixed namespace is the-loop's own"}},
		{name: "an unprefixed shipped name",
			files:   map[string]string{hooksFile: "hook(\"validate-artifacts\", lambda ctx: ok())\n"},
			modules: []Module{declared}, file: hooksFile, line: 1,
			want: []string{"\"validate-artifacts\"", "the unprefixed namespace is the-loop's own"}},
		{name: "the bare prefix",
			files:   map[string]string{hooksFile: "hook(\"x-\", lambda ctx: ok())\n"},
			modules: []Module{declared}, file: hooksFile, line: 1,
			want: []string{"\"x-\"", "want x- followed by"}},
		{name: "a non-callable impl",
			files:   map[string]string{hooksFile: "hook(\"x-a\", 42)\n"},
			modules: []Module{declared}, file: hooksFile, line: 1,
			want: []string{"\"x-a\": impl must be callable", "got int"}},
		{name: "a name registered twice by one module",
			files:   map[string]string{hooksFile: "hook(\"x-a\", lambda ctx: ok())\nhook(\"x-a\", lambda ctx: ok())\n"},
			modules: []Module{declared}, file: hooksFile, line: 2,
			want: []string{"\"x-a\" is registered twice by module " + hooksFile, hooksFile + ":1:5", hooksFile + ":2:5"}},
		{name: "a name registered by two modules",
			files:   map[string]string{"a.star": "hook(\"x-a\", lambda ctx: ok())\n", "b.star": "\nhook(\"x-a\", lambda ctx: ok())\n"},
			modules: []Module{{Path: "a.star", File: declared.File, Line: 7}, {Path: "b.star", File: declared.File, Line: 8}},
			file:    "b.star", line: 2,
			want: []string{"\"x-a\" is registered by both module a.star (at a.star:1:5) and module b.star (at b.star:2:5)"}},
		{name: "a module declared twice",
			files:   map[string]string{hooksFile: registersOne},
			modules: []Module{declared, {Path: "./" + hooksFile, File: declared.File, Line: 9}},
			line:    9,
			want:    []string{"declared twice", declared.File + ":7"}},
		{name: "an entry with both path and module",
			modules: []Module{{Path: "a.star", Dotted: "a", File: declared.File, Line: 7}},
			want:    []string{"both path", "want one"}},
		{name: "an entry with neither path nor module",
			modules: []Module{{File: declared.File, Line: 7}},
			want:    []string{"neither path nor module"}},
		{name: "a dotted module not on the hook path, listing the directories searched",
			modules: []Module{{Dotted: "acme.compliance", File: declared.File, Line: 7}},
			opts:    Options{HookPath: []string{"/nonexistent/one", "/nonexistent/two"}},
			want:    []string{"acme/compliance.star is not on the hook path; searched: /nonexistent/one, /nonexistent/two"}},
		{name: "a dotted module with no hook path",
			modules: []Module{{Dotted: "acme.compliance", File: declared.File, Line: 7}},
			want:    []string{"the hook path is empty"}},
		{name: "a malformed dotted name",
			modules: []Module{{Dotted: "acme..x", File: declared.File, Line: 7}},
			want:    []string{"\"acme..x\"", "want a dotted name"}},
		{name: "a module that exceeds its step budget at its top level",
			files:   map[string]string{hooksFile: "def spin():\n    for i in range(1 << 62):\n        pass\nspin()\n" + registersOne},
			modules: []Module{declared}, file: hooksFile, line: 2,
			want: []string{"module " + hooksFile + " exceeded its step budget of 1000000 steps as it loaded (stopped at " + hooksFile + ":2:5)"}},
		{name: "a load of an absolute path",
			files:   map[string]string{hooksFile: "load(\"/etc/lib.star\", \"X\")\n" + registersOne},
			modules: []Module{declared}, file: hooksFile, line: 1,
			want: []string{"cannot load /etc/lib.star", "absolute path"}},
		{name: "a load escaping with ..",
			files:   map[string]string{hooksFile: "load(\"../../../lib.star\", \"X\")\n" + registersOne},
			modules: []Module{declared}, file: hooksFile, line: 1,
			want: []string{"cannot load ../../../lib.star", "leaves the repository"}},
		{name: "a load escaping through a symbolic link",
			files:   map[string]string{hooksFile: "load(\"evil/lib.star\", \"X\")\n" + registersOne},
			links:   map[string]string{".the-loop/hooks/evil": filepath.Join(outside, "evil")},
			modules: []Module{declared}, file: hooksFile, line: 1,
			want: []string{"cannot load evil/lib.star", "resolves outside the repository"}},
		{name: "a load of a Python file",
			files:   map[string]string{hooksFile: "load(\"lib.py\", \"X\")\n" + registersOne},
			modules: []Module{declared}, file: hooksFile, line: 1,
			want: []string{"cannot load lib.py", "port it to .star"}},
		{name: "a load of a missing file",
			files:   map[string]string{hooksFile: "load(\"lib.star\", \"X\")\n" + registersOne},
			modules: []Module{declared}, file: hooksFile, line: 1,
			want: []string{"cannot load lib.star", ".the-loop/hooks/lib.star: no such file"}},
		{name: "a load by label",
			files:   map[string]string{hooksFile: "load(\"@repo//lib.star\", \"X\")\n" + registersOne},
			modules: []Module{declared}, file: hooksFile, line: 1,
			want: []string{"labels are not supported"}},
		{name: "a load cycle",
			files: map[string]string{
				hooksFile:                "load(\"b.star\", \"B\")\n" + registersOne,
				".the-loop/hooks/b.star": "load(\"//.the-loop/hooks/c.star\", \"C\")\nB = C\n",
				".the-loop/hooks/c.star": "load(\"b.star\", \"B\")\nC = B\n"},
			modules: []Module{declared}, file: ".the-loop/hooks/c.star", line: 1,
			want: []string{"load cycle: .the-loop/hooks/b.star loads .the-loop/hooks/c.star loads .the-loop/hooks/b.star"}},
		{name: "a syntax error in a loaded file, at its position",
			files: map[string]string{
				hooksFile:                  "load(\"lib.star\", \"X\")\n" + registersOne,
				".the-loop/hooks/lib.star": "\n\nX = = 1\n"},
			modules: []Module{declared}, file: ".the-loop/hooks/lib.star", line: 3,
			want: []string{".the-loop/hooks/lib.star:3:5: got '=', want primary expression (loading module " + hooksFile}},
		{name: "a loaded file whose top level registers a hook",
			files: map[string]string{
				hooksFile:                  "load(\"lib.star\", \"X\")\n" + registersOne,
				".the-loop/hooks/lib.star": "X = 1\nhook(\"x-lib\", lambda ctx: ok())\n"},
			modules: []Module{declared}, file: ".the-loop/hooks/lib.star", line: 2,
			want: []string{"\"x-lib\" is registered by the top level of .the-loop/hooks/lib.star, a file executed by load()"}},
		{name: "a load of a declared module",
			files: map[string]string{
				"a.star": "load(\"b.star\", \"x\")\n" + registersOne,
				"b.star": "x = 1\nhook(\"x-b\", lambda ctx: ok())\n"},
			modules: []Module{{Path: "a.star", File: declared.File, Line: 7}, {Path: "b.star", File: declared.File, Line: 8}},
			file:    "a.star", line: 1,
			want: []string{"b.star is a declared module", "cannot also be load()ed"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := writeTree(t, c.files)
			for link, target := range c.links {
				p := filepath.Join(root, filepath.FromSlash(link))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(target, p); err != nil {
					t.Fatal(err)
				}
			}
			opts := c.opts
			opts.Repo = root
			ce := mustFailLoad(t, opts, c.modules...)
			wantFile, wantLine := c.file, c.line
			if wantFile == "" {
				wantFile = declared.File
			}
			if wantLine == 0 && c.file == "" {
				wantLine = c.modules[0].Line
			}
			if ce.File != wantFile || ce.Line != wantLine {
				t.Errorf("located at %s:%d, want %s:%d\n%v", ce.File, ce.Line, wantFile, wantLine, ce)
			}
			if ce.Key != "graph.hooks.modules" {
				t.Errorf("key %q, want graph.hooks.modules", ce.Key)
			}
			contains(t, "error", ce.Error(), c.want...)
		})
	}
}

func TestALoadFailureKeepsTheStarlarkErrorReachable(t *testing.T) {
	root := writeTree(t, map[string]string{hooksFile: "def f():\n    fail(\"no\")\nf()\n"})
	_, err := Load([]Module{declared}, Options{Repo: root})
	var ee *sl.EvalError
	if !errors.As(err, &ee) {
		t.Fatalf("got %v, want a *starlark.EvalError inside", err)
	}
	contains(t, "backtrace", ee.Backtrace(), "in f", "Error in fail: fail: no")
}

func TestLoadWithNoModulesExecutesNothing(t *testing.T) {
	table, err := Load(nil, Options{})
	if err != nil || len(table) != 0 {
		t.Fatalf("got %v, %v; want an empty table", table, err)
	}
}

func TestLoadCollectsEveryModulesHooks(t *testing.T) {
	root := writeTree(t, map[string]string{
		"a.star": "hook(\"x-a\", lambda ctx: ok())\nhook(\"x-validate-artifacts\", lambda ctx: ok())\n",
		"b.star": "def _b(ctx):\n    return ok()\nhook(\"x-b\", _b)\n",
	})
	table := mustLoad(t, root, Module{Path: "a.star"}, Module{Path: "b.star"})
	if got := slices.Sorted(maps.Keys(table)); !slices.Equal(got, []string{"x-a", "x-b", "x-validate-artifacts"}) {
		t.Fatalf("got %v", got)
	}
	h := table["x-b"].(*Hook)
	if h.Name() != "x-b" || h.Module() != "b.star" || h.Position().Line != 3 {
		t.Errorf("x-b: name %s module %s at %s", h.Name(), h.Module(), h.Position())
	}
}

func TestLoadExecutesEachLoadedFileOnce(t *testing.T) {
	root := writeTree(t, map[string]string{
		"lib/common.star": "print(\"common executed\")\ndef is_ok(s):\n    return \"SPDX\" in s\n",
		"a/a.star":        "load(\"../lib/common.star\", \"is_ok\")\nhook(\"x-a\", lambda ctx: ok() if is_ok(\"SPDX\") else block())\n",
		"b.star":          "load(\"//lib/common.star\", \"is_ok\")\nload(\"lib/common.star\", is_ok2 = \"is_ok\")\nhook(\"x-b\", lambda ctx: ok())\n",
	})
	logs := &captured{}
	table, err := Load([]Module{{Path: "a/a.star"}, {Path: "b.star"}}, Options{Repo: root, Log: slog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	if got := logs.prints(); !slices.Equal(got, []string{"common executed"}) {
		t.Errorf("prints %q; want the library executed once", got)
	}
	if r := mustRun(t, table, "x-a", root); r.Status != graph.StatusPass {
		t.Errorf("x-a: %+v", r)
	}
}

func TestALoadedFileIsFrozen(t *testing.T) {
	root := writeTree(t, map[string]string{
		"lib.star": "ITEMS = [1, 2]\n",
		"m.star":   "load(\"lib.star\", \"ITEMS\")\ndef f():\n    ITEMS.append(3)\nf()\nhook(\"x-a\", lambda ctx: ok())\n",
	})
	ce := mustFailLoad(t, Options{Repo: root}, Module{Path: "m.star"})
	contains(t, "error", ce.Error(), "cannot append to frozen list")
}

func TestALibraryFunctionMayRegisterWhenTheModuleCallsIt(t *testing.T) {
	root := writeTree(t, map[string]string{
		"lib.star": "def register(name):\n    hook(name, lambda ctx: ok(name))\n",
		"m.star":   "load(\"lib.star\", \"register\")\nregister(\"x-one\")\nregister(\"x-two\")\n",
	})
	table := mustLoad(t, root, Module{Path: "m.star"})
	if len(table) != 2 {
		t.Fatalf("got %v", slices.Sorted(maps.Keys(table)))
	}
	if r := mustRun(t, table, "x-two", root); r.Messages[0].Text != "x-two" {
		t.Errorf("x-two: %+v", r)
	}
}

func TestADottedModuleResolvesOnTheHookPathAndLoadsWithinItsDirectory(t *testing.T) {
	first := writeTree(t, map[string]string{})
	second := writeTree(t, map[string]string{
		"acme/compliance.star": "load(\"common.star\", \"A\")\nload(\"//shared/b.star\", \"B\")\nhook(\"x-acme\", lambda ctx: ok(A + B))\n",
		"acme/common.star":     "A = \"a\"\n",
		"shared/b.star":        "B = \"b\"\n",
		"acme/escape.star":     "load(\"../../x.star\", \"X\")\nhook(\"x-e\", lambda ctx: ok())\n",
	})
	repo := writeTree(t, map[string]string{})
	table, err := Load([]Module{{Dotted: "acme.compliance"}}, Options{Repo: repo, HookPath: []string{first, second}})
	if err != nil {
		t.Fatal(err)
	}
	if r := mustRun(t, table, "x-acme", repo); r.Messages[0].Text != "ab" {
		t.Errorf("x-acme: %+v", r)
	}
	ce := mustFailLoad(t, Options{Repo: repo, HookPath: []string{second}}, Module{Dotted: "acme.escape", File: "h.yaml", Line: 2})
	contains(t, "escape", ce.Error(), filepath.Join(second, "acme/escape.star")+":1:1", "leaves the hook path directory")
}

func TestLoadNeedsAnAbsoluteRepository(t *testing.T) {
	ce := mustFailLoad(t, Options{Repo: "relative"}, declared)
	contains(t, "error", ce.Error(), "not an absolute path")
}

func TestTheDialectAllowsSetsAndNothingLooser(t *testing.T) {
	table, root := loadSource(t, "S = set([1, 2, 2])\nhook(\"x-s\", lambda ctx: ok(str(len(S))))\n")
	if r := mustRun(t, table, "x-s", root); r.Messages[0].Text != "2" {
		t.Errorf("got %+v", r)
	}
	for _, src := range []string{
		"def f():\n    while True:\n        pass\n",
		"for x in [1]:\n    pass\n",
		"x = 1\nx += 1\n",
	} {
		root := writeTree(t, map[string]string{hooksFile: src + registersOne})
		ce := mustFailLoad(t, Options{Repo: root}, declared)
		if ce.File != hooksFile || ce.Line == 0 {
			t.Errorf("%q: not located: %v", src, ce)
		}
	}
}

func TestModuleErrorsNameTheStarFileNotTheConfigWhenStarlarkHasAPosition(t *testing.T) {
	root := writeTree(t, map[string]string{hooksFile: "X = 1\nY = undefined\n"})
	ce := mustFailLoad(t, Options{Repo: root}, declared)
	// A compiler's diagnostic at the fault, then where the module came from.
	want := hooksFile + ":2:5: undefined: undefined (loading module " + hooksFile + ", declared at " + declared.File + ":" + strconv.Itoa(declared.Line) + ")"
	if ce.Error() != want || ce.Key != "graph.hooks.modules" || ce.Col != 5 {
		t.Errorf("got %q (key %q, column %d)\nwant %q", ce.Error(), ce.Key, ce.Col, want)
	}
}

// The seed's abuse cases 3 and 4, under their own names (each is also a row
// of TestLoadRefuses).

func TestAModuleOutsideTheRepositoryIsRefused(t *testing.T) {
	outside := writeTree(t, map[string]string{"rules.star": registersOne})
	root := writeTree(t, map[string]string{})
	if err := os.Symlink(filepath.Join(outside, "rules.star"), filepath.Join(root, "rules.star")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(outside, "rules.star"), "../" + filepath.Base(outside) + "/rules.star", "rules.star"} {
		ce := mustFailLoad(t, Options{Repo: root}, Module{Path: p, File: declared.File, Line: 7})
		if ce.File != declared.File || ce.Line != 7 {
			t.Errorf("%s: located at %s:%d", p, ce.File, ce.Line)
		}
	}
}

func TestAModuleRegisteringAShippedNameFailsToLoad(t *testing.T) {
	root := writeTree(t, map[string]string{hooksFile: "hook(\"lint-artifacts\", lambda ctx: ok())\n"})
	ce := mustFailLoad(t, Options{Repo: root}, declared)
	contains(t, "error", ce.Error(), "registers \"lint-artifacts\"", "the unprefixed namespace is the-loop's own")
}

func TestALoadedFileFaultIsReportedAtItsOwnPosition(t *testing.T) {
	root := writeTree(t, map[string]string{
		hooksFile:  "load(\"//lib.star\", \"x\")\n" + registersOne,
		"lib.star": "def f():\n    return 1 // 0\nx = f()\n",
	})
	ce := mustFailLoad(t, Options{Repo: root}, declared)
	// The way there crosses the load: the module's line 1 loaded lib.star.
	want := "lib.star:2:14: floored division by zero (in f, called from lib.star:3:6 in <toplevel>, called from " + hooksFile + ":1:1 in <toplevel>) (loading module " + hooksFile
	if !strings.HasPrefix(ce.Error(), want) || strings.Count(ce.Error(), "floored") != 1 {
		t.Errorf("got  %q\nwant %q...", ce.Error(), want)
	}
}

func TestAFailingChainOfLoadsReportsItsFirstCauseOnceAndBounded(t *testing.T) {
	files := map[string]string{hooksFile: "load(\"//l0.star\", \"x\")\nhook(\"x-h\", lambda ctx: ok())\n"}
	const chain = maxLoadDepth - 2
	for i := range chain {
		files[fmt.Sprintf("l%d.star", i)] = fmt.Sprintf("load(\"//l%d.star\", \"x\")\n", i+1)
	}
	files[fmt.Sprintf("l%d.star", chain)] = "x = undefined_thing\n"
	root := writeTree(t, files)
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	ce := mustFailLoad(t, Options{Repo: root}, declared)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if !strings.Contains(ce.Error(), "undefined: undefined_thing") || ce.File != fmt.Sprintf("l%d.star", chain) {
		t.Errorf("got %v; want the first cause, at its file", ce)
	}
	if n := len(ce.Error()); n > 4<<10 {
		t.Errorf("the error is %d bytes; want it bounded", n)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<20 {
		t.Errorf("failing the chain allocated %d MiB", grew>>20)
	}
}

func TestAChainOfLoadsDeeperThanTheLimitIsRefused(t *testing.T) {
	files := map[string]string{hooksFile: "load(\"//l0.star\", \"x\")\nhook(\"x-h\", lambda ctx: ok())\n"}
	for i := range 600 {
		files[fmt.Sprintf("l%d.star", i)] = fmt.Sprintf("load(\"//l%d.star\", \"x\")\n", i+1)
	}
	root := writeTree(t, files)
	ce := mustFailLoad(t, Options{Repo: root}, declared)
	if !strings.Contains(ce.Error(), "load() chains more than 64 files deep") || len(ce.Error()) > 2<<10 {
		t.Errorf("got %d bytes: %v", len(ce.Error()), ce)
	}
}
