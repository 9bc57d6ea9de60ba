package starlark

import (
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/repo"
)

// revisionOf is a Sources over files held in memory, as a revision of the
// repository is: read-only, and nothing like the checkout's.
type revisionOf fstest.MapFS

func (r revisionOf) Stat(rel string) (fs.FileInfo, error) { return fs.Stat(fstest.MapFS(r), rel) }
func (r revisionOf) Abs(rel string) string                { return "origin/main:" + rel }
func (r revisionOf) ReadFile(rel string, limit int64) ([]byte, error) {
	b, err := fs.ReadFile(fstest.MapFS(r), rel)
	if err == nil && int64(len(b)) > limit {
		return nil, &repo.TooLargeError{Size: int64(len(b)), Limit: limit}
	}
	return b, err
}

func files(m map[string]string) revisionOf {
	r := revisionOf{}
	for k, v := range m {
		r[k] = &fstest.MapFile{Data: []byte(v)}
	}
	return r
}

// The base branch's rule: every Go file carries a licence header. The
// change under review rewrote it to pass everything, and added a file
// without a header.
const (
	baseRule = `
load("//.the-loop/hooks/lib.star", "missing")
def _licence(ctx):
    bad = missing(ctx)
    if bad:
        return block([message("no SPDX header", path = p) for p in bad])
    return ok()
hook("x-licence", _licence)
`
	baseLib = `
def missing(ctx):
    return [p for p in ctx.repo.glob("src/*.go") if "SPDX" not in ctx.repo.read(p)]
`
	weakenedRule = `
hook("x-licence", lambda ctx: ok())
`
)

func TestRulesFromARevisionJudgeTheCheckout(t *testing.T) {
	root := writeTree(t, map[string]string{
		hooksFile:  weakenedRule,
		"src/a.go": "package a\n",
	})
	rules := files(map[string]string{hooksFile: baseRule, ".the-loop/hooks/lib.star": baseLib})
	table, err := Load([]Module{declared}, Options{Repo: root, Rules: rules, RulesName: "origin/main", Limits: testLimits})
	if err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, table, "x-licence", root)
	if r.Status != graph.StatusBlock || len(r.Messages) != 1 || r.Messages[0].Path != "src/a.go" {
		t.Errorf("got %+v, want the base branch's rule to block the checkout's file", r)
	}
	// The checkout's own rule, as it would judge without Rules.
	if r := mustRun(t, mustLoad(t, root, declared), "x-licence", root); r.Status != graph.StatusPass {
		t.Errorf("control: got %+v, want the weakened rule to pass", r)
	}
}

func TestARuleMissingFromTheRevisionIsNamedThere(t *testing.T) {
	root := writeTree(t, map[string]string{hooksFile: weakenedRule})
	ce := mustFailLoad(t, Options{Repo: root, Rules: files(nil), RulesName: "origin/main"}, declared)
	contains(t, "error", ce.Error(), "no such file in origin/main")
}

func TestARevisionsLoadCannotReachTheCheckout(t *testing.T) {
	root := writeTree(t, map[string]string{"lib.star": "x = 1\n"})
	rules := files(map[string]string{hooksFile: `load("//lib.star", "x")` + "\nhook(\"x-a\", lambda ctx: ok())\n"})
	ce := mustFailLoad(t, Options{Repo: root, Rules: rules, RulesName: "origin/main"}, declared)
	contains(t, "error", ce.Error(), "lib.star", "no such file in origin/main")
}
