package starlark

import (
	"fmt"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/internal/benchcpu"
)

// generatedModule is a module of n lines or a little more: rules that
// compile a pattern at the top level and, when called, glob, filter and
// report, the shape a repository's house rules take.
func generatedModule(n int) string {
	var b strings.Builder
	b.WriteString("# Generated for BenchmarkLoad500LineModule.\nload(\"//lib/common.star\", \"is_generated\")\n\n")
	for i := 0; strings.Count(b.String(), "\n") < n; i++ {
		fmt.Fprintf(&b, `_PATTERN_%[1]d = re.compile("^(feat|fix)-%[1]d-[a-z]+$")
_LIMITS_%[1]d = {"max_len": %[1]d + 80, "tags": ["a", "b", "c"]}

def _rule_%[1]d(ctx):
    bad = []
    for p in ctx.repo.glob("src/*.go"):
        if is_generated(p) or len(p) > _LIMITS_%[1]d["max_len"]:
            bad.append(message("rule %[1]d: %%s" %% p, path = p))
    if bad:
        return block(bad)
    return ok()

hook("x-rule-%[1]d", _rule_%[1]d)
`, i)
	}
	return b.String()
}

// BenchmarkLoad500LineModule measures Load on a 500-line module that loads
// a library: resolving, reading, parsing, rewriting, compiling and
// executing both. Target: under 5 ms.
func BenchmarkLoad500LineModule(b *testing.B) {
	src := generatedModule(500)
	root := writeTree(b, map[string]string{
		hooksFile:         src,
		"lib/common.star": "def is_generated(p):\n    return p.endswith(\"_gen.go\")\n",
	})
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load([]Module{declared}, Options{Repo: root}); err != nil {
			b.Fatal(err)
		}
	}
}

// licenceRule is the seed's example hook.
const licenceRule = `
def _licence_header(ctx):
    missing = [p for p in ctx.repo.glob("src/**/*.go") if "SPDX" not in ctx.repo.read(p)]
    if missing:
        return block([message("missing SPDX header", path = p) for p in missing])
    return ok()

hook("x-licence-header", _licence_header)
`

// licenceHook writes files and the licence rule into a repository and
// returns the loaded hook and the repository.
func licenceHook(b *testing.B, files map[string]string) (graph.Hook, string) {
	files[hooksFile] = licenceRule
	root := writeTree(b, files)
	table, err := Load([]Module{declared}, Options{Repo: root})
	if err != nil {
		b.Fatal(err)
	}
	return table["x-licence-header"], root
}

// BenchmarkHookCall measures one call of the seed's licence-header rule
// over a small repository: 50 Go files of about 4 KiB.
func BenchmarkHookCall(b *testing.B) {
	files := map[string]string{}
	body := "// SPDX-License-Identifier: MIT\npackage p\n" + strings.Repeat("// filler line of a Go source file\n", 115)
	for i := range 50 {
		files[fmt.Sprintf("src/pkg%d/f%d.go", i%5, i)] = body
	}
	h, root := licenceHook(b, files)
	b.ReportAllocs()
	for b.Loop() {
		r, err := h.Run(gctx(root))
		if err != nil || r.Status != "pass" {
			b.Fatal(r, err)
		}
	}
}

// BenchmarkHookCallOverhead is a call that does nothing: the cost of the
// thread, ctx, deadline timer and memory watchdog.
func BenchmarkHookCallOverhead(b *testing.B) {
	root := writeTree(b, map[string]string{hooksFile: "hook(\"x-ok\", lambda ctx: ok())\n"})
	table, err := Load([]Module{declared}, Options{Repo: root})
	if err != nil {
		b.Fatal(err)
	}
	h := table["x-ok"]
	c := gctx(root)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.Run(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkArithmetic is a loop of integer operations, which the rewrite
// routes through $add and $mul: it prices the guards on the common case.
func BenchmarkArithmetic(b *testing.B) {
	root := writeTree(b, map[string]string{hooksFile: `
def _sum(ctx):
    total = 0
    for i in range(10000):
        total = total + i * 2 % 7
        total += 1
    return ok(str(total))

hook("x-sum", _sum)
`})
	table, err := Load([]Module{declared}, Options{Repo: root})
	if err != nil {
		b.Fatal(err)
	}
	h := table["x-sum"]
	for b.Loop() {
		if _, err := h.Run(gctx(root)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLicenceRule10k is one call of the licence-header rule over
// 10,000 files of about 4 KiB, read through a fresh read-only cache as
// check reads them: the walk, the read-ahead and the reads, without the
// process around them (policy's BenchmarkLicenceHeader10k has that).
func BenchmarkLicenceRule10k(b *testing.B) {
	files := map[string]string{}
	body := strings.Repeat("// a line of ordinary Go source, about sixty bytes long.\n", 70)
	for i := range 10_000 {
		head := "// SPDX-License-Identifier: MIT\n\n"
		if i%10 == 0 {
			head = "// no licence here\n\n"
		}
		files[fmt.Sprintf("src/pkg%03d/file%05d.go", i/100, i)] = head + "package pkg\n\n" + body
	}
	h, root := licenceHook(b, files)
	b.ReportAllocs()
	stop := benchcpu.Start(b)
	for b.Loop() {
		c := gctx(root)
		c.Files = graph.NewFiles(c.Checkout)
		r, err := h.Run(c)
		if err != nil || r.Status != "block" || len(r.Messages) != 1000 {
			b.Fatal(r.Status, len(r.Messages), err)
		}
	}
	stop()
}
