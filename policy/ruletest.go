package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/the-loop/the-loop/eventlog"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/repo"
	"github.com/the-loop/the-loop/starlark"
)

// TestSuffix names a rule test file: rules.star is tested by rules_test.star.
const TestSuffix = "_test.star"

// ErrNoRuleTests is wrapped when the paths named hold no rule test.
var ErrNoRuleTests = errors.New("no rule tests")

// RuleTests runs the repository's rule tests: the *_test.star files in
// the directories of its declared path modules, or those at or under
// paths (host paths, as a user types them, inside the repository). Each
// test's t.run goes through Trial over an in-memory repository, with the
// repository's own hooks and harness config. It writes nothing.
func (e *Engine) RuleTests(paths []string, run *regexp.Regexp) (*starlark.TestReport, error) {
	if !e.CLI.RepoHooks() {
		return nil, errors.New("this machine refuses repository hooks (routing.graph.repoHooks is false), so their tests cannot run either")
	}
	decl, err := e.Declaration()
	if err != nil {
		return nil, err
	}
	files, err := e.ruleTestFiles(decl, paths)
	if err != nil {
		return nil, err
	}
	// The hooks load once, before any test runs: a module that does not
	// load fails every test alike, and says so once.
	if _, err := e.Graph(graph.WorkItemLoop); err != nil {
		return nil, err
	}
	opts := starlark.TestOptions{Options: e.starlarkOptions(), Run: run, Modules: e.modules(decl)}
	return starlark.RunTests(files, ruleTestRunner{e}, opts)
}

// ruleTestFiles finds the test files to run, repository-relative and
// sorted.
func (e *Engine) ruleTestFiles(decl Declaration, paths []string) ([]string, error) {
	var dirs, files []string
	if len(paths) == 0 {
		for _, m := range decl.Modules {
			if m.Path != "" {
				dirs = append(dirs, path.Dir(m.Path))
			}
		}
		if len(dirs) == 0 {
			return nil, fmt.Errorf("%w: this repository declares no path: module in graph.hooks, so there is nowhere to look; name the test files or directories", ErrNoRuleTests)
		}
	}
	for _, p := range paths {
		rel, err := e.repoPath(p)
		if err != nil {
			return nil, err
		}
		fi, err := e.Checkout.Stat(rel)
		switch {
		case err != nil:
			return nil, fmt.Errorf("%s: %w", p, repo.Cause(err))
		case fi.IsDir():
			dirs = append(dirs, rel)
		case !strings.HasSuffix(rel, TestSuffix):
			return nil, fmt.Errorf("%s: a rule test file's name ends in %s", p, TestSuffix)
		default:
			files = append(files, rel)
		}
	}
	walked := map[string]bool{}
	for _, dir := range dirs {
		if err := e.findTests(dir, len(paths) > 0, walked, &files); err != nil {
			return nil, err
		}
	}
	slices.Sort(files)
	files = slices.Compact(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: no *%s file in %s", ErrNoRuleTests, TestSuffix, strings.Join(slices.Compact(slices.Sorted(slices.Values(dirs))), ", "))
	}
	return files, nil
}

// maxTestDepth bounds how deep a directory named on the command line is
// searched for tests.
const maxTestDepth = 32

// findTests adds the test files in dir, and below it when deep.
func (e *Engine) findTests(dir string, deep bool, walked map[string]bool, files *[]string) error {
	var walk func(dir string, depth int) error
	walk = func(dir string, depth int) error {
		if walked[dir] || depth > maxTestDepth {
			return nil
		}
		walked[dir] = true
		entries, err := e.Checkout.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, ent := range entries {
			p := path.Join(dir, ent.Name)
			switch {
			case ent.Kind == repo.KindRegular && strings.HasSuffix(ent.Name, TestSuffix):
				*files = append(*files, p)
			case ent.Kind == repo.KindDir && deep && ent.Name != ".git":
				if err := walk(p, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(dir, 0)
}

// repoPath is the repository path of p, a host path relative to the
// working directory or absolute, which must lie inside the repository.
func (e *Engine) repoPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	rel, ok := e.Checkout.Rel(abs)
	if !ok {
		return "", fmt.Errorf("%s is outside the repository %s", p, e.Root)
	}
	return cleanOr(rel), nil
}

func cleanOr(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}

// ruleTestRunner runs t.run's trials for RuleTests.
type ruleTestRunner struct{ e *Engine }

// RunTrial builds the test's repository in memory, with each item's
// artifacts and state in its spec folder, and runs the trial on an engine
// over it that shares this one's configuration and loaded hooks.
func (r ruleTestRunner) RunTrial(req starlark.TrialRequest) (*graph.TrialReport, error) {
	e := r.e
	files := maps.Clone(req.Files)
	var dirs []string
	for _, it := range req.Items {
		if !repo.ValidID(it.ID) {
			return nil, fmt.Errorf("item %q: not a work item id (a spec folder's name: letters, digits, '.', '_' or '-')", it.ID)
		}
		if err := e.checkTestNode(it); err != nil {
			return nil, err
		}
		dir := e.Checkout.ItemDir(it.ID)
		dirs = append(dirs, dir) // the folder exists even with no artifact
		for name, content := range it.Artifacts {
			p := path.Join(dir, name)
			if _, taken := files[p]; taken || path.Dir(p) != dir {
				return nil, fmt.Errorf("item %s: artifact %q: want a file name in the spec folder that t.repo's files do not already hold", it.ID, name)
			}
			files[p] = []byte(content)
		}
		if it.Node != "" || it.State != nil {
			st := map[string]any{"version": graph.StateVersion, "workItem": it.ID}
			maps.Copy(st, it.State)
			if it.Node != "" {
				st["currentNode"] = it.Node
			}
			data, err := json.Marshal(st)
			if err != nil {
				return nil, fmt.Errorf("item %s: state: %w", it.ID, err)
			}
			files[path.Join(dir, graph.StateFile)] = data
		}
	}
	co, err := repo.InMemory("the test's repository", files, dirs...)
	if err != nil {
		return nil, err
	}
	if co, err = co.WithSpecDir(e.SpecDirRel()); err != nil {
		return nil, err
	}
	mem := &Engine{Root: e.Root, Checkout: co, Harness: e.Harness, CLI: e.CLI, log: e.log,
		events: eventlog.Discard, integration: graph.NoIntegration{}, base: knownChanges(req.Changed),
		budget: e.budget} // one run's rule time, however many trials it makes
	return mem.Trial(req.Item, req.Trial, Selector{})
}

// checkTestNode refuses an item put at a node its loop does not have,
// saying which was likely meant, where the test made it.
func (e *Engine) checkTestNode(it starlark.TestItem) error {
	if it.Node == "" {
		return nil
	}
	name := graph.WorkItemLoop
	if loop, ok := it.State["loop"].(string); ok && graph.OuterLoop(loop) != "" {
		name = graph.OuterLoop(loop)
	}
	g, err := e.Graph(name)
	if err != nil {
		return err
	}
	if !g.Has(it.Node) {
		return fmt.Errorf("repo.item(%q, node = %q): %w", it.ID, it.Node, g.NoNode(it.Node))
	}
	return nil
}

// knownChanges are changes already known, nil for none named.
func knownChanges(paths []string) *changes {
	if paths == nil {
		return nil
	}
	c := &changes{done: make(chan struct{}), quit: func() {}, paths: slices.Clone(paths)}
	close(c.done)
	return c
}
