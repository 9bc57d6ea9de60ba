package builtins

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/repo"
)

const awaitInnerLoopsName = "await-inner-loops"

func init() { register(awaitInnerLoopsName, awaitInnerLoops{}) }

// Where a work item's inner (pull-request) loops keep their state, under its
// spec folder: pr-loops/pr-<n>/ for a pull request in the origin repository,
// pr-loops/<owner>__<repo>/pr-<n>/ for one in a contributing repository.
const (
	prLoopsDir = "pr-loops"
	// innerCompleteNode is the inner loop's terminal success node.
	innerCompleteNode = "complete"
)

// awaitInnerLoops is the await-inner-loops hook, the one seam between the
// outer work-item loop and its per-pull-request inner loops. It reads the
// inner graph-state.json files and the execution log's front matter and
// nothing else (no network, no writes), so check evaluates it exactly as a
// live advance does.
//
// It passes when every inner loop found is at its complete node and every
// repository the execution log declares (front matter repos:) has at least
// one inner loop; with no inner loop and no declaration it passes
// vacuously. It waits, naming the rest, while a loop is unfinished (an
// unreadable state counts as unfinished) or a declared repository has none.
// A declared repository that is not a usable owner/repo name blocks, since
// waiting on it would wait forever. Top-level pr-<n> loops belong to the
// origin repository (Settings.OriginRepo); without one they cannot be
// attributed, and the wait says so.
type awaitInnerLoops struct{}

var (
	_ graph.Hook         = awaitInnerLoops{}
	_ graph.ParamChecker = awaitInnerLoops{}
)

func (awaitInnerLoops) CheckParams(params map[string]any) error {
	return noWithParams(awaitInnerLoopsName).check(params)
}

// repoStateKey maps owner/repo to the directory name owner__repo
// (graph.RepoName.StateKey), refusing rather than rewriting anything
// graph.ParseRepoName refuses: a name quietly sanitised into a valid one
// would file one repository's state under another's. A GitHub Enterprise
// host before owner/repo, which the original takes, is refused too: no
// verb here makes an inner loop under such a key, so waiting on one would
// wait forever.
//
// Departure from the original (docs/compatibility.md#repository-names-one-reader-ownername-only): a host/owner/repo entry in repos: blocks instead of waiting forever.
func repoStateKey(repo string) (string, error) {
	r, err := graph.ParseRepoName(strings.TrimSpace(repo))
	if err != nil {
		return "", err
	}
	return r.StateKey(), nil
}

// innerLoop is one inner loop found on disk: its directory under pr-loops/
// (pr-16, octo__infra/pr-7) and its current node, "" when unreadable.
type innerLoop struct {
	label   string
	current string
}

func innerLoops(files *graph.Files, specDir string) []innerLoop {
	root := path.Join(specDir, prLoopsDir)
	// pr-<n>/graph-state.json, then <anything>/pr-<n>/graph-state.json.
	var dirs []string
	for _, top := range innerSubdirs(files, root) {
		dir := path.Join(root, top)
		if strings.HasPrefix(top, "pr-") {
			dirs = append(dirs, dir)
		}
		for _, sub := range innerSubdirs(files, dir) {
			if strings.HasPrefix(sub, "pr-") {
				dirs = append(dirs, path.Join(dir, sub))
			}
		}
	}
	seen := map[innerLoop]bool{}
	var out []innerLoop
	for _, dir := range dirs {
		state := path.Join(dir, graph.StateFile)
		if _, err := files.Kind(state); err != nil {
			continue
		}
		loop := innerLoop{label: strings.TrimPrefix(dir, root+"/"), current: innerCurrentNode(files, state)}
		if !seen[loop] {
			seen[loop] = true
			out = append(out, loop)
		}
	}
	slices.SortFunc(out, func(a, b innerLoop) int {
		if c := strings.Compare(a.label, b.label); c != 0 {
			return c
		}
		return strings.Compare(a.current, b.current)
	})
	return out
}

// innerSubdirs lists the names of dir's subdirectories (links to
// directories inside the checkout included), sorted; none when dir cannot
// be read.
func innerSubdirs(files *graph.Files, dir string) []string {
	entries, err := files.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if kind, err := files.Kind(path.Join(dir, e.Name)); err == nil && kind == repo.KindDir {
			out = append(out, e.Name)
		}
	}
	return out
}

// innerCurrentNode is the state file's currentNode; "" for a file that
// cannot be read or decoded, which therefore never counts as finished.
func innerCurrentNode(files *graph.Files, rel string) string {
	data, err := files.ReadFile(rel)
	if err != nil {
		return ""
	}
	var state map[string]any
	if err := json.Unmarshal(data, &state); err != nil {
		return ""
	}
	v, present := state["currentNode"]
	if !present {
		return ""
	}
	return pythonStr(v)
}

// declaredRepos is execution-log.md's front-matter repos: list, read through
// the evaluation's files, and the line of its repos: key. Anything but a
// list is no declaration.
func declaredRepos(files *graph.Files, specDir string) (repos []string, line int) {
	fm, _, lines, _ := files.FrontMatterLines(path.Join(specDir, executionLog))
	raw, ok := fm["repos"].([]any)
	if !ok {
		return nil, 0
	}
	for _, e := range raw {
		if s := fmTrim(pythonStr(e)); s != "" {
			repos = append(repos, s)
		}
	}
	return repos, lines.Key("repos")
}

// reposWithoutLoop lists the declared repositories with no inner loop, and
// whether a top-level loop went unattributed because the origin is unknown.
func reposWithoutLoop(declared []string, loops []innerLoop, origin string) (missing []string, originUnknown bool, err error) {
	originKey := ""
	if origin != "" {
		originKey, _ = repoStateKey(origin)
	}
	topLevel := slices.ContainsFunc(loops, func(l innerLoop) bool { return !strings.Contains(l.label, "/") })
	for _, repo := range declared {
		key, err := repoStateKey(repo)
		if err != nil {
			return nil, false, err
		}
		var found bool
		if originKey != "" && key == originKey {
			found = topLevel
		} else {
			found = slices.ContainsFunc(loops, func(l innerLoop) bool { return strings.HasPrefix(l.label, key+"/") })
			if !found && originKey == "" && topLevel {
				originUnknown = true
			}
		}
		if !found {
			missing = append(missing, repo)
		}
	}
	return missing, originUnknown, nil
}

func (awaitInnerLoops) Run(ctx *graph.Context) (graph.Result, error) {
	specDir := ctx.WorkItem.Dir
	loops := innerLoops(ctx.Files, specDir)
	declared, declaredAt := declaredRepos(ctx.Files, specDir)
	missing, originUnknown, err := reposWithoutLoop(declared, loops, ctx.Settings.OriginRepo)
	if err != nil {
		r := graph.Block(awaitInnerLoopsName, onLine(findingAt(path.Join(specDir, executionLog),
			"execution-log.md declares a repository the-loop cannot use (%v); repos: entries are <owner>/<repo>", err), declaredAt, 0))
		r.Data = map[string]any{"declared": declared}
		return r, nil
	}
	pending := []string{}
	for _, l := range loops {
		if l.current != innerCompleteNode {
			pending = append(pending, l.label)
		}
	}
	if len(pending) == 0 && len(missing) == 0 {
		return graph.Pass(awaitInnerLoopsName, map[string]any{"inner_loops": len(loops), "declared": len(declared)}), nil
	}
	var parts []string
	if len(pending) > 0 {
		parts = append(parts, fmt.Sprintf("%d inner loop(s) not finished: %s", len(pending), strings.Join(pending, ", ")))
	}
	if len(missing) > 0 {
		parts = append(parts, fmt.Sprintf("%d declared repository(ies) with no inner loop yet: %s", len(missing), strings.Join(missing, ", ")))
	}
	if originUnknown {
		parts = append(parts, "pr-loops/pr-<n>/ cannot be attributed to a repository while the origin repository is unknown (set ticketing.github owner and repo)")
	}
	r := graph.Wait(awaitInnerLoopsName, strings.Join(parts, "; ")+
		"; every pull request completes its pdlc-pr-loop before the work item moves past implementation")
	if missing == nil {
		missing = []string{}
	}
	r.Data = map[string]any{"inner_loops": len(loops), "pending": pending, "missing_repos": missing}
	return r, nil
}
