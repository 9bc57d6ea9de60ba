package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestFoldNameIsTheNameAsItLooks(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"issue-2", "issue-2", true},
		{"Issue-2", "issue-2", true},
		{"ISSUE-2", "issue-2", true},
		{"caf\u00e9", "cafe\u0301", true},                   // NFC and NFD
		{"CAF\u00c9", "cafe\u0301", true},                   // and case
		{"\u212aey", "key", true},                           // the Kelvin sign folds to k
		{"\u212bngstr\u00f6m", "\u00e5ngstro\u0308m", true}, // the Angstrom sign is Å in NFC
		{"issue-2", "issue-3", false},
		{"issue-2", "issue-2 ", false},
		{"stra\u00dfe", "strasse", false}, // a full fold would say so; the rename or removal rules catch it
	} {
		if got := foldName(tc.a) == foldName(tc.b); got != tc.same {
			t.Errorf("foldName(%q) == foldName(%q) is %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}

// Over 400 bytes each, as git breaks no smaller file into a deletion and
// an addition (-B), and so sees no swap of small ones.
var (
	draftRequirements = "---\nstatus: draft\n---\n# Requirements\n\n" + strings.Repeat("The checkout command reads the spec folder and reports every node.\n", 8)
	otherRequirements = "# Requirements\n\n" + strings.Repeat("Replies on an issue thread are sorted into answers and commands.\n", 8)
	blockedState      = `{"version": 1, "currentNode": "requirements-definition", "decisions": {"phase-selection": {"at": "2026-01-01T00:00:00+00:00"}}}`
	rewoundState      = `{"version": 1, "currentNode": "phase-selection", "decisions": {"phase-selection": {"at": "2026-01-01T00:00:00+00:00"}}}`
)

// lineageBase is main: issue-2 blocked at requirements-definition, issue-1
// with no state, issue-9 an ad hoc task that is complete.
var lineageBase = map[string]string{
	"docs/specs/issue-2/requirements.md":  draftRequirements,
	"docs/specs/issue-2/graph-state.json": blockedState,
	"docs/specs/issue-1/requirements.md":  otherRequirements,
	"docs/specs/issue-9/requirements.md":  "# Requirements\n",
	"docs/specs/issue-9/graph-state.json": `{"version": 1, "loop": "pdlc-adhoc-loop", "currentNode": "complete", "nodes": {}}`,
}

func TestTheBasesStateFloorsAnItemHoweverTheChangeRenamesIt(t *testing.T) {
	nfd := "issue-2-cafe\u0301"
	for _, tc := range []struct {
		name    string
		base    map[string]string // more on main
		change  func(t *testing.T, root string, git func(...string))
		item    string   // judged
		floors  []string // the revision's items whose state is item's floor
		removed []string
		blocked bool // the item's report blocks
	}{
		{name: "plain rename", item: "issue-7", floors: []string{"issue-7", "issue-2"}, blocked: true,
			change: func(t *testing.T, root string, git func(...string)) {
				git("mv", "docs/specs/issue-2", "docs/specs/issue-7")
				rewind(t, root, "issue-7", git)
			}},
		{name: "case only", item: "Issue-2", floors: []string{"Issue-2", "issue-2"}, blocked: true,
			change: func(t *testing.T, root string, git func(...string)) {
				git("mv", "docs/specs/issue-2", "docs/specs/Issue-2")
				rewind(t, root, "Issue-2", git)
			}},
		{name: "NFC to NFD, in the work tree", item: nfd, floors: []string{nfd, "issue-2-caf\u00e9"}, blocked: true,
			base: map[string]string{"docs/specs/issue-2-caf\u00e9/requirements.md": draftRequirements, "docs/specs/issue-2-caf\u00e9/graph-state.json": blockedState},
			change: func(t *testing.T, root string, git func(...string)) {
				mv(t, root, "issue-2-caf\u00e9", nfd)
				writeFiles(t, root, map[string]string{"docs/specs/" + nfd + "/graph-state.json": rewoundState})
			}},
		{name: "rename and edit", item: "issue-2b", floors: []string{"issue-2b", "issue-2"}, blocked: true,
			change: func(t *testing.T, root string, git func(...string)) {
				git("mv", "docs/specs/issue-2", "docs/specs/issue-2b")
				writeFiles(t, root, map[string]string{"docs/specs/issue-2b/requirements.md": draftRequirements + "One line more.\n"})
				rewind(t, root, "issue-2b", git)
			}},
		{name: "two swapped", item: "issue-1", floors: []string{"issue-1", "issue-2"}, blocked: true,
			change: func(t *testing.T, root string, git func(...string)) {
				git("mv", "docs/specs/issue-2", "docs/specs/tmp")
				git("mv", "docs/specs/issue-1", "docs/specs/issue-2")
				git("mv", "docs/specs/tmp", "docs/specs/issue-1")
				rewind(t, root, "issue-1", git)
			}},
		{name: "renamed into another loop", item: "issue-8", floors: []string{"issue-8", "issue-2"}, blocked: true,
			change: func(t *testing.T, root string, git func(...string)) {
				git("mv", "docs/specs/issue-2", "docs/specs/issue-8")
				writeFiles(t, root, map[string]string{"docs/specs/issue-8/graph-state.json": `{"version": 1, "loop": "pdlc-adhoc-loop", "currentNode": "work", "nodes": {}}`})
				git("commit", "-q", "-am", "adhoc")
			}},
		{name: "deleted", item: "issue-2", floors: []string{"issue-2"}, removed: []string{"issue-2"}, blocked: true,
			change: func(t *testing.T, root string, git func(...string)) {
				git("rm", "-q", "-r", "docs/specs/issue-2")
				git("commit", "-q", "-m", "gone")
			}},
		{name: "renamed past recognition in the work tree", item: "fresh", floors: []string{"fresh"}, removed: []string{"issue-2"},
			change: func(t *testing.T, root string, git func(...string)) {
				mv(t, root, "issue-2", "fresh")
				writeFiles(t, root, map[string]string{"docs/specs/fresh/requirements.md": "# Something else\n"})
				if err := os.Remove(filepath.Join(root, "docs/specs/fresh/graph-state.json")); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "the folder made a file", item: "issue-2", floors: []string{"issue-2"}, removed: []string{"issue-2"}, blocked: true,
			change: func(t *testing.T, root string, git func(...string)) {
				git("rm", "-q", "-r", "docs/specs/issue-2")
				writeFiles(t, root, map[string]string{"docs/specs/issue-2": "not a folder\n"})
				git("add", ".")
				git("commit", "-q", "-m", "a file")
			}},
		{name: "the spec directory deleted", item: "issue-2", floors: []string{"issue-2"}, removed: []string{"issue-2"}, blocked: true,
			change: func(t *testing.T, root string, git func(...string)) {
				git("rm", "-q", "-r", "docs/specs")
				git("commit", "-q", "-m", "no specs")
			}},
		{name: "two of main's items look the same; the worse floor judges", item: "Issue-2", floors: []string{"Issue-2", "issue-2"}, removed: nil, blocked: true,
			base: map[string]string{"docs/specs/Issue-2/requirements.md": otherRequirements, "docs/specs/Issue-2/graph-state.json": rewoundState},
			change: func(t *testing.T, root string, git func(...string)) {
				git("rm", "-q", "-r", "docs/specs/issue-2")
				git("commit", "-q", "-m", "keep the lenient one")
			}},
		{name: "a finished item removed", item: "issue-1", floors: []string{"issue-1"},
			change: func(t *testing.T, root string, git func(...string)) {
				git("rm", "-q", "-r", "docs/specs/issue-9")
				git("commit", "-q", "-m", "clean up")
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := maps2(lineageBase, tc.base)
			root, git := gitRepo(t, files)
			tc.change(t, root, git)
			e, err := Open(Options{Repo: root, RulesFrom: "main", Events: discard{}})
			if err != nil {
				t.Fatal(err)
			}
			if got := e.floorsOf(tc.item); !slices.Equal(got, tc.floors) {
				t.Errorf("floorsOf(%s) = %q, want %q", tc.item, got, tc.floors)
			}
			if got := e.removedItems(); !slices.Equal(got, tc.removed) {
				t.Errorf("removedItems() = %q, want %q (notes: %q)", got, tc.removed, e.Notes())
			}
			items, err := e.Items()
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range tc.removed {
				if !slices.Contains(items, id) {
					t.Errorf("Items() = %q, want the removed %s among them", items, id)
				}
			}
			reps, err := e.Check([]string{tc.item}, false, Selector{})
			if err != nil {
				t.Fatal(err)
			}
			if got := reps[0].Blocked(); got != tc.blocked {
				t.Errorf("%s blocked = %v, want %v (notes: %q)", tc.item, got, tc.blocked, e.Notes())
			}
			if tc.blocked && reps[0].Loop != "pdlc-work-item-loop" {
				t.Errorf("%s judged on %s, want main's pdlc-work-item-loop", tc.item, reps[0].Loop)
			}
		})
	}
}

func TestAnItemMainAddedAfterTheForkIsNotTheChanges(t *testing.T) {
	root, git := gitRepo(t, lineageBase)
	git("checkout", "-q", "main")
	writeFiles(t, root, map[string]string{"docs/specs/issue-5/requirements.md": draftRequirements, "docs/specs/issue-5/graph-state.json": blockedState})
	git("add", ".")
	git("commit", "-q", "-m", "issue-5")
	git("checkout", "-q", "change")
	e, err := Open(Options{Repo: root, RulesFrom: "main", Events: discard{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.removedItems(); len(got) != 0 {
		t.Errorf("removedItems() = %q, want none: issue-5 came after the fork", got)
	}
}

func TestWithNoMergeBaseEveryItemMissingIsRemoved(t *testing.T) {
	root, git := gitRepo(t, lineageBase)
	git("checkout", "-q", "--orphan", "unrelated")
	git("rm", "-q", "-r", "-f", ".")
	writeFiles(t, root, map[string]string{"docs/specs/issue-7/requirements.md": draftRequirements, "docs/specs/issue-7/graph-state.json": rewoundState})
	git("add", ".")
	git("commit", "-q", "-m", "unrelated")
	e, err := Open(Options{Repo: root, RulesFrom: "main", Events: discard{}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e.removedItems(), []string{"issue-2"}; !slices.Equal(got, want) {
		t.Errorf("removedItems() = %q, want %q", got, want)
	}
	if !slices.ContainsFunc(e.Notes(), func(n string) bool { return strings.Contains(n, "have no merge base") }) {
		t.Errorf("notes %q do not say there is no merge base", e.Notes())
	}
}

// rewind writes the rewound state into item's folder and commits.
func rewind(t *testing.T, root, item string, git func(...string)) {
	t.Helper()
	writeFiles(t, root, map[string]string{"docs/specs/" + item + "/graph-state.json": rewoundState})
	git("add", ".")
	git("commit", "-q", "-m", "rewind "+item)
}

// mv renames a spec folder in the work tree only.
func mv(t *testing.T, root, from, to string) {
	t.Helper()
	if err := os.Rename(filepath.Join(root, "docs/specs", from), filepath.Join(root, "docs/specs", to)); err != nil {
		t.Fatal(err)
	}
}

func maps2(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
