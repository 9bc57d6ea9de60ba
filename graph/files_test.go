package graph

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

func TestACachedStatIsTakenOncePerEvaluation(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cached, direct := NewFiles(checkoutOf(t, dir)), DirectFiles(checkoutOf(t, dir))
	for _, f := range []*Files{cached, direct} {
		if fi, err := f.Stat("a.md"); err != nil || !fi.Mode().IsRegular() {
			t.Fatalf("stat: %v %v", fi, err)
		}
		if _, err := f.Stat("missing.md"); !os.IsNotExist(err) {
			t.Fatalf("a missing file: %v", err)
		}
	}
	if err := os.Remove(filepath.Join(dir, "a.md")); err != nil {
		t.Fatal(err)
	}
	// The evaluation keeps what it saw; a chain that writes sees afresh.
	if _, err := cached.Stat("a.md"); err != nil {
		t.Errorf("the cached evaluation saw the file change under it: %v", err)
	}
	if _, err := direct.Stat("a.md"); !os.IsNotExist(err) {
		t.Errorf("a direct reader kept a stat: %v", err)
	}
}

func TestWhatOneHookKeepsEveryHookOfTheEvaluationRecalls(t *testing.T) {
	f := NewFiles(nil)
	var wg sync.WaitGroup
	var firsts atomic.Int32
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := fmt.Sprint("from ", i)
			if f.Keep("a.md", "k", v) == v {
				firsts.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := firsts.Load(); n != 1 {
		t.Errorf("%d keepers saw their own value kept, want the first only", n)
	}
	kept, ok := f.Recall("a.md", "k")
	if !ok || f.Keep("a.md", "k", "late") != kept {
		t.Errorf("recalled %v, %v; a later keeper must get the first value", kept, ok)
	}
	if _, ok := f.Recall("a.md", "other"); ok {
		t.Error("another key shared a kept value")
	}
	if _, ok := f.Recall("b.md", "k"); ok {
		t.Error("another scope shared a kept value")
	}
	var none *Files
	for _, uncached := range []*Files{none, DirectFiles(nil)} {
		if uncached.Keep("a.md", "k", "x") != "x" {
			t.Error("a reader without a cache returned another value than it was given")
		}
		if _, ok := uncached.Recall("a.md", "k"); ok {
			t.Error("a reader without a cache kept a value")
		}
	}
}

func TestRememberedDerivesOncePerEvaluation(t *testing.T) {
	f := NewFiles(nil)
	calls := 0
	derive := func() int { calls++; return calls }
	if a, b := Remembered(f, "a.md", "k", derive), Remembered(f, "a.md", "k", derive); a != 1 || b != 1 || calls != 1 {
		t.Errorf("got %d and %d after %d derivations; want the first, once", a, b, calls)
	}
	if c := Remembered(DirectFiles(nil), "a.md", "k", derive); c != 2 {
		t.Errorf("a reader that caches nothing gave %d; want a fresh derivation", c)
	}
}
