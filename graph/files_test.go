package graph

import (
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

func TestDerivedIsComputedOncePerPathAndKey(t *testing.T) {
	type keyA struct{}
	type keyB struct{}
	f := NewFiles(nil)
	var calls atomic.Int32
	derive := func(v string) func() any {
		return func() any { calls.Add(1); return v }
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := f.Derived("a.md", keyA{}, derive("first")); got != "first" {
				t.Errorf("got %v", got)
			}
		}()
	}
	wg.Wait()
	if f.Derived("a.md", keyB{}, derive("b")) != "b" || f.Derived("b.md", keyA{}, derive("other")) != "other" {
		t.Error("another key or path shared a derivation")
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("derived %d times, want 3", n)
	}
	var uncached *Files
	if uncached.Derived("a.md", keyA{}, derive("x")) != "x" || DirectFiles(nil).Derived("a.md", keyA{}, derive("y")) != "y" {
		t.Error("a reader without a cache did not derive afresh")
	}
}
