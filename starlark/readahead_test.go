package starlark

import (
	"github.com/the-loop/the-loop/repo"

	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// aheadTree writes n files of size bytes, d/f000..., under a fresh
// repository and returns it with their repository paths.
func aheadTree(t *testing.T, n, size int) (*tree, []string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	rels := make([]string, n)
	for i := range n {
		rels[i] = fmt.Sprintf("d/f%03d", i)
		if err := os.WriteFile(filepath.Join(root, rels[i]), []byte(body(i, size)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := openTree(root, "the repository")
	if err != nil {
		t.Fatal(err)
	}
	return c, rels
}

func body(i, size int) string { return strings.Repeat(string(rune('a'+i%26)), size) }

// globbed hands rels to ra as one glob's walk would, in batches.
func globbed(ra *readAhead, rels []string) {
	g := &aheadGlob{}
	for i := 0; i < len(rels); i += 7 {
		g.add(rels[i:min(i+7, len(rels))])
	}
	ra.done(g)
}

// settle waits for ra's workers to leave.
func settle(t *testing.T, ra *readAhead) {
	t.Helper()
	for range 2000 {
		ra.mu.Lock()
		idle := ra.workers == 0
		ra.mu.Unlock()
		if idle {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("read-ahead workers did not leave")
}

// readAheadBytes is what ra's workers have read and nobody has taken, as
// the files hold it.
func readAheadBytes(ra *readAhead) (n int) {
	for _, g := range ra.globs {
		for _, f := range g.files {
			n += len(f.data)
		}
	}
	return n
}

func TestReadAheadHandsEachFileOverOnce(t *testing.T) {
	c, rels := aheadTree(t, 50, 100)
	ra := newReadAhead(c, 1<<20, 1<<20, nil)
	globbed(ra, rels)
	// In the order listed, then out of it.
	order := append(append([]string{}, rels[:25]...), rels[49], rels[30], rels[25])
	for _, rel := range order {
		var i int
		fmt.Sscanf(rel, "d/f%d", &i)
		data, err, ok := ra.take(rel, 1<<20)
		if !ok || err != nil || string(data) != body(i, 100) {
			t.Fatalf("take %s = %q, %v, %v", rel, data, err, ok)
		}
		if _, _, ok := ra.take(rel, 1<<20); ok {
			t.Fatalf("%s was handed over twice", rel)
		}
	}
	settle(t, ra)
}

func TestReadAheadReadsNothingUntilAGlobbedFileIsRead(t *testing.T) {
	c, rels := aheadTree(t, 50, 100)
	ra := newReadAhead(c, 1<<20, 1<<20, nil)
	globbed(ra, rels)
	time.Sleep(20 * time.Millisecond)
	if n := readAheadBytes(ra); n != 0 || ra.workers != 0 {
		t.Errorf("a glob alone read %d bytes with %d workers; a hook that only lists files reads nothing", n, ra.workers)
	}
}

func TestReadAheadKnowsOnlyWhatAGlobListed(t *testing.T) {
	c, rels := aheadTree(t, 3, 10)
	ra := newReadAhead(c, 1<<20, 1<<20, nil)
	globbed(ra, rels[:2])
	for _, rel := range []string{rels[2], "./" + rels[0], "nothing"} {
		if _, _, ok := ra.take(rel, 1<<20); ok {
			t.Errorf("take %q: a path no glob listed was handed over", rel)
		}
	}
	var none *readAhead
	if _, _, ok := none.take(rels[0], 1<<20); ok {
		t.Error("a call without a read-ahead handed a file over")
	}
	none.stop()
}

func TestReadAheadStopsAtItsBudget(t *testing.T) {
	c, rels := aheadTree(t, 100, 1000)
	ra := newReadAhead(c, 1<<20, 5000, nil)
	globbed(ra, rels)
	if _, err, ok := ra.take(rels[0], 1<<20); !ok || err != nil {
		t.Fatal(err, ok)
	}
	settle(t, ra)
	// Workers check the budget before each file, so together they read
	// at most one file each past it.
	if n, limit := readAheadBytes(ra), 5000+aheadWorkers*1000; n > limit || n == 0 {
		t.Errorf("read ahead %d bytes on a budget of 5000; want some, at most %d", n, limit)
	}
	// What was not read ahead is read when taken.
	for _, rel := range rels[1:] {
		if data, err, ok := ra.take(rel, 1<<20); !ok || err != nil || len(data) != 1000 {
			t.Fatalf("take %s: %d bytes, %v, %v", rel, len(data), err, ok)
		}
	}
}

func TestReadAheadStaysWithinItsWindow(t *testing.T) {
	// More cores than workers: the bound must not grow with the machine.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(16))
	const size = 256 << 10
	c, rels := aheadTree(t, 4*aheadWindow/size, size)
	ra := newReadAhead(c, 1<<20, 1<<30, nil)
	globbed(ra, rels)
	if _, err, ok := ra.take(rels[0], 1<<20); !ok || err != nil {
		t.Fatal(err, ok)
	}
	settle(t, ra)
	// Each worker may read one file past the window before it looks.
	if n, limit := readAheadBytes(ra), aheadWindow+aheadWorkers*size; n > limit {
		t.Errorf("%d bytes read ahead and not taken; the window allows %d", n, limit)
	}
	if got := ra.inflight.Load(); got != int64(readAheadBytes(ra)) {
		t.Errorf("the window counts %d bytes; the files hold %d", got, readAheadBytes(ra))
	}
	for i, rel := range rels[1:] {
		if data, err, ok := ra.take(rel, 1<<20); !ok || err != nil || string(data) != body(i+1, size) {
			t.Fatalf("take %s: %d bytes, %v, %v", rel, len(data), err, ok)
		}
	}
	settle(t, ra)
	if got := ra.inflight.Load(); got != 0 {
		t.Errorf("everything taken, yet the window counts %d bytes", got)
	}
}

func TestReadAheadGivesBackWhatTheHookPassesOver(t *testing.T) {
	const size = 16 << 10
	c, rels := aheadTree(t, 2*aheadWindow/size, size)
	ra := newReadAhead(c, 1<<20, 1<<30, nil)
	globbed(ra, rels)
	// Every fourth file only: the rest must not fill the window for good.
	for i := 0; i < len(rels); i += 4 {
		if data, err, ok := ra.take(rels[i], 1<<20); !ok || err != nil || string(data) != body(i, size) {
			t.Fatalf("take %s: %d bytes, %v, %v", rels[i], len(data), err, ok)
		}
	}
	settle(t, ra)
	if got := ra.inflight.Load(); got > aheadWorkers*size {
		t.Errorf("after the last file the window still counts %d bytes of files passed over", got)
	}
	// A file passed over can still be read, and is read afresh.
	if data, err, ok := ra.take(rels[1], 1<<20); !ok || err != nil || string(data) != body(1, size) {
		t.Errorf("a file passed over: %d bytes, %v, %v", len(data), err, ok)
	}
	// A second glob is read ahead again, past the run the hook keeps.
	globbed(ra, rels[:2*aheadRun])
	if _, err, ok := ra.take(rels[0], 1<<20); !ok || err != nil {
		t.Fatal(err, ok)
	}
	settle(t, ra)
	if readAheadBytes(ra) == 0 {
		t.Error("a second glob was not read ahead: the first one's files still fill the window")
	}
}

func TestReadAheadEndsWithItsCall(t *testing.T) {
	c, rels := aheadTree(t, 200, 1000)
	ra := newReadAhead(c, 1<<20, 1<<30, nil)
	globbed(ra, rels)
	if _, err, ok := ra.take(rels[0], 1<<20); !ok || err != nil {
		t.Fatal(err, ok)
	}
	ra.stop()
	ra.stop()
	settle(t, ra)
	budget := ra.budget.Load()
	// A take after the end (an abandoned call's) still reads its file,
	// and starts nothing.
	if data, err, ok := ra.take(rels[199], 1<<20); !ok || err != nil || len(data) != 1000 {
		t.Errorf("take after stop: %d bytes, %v, %v", len(data), err, ok)
	}
	time.Sleep(10 * time.Millisecond)
	ra.mu.Lock()
	workers := ra.workers
	ra.mu.Unlock()
	if workers != 0 || ra.budget.Load() != budget {
		t.Error("the read-ahead went on after its call ended")
	}
}

func TestReadAheadAppliesTheBoundOfTheTake(t *testing.T) {
	c, rels := aheadTree(t, 1, 100)
	ra := newReadAhead(c, 1<<20, 1<<20, nil)
	globbed(ra, rels)
	_, err, ok := ra.take(rels[0], 50)
	var tl *repo.TooLargeError
	if !ok || !errors.As(err, &tl) || tl.Size != 100 || tl.Limit != 50 {
		t.Errorf("take with a bound of 50 = %v, %v; want a tooLargeError of 100 bytes", err, ok)
	}
	settle(t, ra)
}

func TestReadAheadRefusesAFileReplacedByALinkOut(t *testing.T) {
	c, rels := aheadTree(t, 1, 10)
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("OUTSIDE"), 0o644); err != nil {
		t.Fatal(err)
	}
	ra := newReadAhead(c, 1<<20, 0, nil) // no budget: the take reads
	globbed(ra, rels)
	p := c.co.Abs(rels[0])
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, p); err != nil {
		t.Fatal(err)
	}
	if data, err, ok := ra.take(rels[0], 1<<20); !ok || !errors.Is(err, repo.ErrOutside) {
		t.Errorf("take of a link out = %q, %v, %v; want ErrOutside", data, err, ok)
	}
}

func TestReadAheadDoesNotFollowADirectorySwappedForALinkOut(t *testing.T) {
	c, rels := aheadTree(t, 1, 10)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "f000"), []byte("OUTSIDE"), 0o644); err != nil {
		t.Fatal(err)
	}
	ra := newReadAhead(c, 1<<20, 0, nil) // no budget: the take reads
	globbed(ra, rels)
	if err := os.RemoveAll(c.co.Abs("d")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, c.co.Abs("d")); err != nil {
		t.Fatal(err)
	}
	data, err, ok := ra.take(rels[0], 1<<20)
	if !ok || !errors.Is(err, repo.ErrOutside) {
		t.Errorf("take through a directory swapped for a link out = %q, %v, %v; want ErrOutside", data, err, ok)
	}
}

func TestReadAheadRemembersOnlyItsLatestGlobs(t *testing.T) {
	c, rels := aheadTree(t, keepGlobs+1, 10)
	ra := newReadAhead(c, 1<<20, 1<<20, nil)
	for _, rel := range rels {
		globbed(ra, []string{rel})
	}
	if _, _, ok := ra.take(rels[0], 1<<20); ok {
		t.Errorf("the oldest of %d globs was remembered; at most %d are", len(rels), keepGlobs)
	}
	if _, err, ok := ra.take(rels[keepGlobs], 1<<20); !ok || err != nil {
		t.Errorf("the latest glob's file: %v, %v", err, ok)
	}
	settle(t, ra)
}

func TestReadAheadTakesFromTheLatestGlobFirst(t *testing.T) {
	c, rels := aheadTree(t, 4, 10)
	ra := newReadAhead(c, 1<<20, 1<<20, nil)
	globbed(ra, rels[:3])
	globbed(ra, rels[2:])
	for _, rel := range rels {
		if _, err, ok := ra.take(rel, 1<<20); !ok || err != nil {
			t.Errorf("take %s = %v, %v", rel, err, ok)
		}
	}
	if f := ra.globs[0].files[2]; f.taken {
		t.Error("the earlier glob's copy of d/f002 was taken, not the latest's")
	}
	settle(t, ra)
}

func TestReadAheadIsSafeForAConcurrentWalk(t *testing.T) {
	c, rels := aheadTree(t, 200, 64)
	ra := newReadAhead(c, 1<<20, 1<<20, nil)
	g := &aheadGlob{}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() { g.add(rels[i*50 : (i+1)*50]) })
	}
	wg.Wait()
	ra.done(g)
	for _, rel := range rels {
		if data, err, ok := ra.take(rel, 1<<20); !ok || err != nil || len(data) != 64 {
			t.Errorf("take %s: %d bytes, %v, %v", rel, len(data), err, ok)
		}
	}
	settle(t, ra)
}

func TestReadAheadRecyclesOnlyWhatIsGivenBack(t *testing.T) {
	// Twice the window, in files that fit a block several times over.
	const size = 48 << 10
	c, rels := aheadTree(t, 2*aheadWindow/size, size)
	ra := newReadAhead(c, 1<<20, 1<<30, nil)
	own := newArena(ra.blocks)
	globbed(ra, rels)
	kept := map[int][]byte{}
	blocks := map[*block]bool{}
	for i, rel := range rels {
		p, err, ok := ra.takeTo(rel, 1<<20, own)
		if !ok || err != nil || string(p.data) != body(i, size) {
			t.Fatalf("take %s: %d bytes, %v, %v", rel, len(p.data), err, ok)
		}
		blocks[p.blk] = true
		if i%40 == 0 {
			kept[i] = p.data // handed on, as read() hands a string to Starlark
			continue
		}
		p.blk.release()
	}
	settle(t, ra)
	for i, data := range kept {
		if string(data) != body(i, size) {
			t.Errorf("%s, kept, was overwritten", rels[i])
		}
	}
	if fresh := len(rels) * size / arenaBlock; len(blocks) > fresh*3/4 {
		t.Errorf("%d files of %d KiB were read into %d blocks; %d fresh ones hold them", len(rels), size>>10, len(blocks), fresh)
	}
}

func TestReadAheadLeavesTheHookTheRunItCaughtUpWith(t *testing.T) {
	c, rels := aheadTree(t, 4*aheadRun, 100)
	ra := newReadAhead(c, 1<<20, 1<<30, nil)
	globbed(ra, rels)
	// The first read of a glob finds nothing read: the hook reads it and
	// the next aheadRun files itself, and the workers start after them.
	if _, err, ok := ra.take(rels[0], 1<<20); !ok || err != nil {
		t.Fatal(err, ok)
	}
	settle(t, ra)
	files := ra.globs[0].files
	for _, f := range files[1 : 1+aheadRun] {
		if f.ahead {
			t.Fatalf("%s, in the hook's run, was read ahead", f.rel)
		}
	}
	if !files[1+aheadRun].ahead {
		t.Errorf("%s, past the hook's run, was not read ahead", files[1+aheadRun].rel)
	}
	for i, rel := range rels[1:] {
		if data, err, ok := ra.take(rel, 1<<20); !ok || err != nil || string(data) != body(i+1, 100) {
			t.Fatalf("take %s: %q, %v, %v", rel, data, err, ok)
		}
	}
}

// TestReadAheadRefusesWhatReplacesTheFilesAfterTheFirst replaces globbed
// files after the first of their directory, which the hook's reader then
// opens from the directory it holds: a link out, a FIFO and a file over
// the bound are refused with the very errors a read of the whole path
// gives.
func TestReadAheadRefusesWhatReplacesTheFilesAfterTheFirst(t *testing.T) {
	c, rels := aheadTree(t, 5, 10)
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("OUTSIDE"), 0o644); err != nil {
		t.Fatal(err)
	}
	ra := newReadAhead(c, 1<<20, 0, nil) // no budget: the takes read
	globbed(ra, rels)
	if data, err, ok := ra.take(rels[0], 1<<20); !ok || err != nil || string(data) != body(0, 10) {
		t.Fatalf("take %s = %q, %v, %v", rels[0], data, err, ok)
	}
	replace := func(rel string, with func(p string) error) {
		t.Helper()
		p := c.co.Abs(rel)
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := with(p); err != nil {
			t.Fatal(err)
		}
	}
	replace(rels[1], func(p string) error { return os.Symlink(outside, p) })
	replace(rels[2], func(p string) error { return syscall.Mkfifo(p, 0o644) })
	replace(rels[3], func(p string) error { return os.WriteFile(p, make([]byte, 2<<20), 0o644) })
	for i, want := range []error{repo.ErrOutside, repo.ErrNotRegular, nil} {
		rel := rels[i+1]
		_, err, ok := ra.take(rel, 1<<20)
		_, whole := c.co.ReadFile(rel, 1<<20)
		if !ok || err == nil || err.Error() != whole.Error() || (want != nil && !errors.Is(err, want)) {
			t.Errorf("take of %s = %v, %v; a read of the whole path says %v", rel, err, ok, whole)
		}
	}
	if data, err, ok := ra.take(rels[4], 1<<20); !ok || err != nil || string(data) != body(4, 10) {
		t.Errorf("take %s after the refusals = %q, %v, %v", rels[4], data, err, ok)
	}
}

// TestReadAheadClosesTheReadersOfItsWorkers looks at what the process's
// descriptors name: the directory the workers' readers hold while they
// idle is let go once the read-ahead stops.
func TestReadAheadClosesTheReadersOfItsWorkers(t *testing.T) {
	c, rels := aheadTree(t, 300, 100)
	dir := c.co.Abs("d")
	holding := func() (n int) {
		fds, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd to look at descriptors in")
		}
		for _, fd := range fds {
			if p, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && p == dir {
				n++
			}
		}
		return n
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	ra := newReadAhead(c, 1<<20, 1<<30, nil)
	globbed(ra, rels)
	for _, rel := range rels[:2] {
		if _, err, ok := ra.take(rel, 1<<20); !ok || err != nil {
			t.Fatal(err, ok)
		}
	}
	settle(t, ra)
	if holding() == 0 {
		t.Skip("no reader holds the directory: nothing to let go of here")
	}
	ra.stop()
	settle(t, ra)
	ra.hook.Close() // as the hook's goroutine does when its call returns
	if n := holding(); n != 0 {
		t.Errorf("%d descriptors of %s still open after the read-ahead stopped", n, dir)
	}
}

func TestSortRunsOrdersFilesBesideSubdirectories(t *testing.T) {
	for _, dirs := range [][][]string{
		{{"src/b/x.go", "src/b/y.go"}, {"src/a/z.go"}, {"src/c/a.go", "src/c/b.go"}},
		{{"src/b/x.go"}, {"src/a.go", "src/c.go"}, {"src/b/c/d.go"}, {"src/a/z.go"}},
		{{"a/b"}, {"a/b/c", "a/b/d"}, {"a/b-c/d"}},
	} {
		g := &aheadGlob{}
		var want []string
		for _, d := range dirs {
			g.add(d)
			want = append(want, d...)
		}
		slices.Sort(want)
		ra := newReadAhead(nil, 1<<20, 0, nil)
		if got := ra.done(g); !slices.Equal(got, want) {
			t.Errorf("done(%q) = %q; want %q", dirs, got, want)
		}
	}
}
