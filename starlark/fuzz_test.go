package starlark

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// FuzzLoad executes arbitrary source as a declared module and calls every
// hook it registers: errors are expected, a panic (which Load and Run turn
// into an "internal error") never is.
func FuzzLoad(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.star")
	for _, s := range seeds {
		src, err := os.ReadFile(s)
		if err == nil {
			f.Add(string(src))
		}
	}
	for _, b := range bombs {
		f.Add(bombSource(b.body))
	}
	for _, s := range []string{
		registersOne,
		"load(\"//x.star\", \"y\")\n",
		"def f(ctx):\n    return block([message(p, path = p) for p in ctx.repo.glob(\"**\")])\nhook(\"x-f\", f)\n",
		"hook(\"x-a\", lambda ctx: ok(data = {\"a\": ctx.params}))\n",
		"x = 1\nx = 2\n",
		"def f(ctx):\n    s = \"\"\n    for i in range(100):\n        s += \"%d\" % i\n    return ok(s.replace(\"1\", \"one\"))\nhook(\"x-s\", f)\n",
	} {
		f.Add(s)
	}
	limits := Limits{Steps: 100_000, Deadline: time.Second, ReadBytes: 1 << 10, ReadTotal: 4 << 10, Heap: 32 << 20}
	f.Fuzz(func(t *testing.T, src string) {
		root := writeTree(t, map[string]string{hooksFile: src, "x.star": "y = 1\n", "src/a.go": "package a\n"})
		table, err := Load([]Module{declared}, Options{Repo: root, Limits: limits})
		if err != nil {
			if strings.Contains(err.Error(), "internal error") {
				t.Fatalf("Load panicked: %v", err)
			}
			return
		}
		for _, name := range slices.Sorted(maps.Keys(table)) {
			_, err := table[name].Run(gctx(root))
			if err != nil && strings.Contains(err.Error(), "internal error") {
				t.Fatalf("%s panicked: %v", name, err)
			}
		}
	})
}
