package policy

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

const seeingRule = `
def _seen(ctx):
    return block(message("at %s, artifacts %s, changed %s, files %s" % (
        ctx.work_item.current_node, sorted(ctx.artifacts.keys()), ctx.changed, ctx.repo.glob("**")), path = "x"))

hook("x-rule", _seen)
`

func TestARuleTestRunsTheRepositorysHookOverItsOwnRepositoryInMemory(t *testing.T) {
	root := hookRepo(t, attachToImplementation, map[string]string{
		".the-loop/hooks/rules.star": seeingRule,
		".the-loop/hooks/rules_test.star": `
def test_what_the_hook_sees(t):
    repo = t.repo(files = {"src/a.go": "package a\n"})
    item = repo.item("issue-1", node = "design", artifacts = {"design.md": "# D\n"})
    res = t.run("x-rule", item, node = "design", changed = ["src/a.go"])
    t.status(res, "block")
    t.finding(res, contains = "at design, artifacts [\"design.md\"], changed [\"src/a.go\"], files [\"docs/specs/issue-1/design.md\", \"docs/specs/issue-1/graph-state.json\", \"src/a.go\"]")
    t.true(res.under_check.startswith("it is not attached at design's exit; check runs it only where graph.hooks.attach puts it; and the chain stops before it: validate-artifacts blocked"))
    t.eq([(b.hook, b.status) for b in res.before], [("validate-artifacts", "block")])

def test_an_item_at_a_node_the_loop_lacks_is_refused(t):
    item = t.repo().item("issue-3", node = "implementaton")
    t.fails(lambda: t.run("x-rule", item), 'repo.item\\("issue-3", node = "implementaton"\\): the pdlc-work-item-loop loop has no node "implementaton" \\(did you mean "implementation"\\?\\)')

def test_an_item_without_a_node_is_at_the_start(t):
    res = t.run("x-rule", t.repo().item("issue-2"))
    t.finding(res, contains = "at phase-selection, artifacts [], changed None, files []")
    t.eq(res.node, "implementation")
`,
		"src/real.go": "package real\n",
	})
	before, _ := os.ReadDir(filepath.Join(root, "docs/specs"))
	rep, err := openRepo(t, root, "").RuleTests(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed != 3 || rep.Failed != 0 {
		t.Fatalf("passed %d, failed %d: %+v", rep.Passed, rep.Failed, rep.Files)
	}
	after, _ := os.ReadDir(filepath.Join(root, "docs/specs"))
	if len(after) != len(before) {
		t.Error("a rule test wrote a work item to disk")
	}
}

func TestRuleTestsFindNothingToRunSayWhere(t *testing.T) {
	root := hookRepo(t, attachToImplementation, map[string]string{".the-loop/hooks/rules.star": seeingRule})
	_, err := openRepo(t, root, "").RuleTests(nil, regexp.MustCompile("x"))
	if !errors.Is(err, ErrNoRuleTests) || err.Error() != "no rule tests: no *_test.star file in .the-loop/hooks" {
		t.Errorf("got %v", err)
	}
	bare := hookRepo(t, "    modules: []\n    attach: []\n", map[string]string{})
	if _, err := openRepo(t, bare, "").RuleTests(nil, nil); !errors.Is(err, ErrNoRuleTests) {
		t.Errorf("a repository that declares no module: got %v", err)
	}
}

func TestParseParamsReadsNumbersAsTheConfigWould(t *testing.T) {
	got, err := ParseParams(`{"n": 2, "f": 2.5, "list": [1, {"deep": 3}], "s": "x"}`)
	if err != nil {
		t.Fatal(err)
	}
	if got["n"] != 2 || got["f"] != 2.5 || got["list"].([]any)[0] != 1 || got["list"].([]any)[1].(map[string]any)["deep"] != 3 {
		t.Errorf("got %#v", got)
	}
	for _, bad := range []string{`[1]`, `"s"`, `{"a": 1} {}`, `{`, `{"x": 1e400}`, `{"x": [-1e999]}`} {
		if _, err := ParseParams(bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}
