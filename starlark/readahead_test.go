package starlark

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// aheadTree writes n files of size bytes, f000..., under a fresh
// repository and returns it with their repository paths.
func aheadTree(t *testing.T, n, size int) (*confined, []string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rels := make([]string, n)
	for i := range n {
		rels[i] = fmt.Sprintf("f%03d", i)
		body := strings.Repeat(string(rune('a'+i%26)), size)
		if err := os.WriteFile(filepath.Join(root, rels[i]), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := newConfined(root, "the repository")
	if err != nil {
		t.Fatal(err)
	}
	return c, rels
}

// globbed runs one glob's worth of read-ahead over rels, handed over in
// batches as a walk would.
func globbed(ra *readAhead, c *confined, rels []string) {
	g := ra.start()
	for i := 0; i < len(rels); i += 7 {
		g.add(c, rels[i:min(i+7, len(rels))])
	}
	g.done()
}

// settle waits for ra's workers to stop.
func settle(t *testing.T, ra *readAhead) {
	t.Helper()
	for range 1000 {
		ra.mu.Lock()
		idle := ra.workers == 0
		ra.mu.Unlock()
		if idle {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("read-ahead workers did not stop")
}

func TestReadAheadHandsEachFileOverOnce(t *testing.T) {
	c, rels := aheadTree(t, 50, 100)
	ra := newReadAhead(1<<20, 1<<20)
	globbed(ra, c, rels)
	// In the order listed, then out of it.
	order := append(append([]string{}, rels[:25]...), rels[49], rels[30], rels[25])
	for _, rel := range order {
		i := 0
		fmt.Sscanf(rel, "f%d", &i)
		data, err, ok := ra.take(rel, 1<<20)
		if want := strings.Repeat(string(rune('a'+i%26)), 100); !ok || err != nil || string(data) != want {
			t.Fatalf("take %s = %q, %v, %v", rel, data, err, ok)
		}
		if _, _, ok := ra.take(rel, 1<<20); ok {
			t.Fatalf("%s was handed over twice", rel)
		}
	}
	settle(t, ra)
}

func TestReadAheadKnowsOnlyWhatAGlobListed(t *testing.T) {
	c, rels := aheadTree(t, 3, 10)
	ra := newReadAhead(1<<20, 1<<20)
	globbed(ra, c, rels[:2])
	for _, rel := range []string{rels[2], "./" + rels[0], "nothing"} {
		if _, _, ok := ra.take(rel, 1<<20); ok {
			t.Errorf("take %q: a path no glob listed was handed over", rel)
		}
	}
	var none *readAhead
	if _, _, ok := none.take(rels[0], 1<<20); ok {
		t.Error("a call without a read-ahead handed a file over")
	}
	settle(t, ra)
}

func TestReadAheadStopsAtItsBudget(t *testing.T) {
	c, rels := aheadTree(t, 100, 1000)
	ra := newReadAhead(1<<20, 5000)
	globbed(ra, c, rels)
	settle(t, ra)
	read := 0
	for _, f := range ra.globs[0].files {
		if len(f.data) > 0 {
			read++
		}
	}
	// Workers check the budget before each batch, so together they read
	// at most one batch each past it.
	if limit := 5 + runtime.GOMAXPROCS(0)*aheadBatch; read > limit || read == 0 {
		t.Errorf("read ahead %d files of 1000 bytes on a budget of 5000; want 1 to %d", read, limit)
	}
	// What was not read ahead is read when taken.
	for _, rel := range rels {
		if data, err, ok := ra.take(rel, 1<<20); !ok || err != nil || len(data) != 1000 {
			t.Fatalf("take %s: %d bytes, %v, %v", rel, len(data), err, ok)
		}
	}
}

func TestReadAheadAppliesTheBoundOfTheTake(t *testing.T) {
	c, rels := aheadTree(t, 1, 100)
	ra := newReadAhead(1<<20, 1<<20)
	globbed(ra, c, rels)
	_, err, ok := ra.take(rels[0], 50)
	var tl *tooLargeError
	if !ok || !errors.As(err, &tl) || tl.Size != 100 || tl.Max != 50 {
		t.Errorf("take with a bound of 50 = %v, %v; want a tooLargeError of 100 bytes", err, ok)
	}
	settle(t, ra)
}

func TestReadAheadRefusesAFileReplacedByASymlink(t *testing.T) {
	c, rels := aheadTree(t, 2, 10)
	ra := newReadAhead(1<<20, 0) // no budget: nothing is read before the take
	globbed(ra, c, rels[:1])
	p := c.abs(rels[0])
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(c.abs(rels[1]), p); err != nil {
		t.Fatal(err)
	}
	if _, err, ok := ra.take(rels[0], 1<<20); !ok || !errors.Is(err, errSymlink) {
		t.Errorf("take of a symbolic link = %v, %v; want errSymlink", err, ok)
	}
}

func TestReadAheadTakesFromTheLatestGlobFirst(t *testing.T) {
	c, rels := aheadTree(t, 4, 10)
	ra := newReadAhead(1<<20, 1<<20)
	globbed(ra, c, rels[:3])
	globbed(ra, c, rels[2:])
	for _, rel := range rels {
		if _, err, ok := ra.take(rel, 1<<20); !ok || err != nil {
			t.Errorf("take %s = %v, %v", rel, err, ok)
		}
	}
	if f := ra.globs[0].files[2]; f.taken {
		t.Error("the earlier glob's copy of f002 was taken, not the latest's")
	}
	settle(t, ra)
}

func TestReadAheadIsSafeForAConcurrentWalk(t *testing.T) {
	c, rels := aheadTree(t, 200, 64)
	ra := newReadAhead(1<<20, 1<<20)
	g := ra.start()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() { g.add(c, rels[i*50:(i+1)*50]) })
	}
	wg.Wait()
	g.done()
	for _, rel := range rels {
		if data, err, ok := ra.take(rel, 1<<20); !ok || err != nil || len(data) != 64 {
			t.Errorf("take %s: %d bytes, %v, %v", rel, len(data), err, ok)
		}
	}
	settle(t, ra)
}
