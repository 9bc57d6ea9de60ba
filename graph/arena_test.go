package graph

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
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
	owns := a.Owner()
	view := unsafe.String(&first[0], len(first))
	if !owns(view) || !owns(unsafe.String(&second[5], 3)) {
		t.Error("the arena does not own what it handed out")
	}
	for _, s := range []string{strings.Clone(view), "0123456789", ""} {
		if owns(s) {
			t.Errorf("the arena owns %q, which it never handed out", s)
		}
	}
	big := a.alloc(arenaLargest + 1)
	if a.Owner()(unsafe.String(&big[0], len(big))) {
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
	if !arena.Owner()(text) {
		t.Fatal("a lent evaluation did not read into the arena")
	}
	title, body := text[2:15], text[16:25]
	rep := &StatusReport{WorkItem: "item", CurrentNode: title, Nodes: []NodeReport{{
		Node: "n", Status: "block", Outcome: body, Messages: []string{title, "the graph's own words"},
		Findings: []Finding{{Hook: "h", Node: "n", Severity: "error", Text: body, Path: title}},
		Hooks:    []HookRun{{Hook: "h", Boundary: "exit", Status: "block", Reason: body}},
	}}}
	rep.Detach(arena.Owner())
	arena.Reset()
	next := arena.alloc(int64(len(text)))
	for i := range next {
		next[i] = '!'
	}
	n := rep.Nodes[0]
	for _, s := range []string{rep.CurrentNode, n.Outcome, n.Messages[0], n.Findings[0].Text, n.Findings[0].Path, n.Hooks[0].Reason} {
		if arena.Owner()(s) || strings.Contains(s, "!") {
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

// TestDetachCopiesEveryStringOfAReport fills every string a report holds,
// found by reflection, with a view of an arena: a string field added to
// the report's types and left out of Detach fails it.
func TestDetachCopiesEveryStringOfAReport(t *testing.T) {
	arena := NewArena()
	borrowed := func() string {
		b := arena.alloc(8)
		copy(b, "borrowed")
		return unsafe.String(&b[0], len(b))
	}
	rep := &StatusReport{Nodes: make([]NodeReport, 1)}
	rep.Nodes[0].Messages = make([]string, 1)
	rep.Nodes[0].Findings = make([]Finding, 1)
	rep.Nodes[0].Hooks = make([]HookRun, 1)
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.String:
			v.SetString(borrowed())
		case reflect.Struct:
			for i := range v.NumField() {
				if f := v.Field(i); f.CanSet() {
					fill(f)
				} else if f.Kind() == reflect.String {
					// An unexported string: set through its address.
					reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().SetString(borrowed())
				}
			}
		case reflect.Slice:
			for i := range v.Len() {
				fill(v.Index(i))
			}
		}
	}
	fill(reflect.ValueOf(rep).Elem())
	owned := arena.Owner()
	rep.Detach(owned)
	var check func(v reflect.Value, at string)
	check = func(v reflect.Value, at string) {
		switch v.Kind() {
		case reflect.String:
			if owned(v.String()) {
				t.Errorf("%s still borrows the arena after Detach", at)
			}
		case reflect.Struct:
			for i := range v.NumField() {
				check(v.Field(i), at+"."+v.Type().Field(i).Name)
			}
		case reflect.Slice:
			for i := range v.Len() {
				check(v.Index(i), fmt.Sprintf("%s[%d]", at, i))
			}
		}
	}
	check(reflect.ValueOf(rep).Elem(), "StatusReport")
}
