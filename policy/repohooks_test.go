package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

// hookRepo writes a repository whose harness config declares the given
// graph.hooks block, plus files, and one work item "item".
func hookRepo(t *testing.T, hooks string, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	files[".the-loop/harness-config.yaml"] = "graph:\n  hooks:\n" + hooks
	files["docs/specs/item/.keep"] = ""
	for name, body := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func openRepo(t *testing.T, root, cliConfig string) *Engine {
	t.Helper()
	cfg := ""
	if cliConfig != "" {
		cfg = filepath.Join(t.TempDir(), "cli.yaml")
		os.WriteFile(cfg, []byte(cliConfig), 0o644)
	}
	e, err := Open(Options{Repo: root, CLIConfig: cfg, Events: &recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func nodeReport(t *testing.T, e *Engine, node string) graph.NodeReport {
	t.Helper()
	reps, err := e.Check([]string{"item"}, false, Selector{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range reps[0].Nodes {
		if n.Node == node {
			return n
		}
	}
	t.Fatalf("no node %s", node)
	return graph.NodeReport{}
}

const attachToImplementation = "    modules:\n      - path: .the-loop/hooks/rules.star\n    attach:\n      - {hook: x-rule, node: implementation}\n"

func TestARepositoryHookRunsAtTheEndOfItsChain(t *testing.T) {
	root := hookRepo(t, attachToImplementation, map[string]string{
		".the-loop/hooks/rules.star": `def _rule(ctx):
    return block(message("no licence", path = "src/a.go"))
hook("x-rule", _rule)
`,
		"docs/specs/item/tasks.md": "---\nstatus: approved\n---\n## Task list\n\n- [x] done\n",
	})
	e := openRepo(t, root, "")
	rt, err := e.Runtime("item", Selector{})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := rt.Graph.Node("implementation")
	if last := n.Exit[len(n.Exit)-1].Hook; last != "x-rule" {
		t.Errorf("the chain ends with %s", last)
	}
	r := nodeReport(t, e, "implementation")
	if r.Status != "block" || !strings.Contains(strings.Join(r.Messages, " "), "no licence (src/a.go)") {
		t.Errorf("got %+v", r)
	}
}

func TestARepositoryHookCannotRescueABlockedChainThroughTheEngine(t *testing.T) {
	root := hookRepo(t, attachToImplementation, map[string]string{
		".the-loop/hooks/rules.star": "hook(\"x-rule\", lambda ctx: ok())\n",
		// tasks.md has an unticked box: the shipped gate blocks first.
		"docs/specs/item/tasks.md": "---\nstatus: approved\n---\n## Task list\n\n- [ ] not done\n",
	})
	r := nodeReport(t, openRepo(t, root, ""), "implementation")
	if r.Status != "block" || !strings.Contains(strings.Join(r.Messages, " "), "unticked") {
		t.Errorf("got %+v", r)
	}
}

func TestARepositoryHookCannotApproveAHumanGate(t *testing.T) {
	root := hookRepo(t, "    modules:\n      - path: h.star\n    attach:\n      - {hook: x-approve, node: requirements-approval}\n      - {hook: x-approve, node: requirements-approval, boundary: entry}\n", map[string]string{
		"h.star": "hook(\"x-approve\", lambda ctx: ok(data = {\"outcome\": \"approved\"}))\n",
	})
	if r := nodeReport(t, openRepo(t, root, ""), "requirements-approval"); r.Status != "wait" {
		t.Errorf("got %+v, want the gate still waiting", r)
	}
}

func TestAModuleOutsideTheRepositoryIsRefused(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "evil.star"), []byte("hook(\"x-evil\", lambda ctx: ok())\n"), 0o644)
	for name, hooks := range map[string]string{
		"absolute": "    modules:\n      - path: " + filepath.Join(outside, "evil.star") + "\n",
		"dotdot":   "    modules:\n      - path: ../" + filepath.Base(outside) + "/evil.star\n",
		"symlink":  "    modules:\n      - path: linked/evil.star\n",
	} {
		t.Run(name, func(t *testing.T) {
			root := hookRepo(t, hooks, map[string]string{})
			os.Symlink(outside, filepath.Join(root, "linked"))
			e, err := Open(Options{Repo: root, Events: &recorder{}})
			if err == nil {
				_, err = e.Check([]string{"item"}, false, Selector{})
			}
			var ce *graph.ConfigError
			if !errors.As(err, &ce) || ce.File != ".the-loop/harness-config.yaml" {
				t.Fatalf("got %v, want a ConfigError naming the declaration", err)
			}
		})
	}
}

func TestAModuleRegisteringAShippedNameFailsToLoad(t *testing.T) {
	root := hookRepo(t, "    modules:\n      - path: h.star\n", map[string]string{
		"h.star": "hook(\"validate-artifacts\", lambda ctx: ok())\n",
	})
	_, err := openRepo(t, root, "").Check([]string{"item"}, false, Selector{})
	var ce *graph.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "validate-artifacts") || !strings.Contains(err.Error(), "x-") {
		t.Fatalf("got %v", err)
	}
}

func TestTwoRepositoriesKeepTheirOwnImplementationsInOneProcess(t *testing.T) {
	mk := func(verdict string) string {
		return hookRepo(t, "    modules:\n      - path: h.star\n    attach:\n      - {hook: x-check, node: phase-selection, boundary: exit}\n", map[string]string{
			"h.star": "hook(\"x-check\", lambda ctx: " + verdict + ")\n",
		})
	}
	a, b := mk(`block("a says no")`), mk("ok()")
	// phase-selection waits first; read the chain instead of the verdict.
	for root, want := range map[string]string{a: "a says no", b: ""} {
		e := openRepo(t, root, "")
		rt, err := e.Runtime("item", Selector{})
		if err != nil {
			t.Fatal(err)
		}
		h, ok := rt.Graph.Hook("x-check")
		if !ok {
			t.Fatal("x-check not resolved")
		}
		n, _ := rt.Graph.Node("phase-selection")
		res, err := h.Run(&graph.Context{Graph: rt.Graph, Node: n, Checkout: e.Checkout, Files: graph.DirectFiles(e.Checkout), Params: map[string]any{}, WorkItem: graph.WorkItem{ID: "item"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(renderAll(res.Messages), " "); got != want {
			t.Errorf("%s: got %q, want %q", root, got, want)
		}
	}
}

func renderAll(ms []graph.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Render()
	}
	return out
}

func TestARaisingRepositoryHookBlocks(t *testing.T) {
	root := hookRepo(t, attachToImplementation, map[string]string{
		".the-loop/hooks/rules.star": "def _rule(ctx):\n    fail(\"boom\")\nhook(\"x-rule\", _rule)\n",
		"docs/specs/item/tasks.md":   "---\nstatus: approved\n---\n## Task list\n\n- [x] done\n",
	})
	r := nodeReport(t, openRepo(t, root, ""), "implementation")
	if r.Status != "block" || !strings.Contains(strings.Join(r.Messages, " "), "boom") {
		t.Errorf("got %+v", r)
	}
}

func TestTheOperatorKillSwitchImportsNothing(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "executed")
	// A module that would fail loudly if it were executed at all.
	root := hookRepo(t, attachToImplementation, map[string]string{
		".the-loop/hooks/rules.star": "fail(\"executed\")\n",
	})
	e := openRepo(t, root, "version: \"0.5.0\"\nrouting:\n  graph:\n    repoHooks: false\n")
	if _, err := e.Check([]string{"item"}, false, Selector{}); err != nil {
		t.Fatalf("refused hooks still loaded: %v", err)
	}
	rt, _ := e.Runtime("item", Selector{})
	if len(rt.Graph.Extensions()) != 0 {
		t.Error("a repository hook was attached")
	}
	notes := e.Notes()
	if len(notes) != 1 || !strings.Contains(notes[0], "1 hook module(s) and 1 attachment(s)") || !strings.Contains(notes[0], root) {
		t.Errorf("notes: %v", notes)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("executed")
	}
}

func TestAModuleIsExecutedOncePerProcess(t *testing.T) {
	root := hookRepo(t, attachToImplementation, map[string]string{
		".the-loop/hooks/rules.star": "print(\"loading\")\nhook(\"x-rule\", lambda ctx: ok())\n",
		"docs/specs/other/.keep":     "",
	})
	e := openRepo(t, root, "")
	r1, _ := e.Runtime("item", Selector{})
	r2, _ := e.Runtime("other", Selector{})
	if r1.Graph != r2.Graph {
		t.Error("two items of one repository compiled the repository's graph twice")
	}
	e2 := openRepo(t, root, "")
	r3, _ := e2.Runtime("item", Selector{})
	if r3.Graph != r1.Graph {
		t.Error("a second engine on the same declaration executed the modules again")
	}
}

// A long-running caller (serve) sees a checkout's modules as they are now:
// mended, or switched to another branch's, without a restart.
func TestAnEngineThatReloadsHooksSeesTheModulesAsTheyAreNow(t *testing.T) {
	root := hookRepo(t, attachToImplementation, map[string]string{".the-loop/hooks/rules.star": "def _r(ctx)\n"})
	open := func() error {
		e, err := Open(Options{Repo: root, Events: &recorder{}, ReloadHooks: true})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.Graph(graph.WorkItemLoop)
		return err
	}
	if err := open(); err == nil {
		t.Fatal("a module with a syntax error loaded")
	}
	os.WriteFile(filepath.Join(root, ".the-loop/hooks/rules.star"), []byte("hook(\"x-rule\", lambda ctx: ok())\n"), 0o644)
	if err := open(); err != nil {
		t.Errorf("the mended module still fails: %v", err)
	}
}
