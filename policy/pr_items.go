package policy

import (
	"cmp"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/the-loop/the-loop/graph"
)

// Link is a work item a pull request belongs to, and why.
type Link struct {
	Item string
	// Why says what links it, e.g. "linked by the pull request's body
	// (Closes #31)"; several reasons are joined with "; ".
	Why string
}

// issueBranch is a head branch named for its issue, as the original
// reads one: issue-31, issue-31-fix, feature/issue-31,
// claude/github-issue-31-x, issue/31 (but not tissue-31 or issue-31a).
//
// Departure from the original (docs/compatibility.md#the-pull-request-gate-and-adoption): issue-N must stand as a word in the branch name.
var issueBranch = regexp.MustCompile(`(?i)(?:^|[^a-z0-9])issue[-/]([0-9]{1,9})(?:[^a-z0-9]|$)`)

// HowToLink says how a pull request names its work item, for a gate that
// found none.
const HowToLink = `write "Closes #N" in its description, or name its branch issue-N-..., where N is the number of the issue whose spec folder is issue-N`

// LinkedItems are the work items pull request pr belongs to, sorted: the
// issues its body closes (#N is the item issue-N, the original's
// convention, when that spec folder exists), the issue its head branch is
// named for, and the items whose state holds an inner loop for it. A
// reference to another repository's issue names no item of this one: the
// items are the issues of the harness config's ticketing.github repository,
// else of the pull request's.
func (e *Engine) LinkedItems(pr *PullRequest) ([]Link, error) {
	why := map[string][]string{}
	add := func(id, reason string) {
		if _, err := e.Checkout.Item(id); err != nil {
			return
		}
		if !slices.Contains(why[id], reason) {
			why[id] = append(why[id], reason)
		}
	}
	home := cmp.Or(e.Harness.OriginRepo(), pr.Repo)
	refs, truncated := ClosingRefs(pr.Body)
	if truncated {
		e.note(fmt.Sprintf("read only the first %d closing references in the pull request's body, of its first %d bytes", maxRefs, maxBodyBytes))
	}
	for _, r := range refs {
		in := cmp.Or(r.Repo, pr.Repo)
		if home != "" && !strings.EqualFold(in, home) {
			continue
		}
		if home == "" && r.Repo != "" {
			continue // nothing says which repository the items are issues of
		}
		add(fmt.Sprintf("issue-%d", r.Number), fmt.Sprintf("linked by the pull request's body (%s)", r.Text))
	}
	if pr.Event != EventMergeGroup {
		if m := issueBranch.FindStringSubmatch(pr.HeadRef); m != nil {
			n, _ := strconv.Atoi(m[1])
			add(fmt.Sprintf("issue-%d", n), fmt.Sprintf("linked by the pull request's head branch (%s)", pr.HeadRef))
		}
	}
	if pr.Number > 0 {
		if err := e.boundLoops(pr, home, add); err != nil {
			return nil, err
		}
	}
	links := make([]Link, 0, len(why))
	for id, reasons := range why {
		links = append(links, Link{Item: id, Why: strings.Join(reasons, "; ")})
	}
	slices.SortFunc(links, func(a, b Link) int { return strings.Compare(a.Item, b.Item) })
	return links, nil
}

// boundLoops adds the items whose spec folder holds pr's inner loop: its
// state under pr-loops/pr-N/ when pr is in the items' repository (or no
// one says which that is), under pr-loops/OWNER__NAME/pr-N/ when it is in
// another. Existence is enough: check reads and reports the state.
func (e *Engine) boundLoops(pr *PullRequest, home string, add func(id, reason string)) error {
	var dirs []string
	if home == "" || pr.Repo == "" || strings.EqualFold(pr.Repo, home) {
		dir, _ := innerLoopDir(pr.Number, "")
		dirs = append(dirs, dir)
	}
	if pr.Repo != "" && !strings.EqualFold(pr.Repo, home) {
		dir, err := innerLoopDir(pr.Number, pr.Repo)
		if err != nil {
			return err
		}
		dirs = append(dirs, dir)
	}
	items, err := e.Items()
	if err != nil {
		return nil // no spec directory: no loops; check says so
	}
	for _, id := range items {
		it, err := e.Checkout.Item(id)
		if err != nil {
			continue
		}
		for _, d := range dirs {
			state := path.Join(graph.StateDirOf(it.Dir, d), graph.StateFile)
			if _, err := e.Checkout.Lstat(state); err == nil {
				add(id, fmt.Sprintf("its inner loop for pull request #%d (%s)", pr.Number, state))
			}
		}
	}
	return nil
}

// ChangedItemsFor is ChangedItems for a pull request: the items its change
// touches and, whatever it changed, the items it belongs to (LinkedItems),
// each named in a note with why. A pull request that links no item is
// said to in a note saying how to link one, and Selection.Unlinked is set.
// A nil pr is ChangedItems.
func (e *Engine) ChangedItemsFor(pr *PullRequest) (Selection, error) {
	if pr == nil {
		return e.ChangedItems()
	}
	s, err := e.changedSelection()
	if err != nil {
		return s, err
	}
	links, err := e.LinkedItems(pr)
	if err != nil {
		return s, err
	}
	s.Linked, s.Unlinked = links, len(links) == 0
	if s.All {
		e.noteChanged(s)
	} else {
		if len(s.Items) == 0 {
			e.note(fmt.Sprintf("no work item's spec folder changed since %s", e.base.base))
		} else {
			e.noteChanged(s)
		}
		for _, l := range links {
			e.note(fmt.Sprintf("checking %s: %s", l.Item, l.Why))
			s.Items = append(s.Items, l.Item)
		}
		slices.Sort(s.Items)
		s.Items = slices.Compact(s.Items)
	}
	if s.Unlinked {
		e.note("the pull request links no work item: " + HowToLink)
	}
	return s, nil
}
