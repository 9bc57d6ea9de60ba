package policy

import (
	"cmp"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

// diag is a diagnostic a case expects: where, and a piece of what it says.
type diag struct {
	file string // "" is the harness config
	line int
	key  string // "" when any
	says string
}

func (d diag) matches(got Diagnostic) bool {
	return got.File == cmp.Or(d.file, ".the-loop/harness-config.yaml") && got.Line == d.line &&
		(d.key == "" || got.Key == d.key) && strings.Contains(got.Text, d.says)
}

func expect(t *testing.T, what string, got []Diagnostic, want []diag) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %d, want %d:\n%s", what, len(got), len(want), texts(got))
		return
	}
	for i, w := range want {
		if !w.matches(got[i]) {
			t.Errorf("%s[%d]: got %s (key %q), want %s:%d key %q saying %q", what, i, got[i].Text, got[i].Key, cmp.Or(w.file, "the harness config"), w.line, w.key, w.says)
		}
	}
}

func texts(ds []Diagnostic) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString("  " + d.Text + "\n")
	}
	return b.String()
}

const rulesModule = "    modules:\n      - path: .the-loop/hooks/rules.star\n"
const ruleStar = "hook(\"x-rule\", lambda ctx: ok())\n"

// TestCheckingADeclarationFindsEachFaultAndWarning is the table of what a
// repository author can get wrong in graph.hooks, each reported at its
// file and line. Rows marked load need the modules executed (hooks check);
// the others are found without executing anything (config validate).
func TestCheckingADeclarationFindsEachFaultAndWarning(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "evil.star"), []byte("hook(\"x-evil\", lambda ctx: ok())\n"), 0o644)
	hookPath := t.TempDir()
	os.MkdirAll(filepath.Join(hookPath, "acme"), 0o755)
	os.WriteFile(filepath.Join(hookPath, "acme", "compliance.star"), []byte("hook(\"x-arch\", lambda ctx: ok())\n"), 0o644)
	withHookPath := "version: \"0.5.0\"\nrouting:\n  graph:\n    hookPath: [" + hookPath + "]\n"
	t.Setenv(HookPathEnv, "")

	cases := []struct {
		name     string
		hooks    string
		files    map[string]string
		cli      string
		load     bool
		errors   []diag
		warnings []diag
	}{
		{
			name:  "a clean declaration",
			hooks: rulesModule + "    attach:\n      - {hook: x-rule, node: implementation}\n",
			files: map[string]string{".the-loop/hooks/rules.star": ruleStar},
			load:  true,
		},
		{
			name:   "an unknown node, with the nearest suggested",
			hooks:  rulesModule + "    attach:\n      - {hook: x-rule, node: brainstroming}\n",
			files:  map[string]string{".the-loop/hooks/rules.star": ruleStar},
			errors: []diag{{line: 6, key: "graph.hooks.attach[0].node", says: `x-rule is attached to node "brainstroming", which no loop has; did you mean "brainstorming"? The shipped loops' nodes are: phase-selection, brainstorming,`}},
		},
		{
			name:   "an unknown node is found at its own line",
			hooks:  rulesModule + "    attach:\n      - hook: x-rule\n        boundary: exit\n        node: desing\n",
			files:  map[string]string{".the-loop/hooks/rules.star": ruleStar},
			errors: []diag{{line: 8, key: "graph.hooks.attach[0].node", says: `did you mean "design"?`}},
		},
		{
			name:     "a node only the pull-request loop has",
			hooks:    rulesModule + "    attach:\n      - {hook: x-rule, node: pr-approval}\n",
			files:    map[string]string{".the-loop/hooks/rules.star": ruleStar},
			load:     true,
			warnings: []diag{{line: 6, key: "graph.hooks.attach[0].node", says: `x-rule at pr-approval: the work-item loop (pdlc-work-item-loop) has no node "pr-approval", so this hook runs only in pdlc-pr-loop`}},
		},
		{
			name:   "a module file that is missing",
			hooks:  "    modules:\n      - path: .the-loop/hooks/gone.star\n",
			errors: []diag{{line: 4, key: "graph.hooks.modules[0].path", says: "no such file in the repository"}},
		},
		{
			name:   "a module file that is not .star",
			hooks:  "    modules:\n      - path: .the-loop/hooks/rules.txt\n",
			files:  map[string]string{".the-loop/hooks/rules.txt": ruleStar},
			errors: []diag{{line: 4, key: "graph.hooks.modules[0].path", says: `".the-loop/hooks/rules.txt" is not a .star file`}},
		},
		{
			name:   "a module that is a directory",
			hooks:  "    modules:\n      - path: dir.star\n",
			files:  map[string]string{"dir.star/x": ""},
			errors: []diag{{line: 4, key: "graph.hooks.modules[0].path", says: "not a regular file"}},
		},
		{
			name:   "a module path through a symbolic link leading out",
			hooks:  "    modules:\n      - path: linked/evil.star\n",
			errors: []diag{{line: 4, key: "graph.hooks.modules[0].path", says: `"linked/evil.star" resolves outside the repository through a symbolic link`}},
		},
		{
			name:   "a dotted module not on the hook path",
			hooks:  "    modules:\n      - module: acme.missing\n",
			cli:    withHookPath,
			errors: []diag{{line: 4, key: "graph.hooks.modules[0].module", says: "acme/missing.star is not on the hook path; searched: " + hookPath}},
		},
		{
			name:   "a dotted module with no hook path at all",
			hooks:  "    modules:\n      - module: acme.compliance\n",
			errors: []diag{{line: 4, key: "graph.hooks.modules[0].module", says: "the hook path is empty"}},
		},
		{
			name:  "a dotted module on the hook path",
			hooks: "    modules:\n      - module: acme.compliance\n    attach:\n      - {hook: x-arch, node: design}\n",
			cli:   withHookPath,
			load:  true,
		},
		{
			name:     "an entry attachment",
			hooks:    rulesModule + "    attach:\n      - {hook: x-rule, node: design, boundary: entry}\n",
			files:    map[string]string{".the-loop/hooks/rules.star": ruleStar},
			load:     true,
			warnings: []diag{{line: 6, key: "graph.hooks.attach[0].boundary", says: "x-rule at design entry: check never evaluates entry chains; it runs only when advance/run moves an item into design, and a block there does not gate. Attach at exit to gate."}},
		},
		{
			name:   "an unregistered hook, with the nearest suggested",
			hooks:  rulesModule + "    attach:\n      - {hook: x-rul, node: implementation}\n",
			files:  map[string]string{".the-loop/hooks/rules.star": ruleStar},
			load:   true,
			errors: []diag{{line: 6, key: "graph.hooks.attach[0].hook", says: `x-rul is attached at implementation, but no declared module registers it; did you mean "x-rule"? Registered hooks: x-rule`}},
			// x-rule is registered and attached nowhere.
			warnings: []diag{{file: ".the-loop/hooks/rules.star", line: 1, says: "registers x-rule, but no attachment"}},
		},
		{
			name:   "an unregistered hook is found without executing, when the source shows every registration",
			hooks:  rulesModule + "    attach:\n      - {hook: x-rul, node: implementation}\n",
			files:  map[string]string{".the-loop/hooks/rules.star": ruleStar},
			errors: []diag{{line: 6, key: "graph.hooks.attach[0].hook", says: `x-rul is attached at implementation, but no declared module registers it; did you mean "x-rule"? Registered hooks: x-rule`}},
		},
		{
			name:  "a registration the source does not show is left to hooks check",
			hooks: rulesModule + "    attach:\n      - {hook: x-rul, node: implementation}\n",
			files: map[string]string{".the-loop/hooks/rules.star": "N = \"x-rul\"\nhook(N, lambda ctx: ok())\n"},
		},
		{
			name:   "a field ctx does not have",
			hooks:  rulesModule + "    attach:\n      - {hook: x-rule, node: implementation}\n",
			files:  map[string]string{".the-loop/hooks/rules.star": "def _rule(ctx):\n    return ok() if ctx.chnaged else block()\n\nhook(\"x-rule\", _rule)\n"},
			load:   true,
			errors: []diag{{file: ".the-loop/hooks/rules.star", line: 2, says: ".the-loop/hooks/rules.star:2:24: ctx.chnaged: ctx has no field chnaged; did you mean changed?"}},
		},
		{
			name:     "a hook registered and never attached",
			hooks:    rulesModule + "    attach:\n      - {hook: x-rule, node: implementation}\n",
			files:    map[string]string{".the-loop/hooks/rules.star": ruleStar + "hook(\"x-spare\", lambda ctx: ok())\n"},
			load:     true,
			warnings: []diag{{file: ".the-loop/hooks/rules.star", line: 2, says: "module .the-loop/hooks/rules.star registers x-spare, but no attachment in .the-loop/harness-config.yaml names it, so it never runs"}},
		},
		{
			name:   "a module with a syntax error",
			hooks:  rulesModule + "    attach:\n      - {hook: x-rule, node: implementation}\n",
			files:  map[string]string{".the-loop/hooks/rules.star": "def _rule(ctx):\n    return ok(]\n\nhook(\"x-rule\", _rule)\n"},
			load:   true,
			errors: []diag{{file: ".the-loop/hooks/rules.star", line: 2, says: ".the-loop/hooks/rules.star:2:15: got ']', want primary expression (loading module .the-loop/hooks/rules.star, declared at .the-loop/harness-config.yaml:4)"}},
		},
		{
			name:   "one hook name registered by two modules",
			hooks:  rulesModule + "      - path: other.star\n    attach:\n      - {hook: x-rule, node: implementation}\n",
			files:  map[string]string{".the-loop/hooks/rules.star": ruleStar, "other.star": ruleStar},
			load:   true,
			errors: []diag{{file: "other.star", line: 1, says: `"x-rule" is registered by both module .the-loop/hooks/rules.star`}},
		},
		{
			name:   "a module declared twice",
			hooks:  rulesModule + "      - path: ./.the-loop/hooks/rules.star\n",
			files:  map[string]string{".the-loop/hooks/rules.star": ruleStar},
			errors: []diag{{line: 5, key: "graph.hooks.modules[1].path", says: "is declared twice (also at .the-loop/harness-config.yaml:4)"}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.files == nil {
				c.files = map[string]string{}
			}
			root := hookRepo(t, c.hooks, c.files)
			os.Symlink(outside, filepath.Join(root, "linked"))
			e := openRepo(t, root, c.cli)
			check, what := e.CheckDeclaration, "CheckDeclaration"
			if c.load {
				check, what = e.CheckHooks, "CheckHooks"
			}
			rep, err := check()
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			expect(t, "errors", rep.Errors, c.errors)
			expect(t, "warnings", rep.Warnings, c.warnings)
			if got := len(rep.Faults()); got != len(c.errors) || (got == 0) != (rep.Err() == nil) {
				t.Errorf("Faults: %d, Err: %v; want them to match the %d error(s)", got, rep.Err(), len(c.errors))
			}
			if rep.Executed != c.load {
				t.Errorf("Executed = %v, want %v", rep.Executed, c.load)
			}
		})
	}
}

func TestEveryFaultIsReportedNotOnlyTheFirst(t *testing.T) {
	root := hookRepo(t, `    modules:
      - path: .the-loop/hooks/rules.star
      - path: gone.star
      - path: /etc/abs.star
    attach:
      - {hook: x-rule, node: brainstroming}
      - {hook: x-rule, node: implementation}
      - {hook: x-rule, node: nowhere-at-all}
`, map[string]string{".the-loop/hooks/rules.star": ruleStar})
	rep, err := openRepo(t, root, "").CheckDeclaration()
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, d := range rep.Errors {
		lines = append(lines, d.Line)
	}
	if want := []int{5, 6, 8, 10}; !slices.Equal(lines, want) {
		t.Errorf("errors at lines %v, want %v:\n%s", lines, want, texts(rep.Errors))
	}
	// The last suggests nothing: nothing is near it.
	if last := rep.Errors[3].Text; strings.Contains(last, "did you mean") {
		t.Errorf("%s suggests a node that is not near", last)
	}
	joined := rep.Err()
	var ce *graph.ConfigError
	if !errors.As(joined, &ce) || ce.Line != 5 || strings.Count(joined.Error(), "\n") != 3 {
		t.Errorf("Err() = %v, want the four ConfigErrors joined", joined)
	}
	want := []string{VerdictOK, VerdictError, VerdictError}
	for i, m := range rep.Modules {
		if m.Verdict != want[i] {
			t.Errorf("module %s: verdict %s, want %s", m.Label(), m.Verdict, want[i])
		}
	}
	if v := rep.Attach[1].Verdict; v != VerdictOK || !slices.Equal(rep.Attach[1].Loops, []string{graph.WorkItemLoop, graph.PRLoop, graph.ContributionLoop}) {
		t.Errorf("implementation attachment: %s in %v", v, rep.Attach[1].Loops)
	}
}

func TestCheckingADeclarationExecutesNothing(t *testing.T) {
	root := hookRepo(t, rulesModule+"    attach:\n      - {hook: x-rule, node: implementation}\n", map[string]string{
		".the-loop/hooks/rules.star": "hook(\"x-rule\", lambda ctx: ok())\nfail(\"executed\")\n",
	})
	e := openRepo(t, root, "")
	rep, err := e.CheckDeclaration()
	if err != nil || len(rep.Errors) != 0 || rep.Executed || rep.Modules[0].Found != ".the-loop/hooks/rules.star" {
		t.Fatalf("got %+v, %v; want the module found and not executed", rep, err)
	}
	if hooks, err := e.Hooks(); err != nil || len(hooks.Errors) != 0 {
		t.Fatalf("graph hooks: %+v, %v", hooks, err)
	}
	// hooks check executes it, and says where it failed.
	rep, err = e.CheckHooks()
	if err != nil || len(rep.Errors) != 1 || rep.Errors[0].File != ".the-loop/hooks/rules.star" || !strings.Contains(rep.Errors[0].Message, "executed") {
		t.Fatalf("got %+v, %v", rep.Errors, err)
	}
	if v := rep.Attach[0].Verdict; v != VerdictUnchecked {
		t.Errorf("attachment verdict %s, want %s: its hook's module did not load", v, VerdictUnchecked)
	}
}

func TestHooksCheckRefusesWhereRepositoryHooksAreOff(t *testing.T) {
	root := hookRepo(t, rulesModule, map[string]string{".the-loop/hooks/rules.star": "fail(\"executed\")\n"})
	e := openRepo(t, root, "version: \"0.5.0\"\nrouting:\n  graph:\n    repoHooks: false\n")
	_, err := e.CheckHooks()
	if !errors.Is(err, ErrRepoHooksRefused) || !strings.Contains(err.Error(), "config validate") {
		t.Fatalf("got %v, want a refusal that points at config validate", err)
	}
	// The static check executes nothing, so it still runs.
	if rep, err := e.CheckDeclaration(); err != nil || rep.RepoHooks || len(rep.Errors) != 0 {
		t.Fatalf("got %+v, %v", rep, err)
	}
}

func TestGraphHooksListsWithTheStaticWarningsAndNodeFaults(t *testing.T) {
	root := hookRepo(t, rulesModule+`    attach:
      - {hook: x-rule, node: design, boundary: entry}
      - {hook: x-rule, node: desing}
`, map[string]string{})
	rep, err := openRepo(t, root, "").Hooks()
	if err != nil {
		t.Fatal(err)
	}
	expect(t, "errors", rep.Errors, []diag{{line: 7, key: "graph.hooks.attach[1].node", says: `did you mean "design"?`}})
	expect(t, "warnings", rep.Warnings, []diag{{line: 6, says: "check never evaluates entry chains"}})
	if len(rep.Attach) != 2 || rep.Err() == nil {
		t.Errorf("got %+v, want both attachments listed and an error", rep)
	}
}

func TestAMalformedDeclarationIsListedWithEveryFault(t *testing.T) {
	root := hookRepo(t, `    modules:
      - {path: a.star, module: a}
      - path: b.py
      - path: c.star
`, map[string]string{"c.star": ruleStar})
	rep, err := openRepo(t, root, "").Hooks()
	if err != nil {
		t.Fatal(err)
	}
	expect(t, "errors", rep.Errors, []diag{
		{line: 4, says: "name exactly one of path"},
		{line: 5, key: "graph.hooks.modules[1].path", says: "port it to a .star file"},
	})
	if len(rep.Modules) != 3 {
		t.Errorf("listed %+v, want all three modules", rep.Modules)
	}
}

// An attachment applies in every loop that has its node: attaching at
// design, which the pull-request loop lacks, leaves that loop as shipped
// rather than making it unwalkable.
func TestAnAttachmentAppliesInTheLoopsThatHaveItsNode(t *testing.T) {
	root := hookRepo(t, rulesModule+"    attach:\n      - {hook: x-rule, node: design}\n      - {hook: x-rule, node: implementation}\n",
		map[string]string{".the-loop/hooks/rules.star": ruleStar})
	e := openRepo(t, root, "")
	exitHooks := func(loop, node string) []string {
		t.Helper()
		g, err := e.Graph(loop)
		if err != nil {
			t.Fatalf("%s: %v", loop, err)
		}
		n, err := g.Node(node)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range n.Exit {
			out = append(out, c.Hook)
		}
		return out
	}
	if h := exitHooks(graph.WorkItemLoop, "design"); h[len(h)-1] != "x-rule" {
		t.Errorf("work-item design exit: %v", h)
	}
	if h := exitHooks(graph.PRLoop, "implementation"); h[len(h)-1] != "x-rule" {
		t.Errorf("pr implementation exit: %v", h)
	}
	if _, err := e.Graph(graph.AdhocLoop); err != nil {
		t.Errorf("the ad-hoc loop, which has neither node: %v", err)
	}
}

func TestAnAttachmentToANodeNoLoopHasFailsEveryLoop(t *testing.T) {
	root := hookRepo(t, rulesModule+"    attach:\n      - {hook: x-rule, node: brainstroming}\n",
		map[string]string{".the-loop/hooks/rules.star": ruleStar})
	e := openRepo(t, root, "")
	for _, loop := range []string{graph.WorkItemLoop, graph.PRLoop} {
		_, err := e.Graph(loop)
		var ce *graph.ConfigError
		if !errors.As(err, &ce) || ce.Line != 6 || !strings.Contains(err.Error(), `did you mean "brainstorming"?`) {
			t.Errorf("%s: got %v, want the attachment refused at its line", loop, err)
		}
	}
}

// A hook nobody registered fails every loop, not only the one that has its
// node: a typo at pr-approval must not pass check on a work item silently.
func TestAnUnregisteredHookFailsEveryLoopItsNodeIsInOrNot(t *testing.T) {
	root := hookRepo(t, rulesModule+"    attach:\n      - {hook: x-rule, node: implementation}\n      - {hook: x-rul, node: pr-approval}\n",
		map[string]string{".the-loop/hooks/rules.star": ruleStar})
	e := openRepo(t, root, "")
	for _, loop := range []string{graph.WorkItemLoop, graph.PRLoop} {
		_, err := e.Graph(loop)
		var ce *graph.ConfigError
		if !errors.As(err, &ce) || ce.Line != 7 || !strings.Contains(err.Error(), `x-rul is attached at pr-approval, but no declared module registers it; did you mean "x-rule"?`) {
			t.Errorf("%s: got %v, want the attachment refused at its line", loop, err)
		}
	}
}
