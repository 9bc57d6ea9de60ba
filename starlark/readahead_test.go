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

// aheadTree writes n files of size bytes under a fresh directory and
// returns their host paths.
func aheadTree(t *testing.T, n, size int) []string {
	t.Helper()
	root := t.TempDir()
	paths := make([]string, n)
	for i := range n {
		paths[i] = filepath.Join(root, fmt.Sprintf("f%03d", i))
		body := strings.Repeat(string(rune('a'+i%26)), size)
		if err := os.WriteFile(paths[i], []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return paths
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
	paths := aheadTree(t, 50, 100)
	ra := newReadAhead(1<<20, 1<<20)
	// Two globs may report the same files; each is queued once.
	ra.add(paths[:30])
	ra.add(paths[20:])
	for i, p := range paths {
		data, err, ok := ra.take(p, 1<<20)
		want := strings.Repeat(string(rune('a'+i%26)), 100)
		if !ok || err != nil || string(data) != want {
			t.Fatalf("take %s = %q, %v, %v", p, data, err, ok)
		}
		if _, _, ok := ra.take(p, 1<<20); ok {
			t.Fatalf("%s was handed over twice", p)
		}
	}
	settle(t, ra)
}

func TestReadAheadDoesNotKnowAPathNoGlobFound(t *testing.T) {
	paths := aheadTree(t, 2, 10)
	ra := newReadAhead(1<<20, 1<<20)
	ra.add(paths[:1])
	if _, _, ok := ra.take(paths[1], 1<<20); ok {
		t.Error("an unqueued path was taken")
	}
	var none *readAhead
	if _, _, ok := none.take(paths[0], 1<<20); ok {
		t.Error("a nil read-ahead took a path")
	}
	settle(t, ra)
}

func TestReadAheadStopsAtItsBudget(t *testing.T) {
	paths := aheadTree(t, 100, 1000)
	ra := newReadAhead(1<<20, 5000)
	ra.add(paths)
	settle(t, ra)
	read := 0
	for _, f := range ra.files {
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
	for _, p := range paths {
		if data, err, ok := ra.take(p, 1<<20); !ok || err != nil || len(data) != 1000 {
			t.Fatalf("take %s: %d bytes, %v, %v", p, len(data), err, ok)
		}
	}
}

func TestReadAheadAppliesTheBoundOfTheTake(t *testing.T) {
	paths := aheadTree(t, 1, 100)
	ra := newReadAhead(1<<20, 1<<20)
	ra.add(paths)
	_, err, ok := ra.take(paths[0], 50)
	var tl *tooLargeError
	if !ok || !errors.As(err, &tl) || tl.Size != 100 || tl.Max != 50 {
		t.Errorf("take with a bound of 50 = %v, %v; want a tooLargeError of 100 bytes", err, ok)
	}
	settle(t, ra)
}

func TestReadAheadRefusesAFileReplacedByASymlink(t *testing.T) {
	paths := aheadTree(t, 2, 10)
	ra := newReadAhead(1<<20, 1<<20)
	ra.files[paths[0]] = &aheadFile{path: paths[0]} // queued, not yet read
	if err := os.Remove(paths[0]); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(paths[1], paths[0]); err != nil {
		t.Fatal(err)
	}
	if _, err, ok := ra.take(paths[0], 1<<20); !ok || !errors.Is(err, errSymlink) {
		t.Errorf("take of a symbolic link = %v, %v; want errSymlink", err, ok)
	}
}

func TestReadAheadIsSafeForConcurrentGlobsAndTakes(t *testing.T) {
	paths := aheadTree(t, 200, 64)
	ra := newReadAhead(1<<20, 1<<20)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() { ra.add(paths[i*50 : (i+1)*50]) })
	}
	wg.Wait()
	for i := range 2 {
		wg.Go(func() {
			for j := i; j < len(paths); j += 2 {
				if data, err, ok := ra.take(paths[j], 1<<20); !ok || err != nil || len(data) != 64 {
					t.Errorf("take %s: %d bytes, %v, %v", paths[j], len(data), err, ok)
				}
			}
		})
	}
	wg.Wait()
	settle(t, ra)
}
