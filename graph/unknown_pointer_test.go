package graph

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// retire writes a state whose pointer names a node the mini loop does not
// have, as an older loop's state does, and returns its bytes.
func retire(t *testing.T, rt *Runtime) []byte {
	t.Helper()
	data := []byte(`{"version": 1, "workItem": "item", "currentNode": "retired-node", "nodes": {"select": {"attempts": 1, "outcome": "selected", "enteredAt": "2026-11-01T00:00:00+00:00"}}}` + "\n")
	if err := os.WriteFile(rt.Checkout.Abs("docs/specs/item/"+StateFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return data
}

func storedState(t *testing.T, rt *Runtime) []byte {
	t.Helper()
	data, err := os.ReadFile(rt.Checkout.Abs("docs/specs/item/" + StateFile))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// The original's test_a_pointer_that_names_no_known_node_reports_everything:
// an unknown pointer must not hide findings, so no node is ahead of it.
func TestAPointerThatNamesNoKnownNodeReportsEveryNode(t *testing.T) {
	rt, _ := newRuntime(t)
	retire(t, rt)
	rep, err := rt.Status("item", false)
	if err != nil {
		t.Fatalf("status: %v; want a report", err)
	}
	reached, ahead := rep.Reached()
	if len(ahead) != 0 {
		t.Errorf("ahead: %v; want none", ahead)
	}
	var ids []string
	for _, n := range reached {
		if !n.Reached {
			t.Errorf("%s is not marked reached", n.Node)
		}
		ids = append(ids, n.Node)
	}
	want := append(rt.Graph.NodeIDs(), "retired-node")
	if !slices.Equal(ids, want) {
		t.Errorf("reached %v; want every node of the loop, then the pointer: %v", ids, want)
	}
	if rep.OK || rep.CurrentNode != "retired-node" {
		t.Errorf("ok %v at %q; want not ok at the stored pointer", rep.OK, rep.CurrentNode)
	}
	last := rep.Nodes[len(rep.Nodes)-1]
	if last.Status != string(StatusBlock) || len(last.Findings) != 1 {
		t.Fatalf("the pointer's entry: %+v; want one block finding", last)
	}
	f := last.Findings[0]
	if f.Hook != StateHook || f.Severity != SeverityError || f.Path != "docs/specs/item/graph-state.json" || !strings.Contains(f.Text, `currentNode "retired-node" is not a node of mini-loop`) {
		t.Errorf("finding %+v; want the state hook's error naming the pointer, at the state file", f)
	}
	if last.Stopper() != StateHook {
		t.Errorf("stopper %q; want %s, so that formats name what failed", last.Stopper(), StateHook)
	}
	if !rep.Fails(FailOnBlock) || !rep.Fails(FailOnUnmet) {
		t.Error("an item whose place is unknown passes a gate")
	}
}

func TestRecomputeIgnoresAnUnknownPointer(t *testing.T) {
	rt, _ := newRuntime(t)
	retire(t, rt)
	rep, err := rt.Status("item", true)
	if err != nil {
		t.Fatal(err)
	}
	if rep.CurrentNode != "select" || len(rep.Nodes) != len(rt.Graph.Nodes) {
		t.Errorf("at %q with %d nodes; want the artifacts' position and only the loop's nodes", rep.CurrentNode, len(rep.Nodes))
	}
}

func TestVerbsThatWouldGuessRefuseAnUnknownPointerAndWriteNothing(t *testing.T) {
	for _, c := range []struct {
		name string
		verb func(rt *Runtime) error
	}{
		{"advance", func(rt *Runtime) error { _, err := rt.Advance("item", nil); return err }},
		{"run", func(rt *Runtime) error { _, err := rt.Run("item", 5, false, nil); return err }},
		{"dry run", func(rt *Runtime) error { _, err := rt.Run("item", 5, true, nil); return err }},
		// The original writes this claim, then fails: ours fails first.
		{"complete", func(rt *Runtime) error { _, err := rt.Complete("item", "", "agent", nil); return err }},
		{"skip", func(rt *Runtime) error {
			_, err := rt.DeclareSkips("item", []string{"draft"}, "small", "bob")
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rt, rec := newRuntime(t)
			before := retire(t, rt)
			err := c.verb(rt)
			var se *StateError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), `currentNode "retired-node" is not a node of mini-loop`) || !strings.Contains(err.Error(), "Force the item") {
				t.Errorf("got %v; want a *StateError naming the pointer and the way out", err)
			}
			if after := storedState(t, rt); string(after) != string(before) {
				t.Errorf("the state was written:\n%s", after)
			}
			if len(rec.events) != 0 {
				t.Errorf("events %v; want none", rec.events)
			}
		})
	}
}

func TestACompletionClaimForANamedNodeOnAnUnknownPointerIsRefusedAsTheOriginalDoes(t *testing.T) {
	rt, _ := newRuntime(t)
	before := retire(t, rt)
	c, err := rt.Complete("item", "draft", "", nil)
	if err != nil || c.Status != "refused" || c.Reason != "not-current" || c.CurrentNode != "retired-node" {
		t.Errorf("got %+v, %v; want refused, not-current, naming the pointer", c, err)
	}
	if after := storedState(t, rt); string(after) != string(before) {
		t.Error("the state was written")
	}
}

func TestAForceMovesAnItemOffAnUnknownPointer(t *testing.T) {
	rt, rec := newRuntime(t)
	retire(t, rt)
	f, err := rt.Force("item", "draft", "the loop was renamed", "carol")
	if err != nil {
		t.Fatalf("force: %v", err)
	}
	if f.FromNode != "retired-node" || f.ToNode != "draft" {
		t.Errorf("got %+v; want retired-node -> draft", f)
	}
	if len(f.Warnings) == 0 || !strings.Contains(f.Warnings[0], `currentNode "retired-node" is not a node of mini-loop`) {
		t.Errorf("warnings %q; want the unknown pointer named first", f.Warnings)
	}
	st, err := LoadState(rt.Checkout, "docs/specs/item", "item")
	if err != nil {
		t.Fatal(err)
	}
	if st.CurrentNode != "draft" || len(st.Forced) != 1 || st.Forced[0]["from"] != "retired-node" || !rec.has("graph.forced") {
		t.Errorf("state %+v; want the pointer at draft and the force recorded from retired-node", st)
	}
	rep, err := rt.Status("item", false)
	if err != nil || rep.CurrentNode != "draft" || len(rep.Nodes) != len(rt.Graph.Nodes) {
		t.Errorf("status after the force: %+v, %v", rep, err)
	}
}

// newItemRuntime is newRuntime with no folder for the item "new".
func newItemRuntime(t *testing.T) (*Runtime, *recorder, string) {
	t.Helper()
	rt, rec := newRuntime(t)
	return rt, rec, rt.Checkout.Abs("docs/specs/new")
}

func TestAMutatingVerbOnANewItemCreatesItsFolderAsTheOriginalDoes(t *testing.T) {
	for _, c := range []struct {
		name    string
		verb    func(rt *Runtime) error
		creates bool
		at      string // the state's pointer afterwards
	}{
		{"advance", func(rt *Runtime) error {
			s, err := rt.Advance("new", nil)
			if err == nil && (s.Node != "select" || s.Status != "wait") {
				t.Errorf("step %+v; want a wait at the start", s)
			}
			return err
		}, true, ""},
		{"run", func(rt *Runtime) error { _, err := rt.Run("new", 5, false, comment("selected")); return err }, true, "draft"},
		{"force", func(rt *Runtime) error { _, err := rt.Force("new", "build", "started elsewhere", "carol"); return err }, true, "build"},
		{"skip declaring", func(rt *Runtime) error {
			d, err := rt.DeclareSkips("new", []string{"docs"}, "small", "bob")
			if err == nil && len(d.Declared) != 2 {
				t.Errorf("declared %v", d.Declared)
			}
			return err
		}, true, ""},
		{"skip rejecting", func(rt *Runtime) error {
			d, err := rt.DeclareSkips("new", []string{"select"}, "small", "bob")
			if err == nil && (len(d.Declared) != 0 || len(d.Rejected) != 1) {
				t.Errorf("got %+v; want select rejected", d)
			}
			return err
		}, false, ""},
		{"complete", func(rt *Runtime) error {
			c, err := rt.Complete("new", "", "", nil)
			if err == nil && (c.Status != "refused" || c.Reason != "not-started") {
				t.Errorf("got %+v; want refused, not-started", c)
			}
			return err
		}, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rt, _, dir := newItemRuntime(t)
			if err := c.verb(rt); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			_, err := os.Stat(dir)
			if !c.creates {
				if !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the folder was created (%v)", err)
				}
				return
			}
			st, err := LoadState(rt.Checkout, "docs/specs/new", "new")
			if err != nil || !rt.Checkout.IsRegular("docs/specs/new/"+StateFile) {
				t.Fatalf("no state written: %v", err)
			}
			if st.CurrentNode != c.at || st.Loop != "mini-loop" {
				t.Errorf("state at %q on %q; want %q on mini-loop", st.CurrentNode, st.Loop, c.at)
			}
		})
	}
}

func TestANewItemIsStillAFolderNameInsideTheCheckout(t *testing.T) {
	rt, _ := newRuntime(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, rt.Checkout.Abs("docs/specs/away")); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"../escape", "a/b", "..", "away"} {
		if _, err := rt.Advance(id, nil); err == nil {
			t.Errorf("advance %q: no error", id)
		}
		if _, err := rt.Force(id, "build", "r", ""); err == nil {
			t.Errorf("force %q: no error", id)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("wrote outside the checkout: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(rt.Checkout.Root(), "docs", "escape")); !errors.Is(err, os.ErrNotExist) {
		t.Error("an id with .. made a folder")
	}
	// Status still refuses a new item: a mistyped id in CI must not pass.
	if _, err := rt.Status("fresh", false); !NoSpecFolder(err) {
		t.Errorf("status of a new item: %v; want no spec folder", err)
	}
}

func TestASpecRootThatLeadsOutOfTheCheckoutIsNotCreatedThrough(t *testing.T) {
	for _, c := range []struct{ name, target string }{
		{"to a directory", ""},
		{"dangling", "missing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rt, _ := newRuntime(t)
			co, err := rt.Checkout.WithSpecDir("docs/linked/specs")
			if err != nil {
				t.Fatal(err)
			}
			rt.Checkout = co
			outside := t.TempDir()
			if err := os.Symlink(filepath.Join(outside, c.target), rt.Checkout.Abs("docs/linked")); err != nil {
				t.Fatal(err)
			}
			if _, err := rt.Advance("new", nil); err == nil || !strings.Contains(err.Error(), "outside the checkout") {
				t.Errorf("advance through a spec root outside the checkout: %v; want it refused", err)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Errorf("wrote outside the checkout: %v", entries)
			}
		})
	}
}
