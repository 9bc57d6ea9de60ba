package graph

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

func TestAnArenaHandsOutCappedBuffersAndTheSameMemoryOnceReset(t *testing.T) {
	a := NewArena()
	first, second := a.alloc(10), a.alloc(20)
	if len(first) != 10 || cap(first) != 10 || len(second) != 20 || cap(second) != 20 {
		t.Fatalf("lengths %d/%d, capacities %d/%d", len(first), len(second), cap(first), cap(second))
	}
	copy(first, "0123456789")
	copy(second, strings.Repeat("x", 20))
	if string(first) != "0123456789" {
		t.Fatal("two buffers overlap")
	}
	view := unsafe.String(&first[0], len(first))
	if !a.Owns(view) || !a.Owns(unsafe.String(&second[5], 3)) {
		t.Error("the arena does not own what it handed out")
	}
	for _, s := range []string{strings.Clone(view), "0123456789", ""} {
		if a.Owns(s) {
			t.Errorf("the arena owns %q, which it never handed out", s)
		}
	}
	big := a.alloc(arenaLargest + 1)
	if a.Owns(unsafe.String(&big[0], len(big))) {
		t.Error("a read larger than the arena serves was carved from it")
	}
	a.Reset()
	if again := a.alloc(10); &again[0] != &first[0] {
		t.Error("a reset arena did not hand its memory out again")
	}
	// A block runs out: the next one is taken, and the first kept.
	for range 5 {
		a.alloc(arenaLargest)
	}
	if len(a.blocks) != 2 {
		t.Errorf("%d blocks after carving more than one holds", len(a.blocks))
	}
}

// TestADetachedReportOutlivesTheArenaItsFilesWereReadInto: a report
// holding views of files read into an arena keeps its words once the
// arena is reset and written over by the next item's files.
func TestADetachedReportOutlivesTheArenaItsFilesWereReadInto(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("# Section title\nbody line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	arena := NewArena()
	files := NewFiles(checkoutOf(t, dir)).Lend(arena)
	text, err := files.Text("a.md")
	if err != nil {
		t.Fatal(err)
	}
	if !arena.Owns(text) {
		t.Fatal("a lent evaluation did not read into the arena")
	}
	title, body := text[2:15], text[16:25]
	rep := &StatusReport{WorkItem: "item", CurrentNode: title, Nodes: []NodeReport{{
		Node: "n", Status: "block", Outcome: body, Messages: []string{title, "the graph's own words"},
		Findings: []Finding{{Hook: "h", Node: "n", Severity: "error", Text: body, Path: title}},
		Hooks:    []HookRun{{Hook: "h", Boundary: "exit", Status: "block", Reason: body}},
	}}}
	rep.Detach(arena.Owns)
	arena.Reset()
	next := arena.alloc(int64(len(text)))
	for i := range next {
		next[i] = '!'
	}
	n := rep.Nodes[0]
	for _, s := range []string{rep.CurrentNode, n.Outcome, n.Messages[0], n.Findings[0].Text, n.Findings[0].Path, n.Hooks[0].Reason} {
		if arena.Owns(s) || strings.Contains(s, "!") {
			t.Errorf("a detached report still borrows: %q", s)
		}
	}
	if rep.CurrentNode != "Section title" || n.Outcome != "body line" || n.Findings[0].Path != "Section title" {
		t.Errorf("the report's words changed: %q, %q, %q", rep.CurrentNode, n.Outcome, n.Findings[0].Path)
	}
	if DirectFiles(nil).Lend(arena).arena != nil {
		t.Error("a reader that caches nothing took an arena")
	}
}

func TestALoopWithARepositoryHookSaysSo(t *testing.T) {
	shipped := &Graph{Nodes: []*Node{{ID: "a", Exit: []ChainEntry{{Hook: "validate-artifacts"}}}}}
	withRule := &Graph{Nodes: []*Node{{ID: "a", Exit: []ChainEntry{{Hook: "validate-artifacts"}}},
		{ID: "b", Entry: []ChainEntry{{Hook: "x-licence"}}}}}
	if shipped.HasRepositoryHooks() || !withRule.HasRepositoryHooks() {
		t.Errorf("shipped %v, with a rule %v", shipped.HasRepositoryHooks(), withRule.HasRepositoryHooks())
	}
}
