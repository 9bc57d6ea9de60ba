package starlark

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/the-loop/the-loop/graph"
)

func TestArenaReusesABlockOnceEveryPieceIsBack(t *testing.T) {
	pool := &blockPool{}
	a := newArena(pool)
	const n = arenaMaxPiece
	var pieces [4][]byte
	var first *block
	for i := range pieces {
		pieces[i] = a.alloc(n)
		if i == 0 {
			first = a.last
		}
		if a.last != first {
			t.Fatalf("piece %d was not cut from the first block", i)
		}
	}
	// The next piece needs another block.
	a.alloc(1)
	if a.last == first {
		t.Fatal("a full block was cut from again")
	}
	for range pieces[1:] {
		first.release()
	}
	if len(pool.free) != 0 {
		t.Fatal("a block went back to its pool with a piece still out")
	}
	first.release()
	if len(pool.free) != 1 || pool.free[0] != first {
		t.Fatalf("every piece back, yet the pool holds %d blocks", len(pool.free))
	}
	// The next block taken is that one, from its start.
	var p []byte
	for range 4 {
		if p = a.alloc(arenaMaxPiece); a.last == first {
			break
		}
	}
	if a.last != first || unsafe.SliceData(p) != unsafe.SliceData(pieces[0]) {
		t.Error("a block given back was not reused")
	}
}

func TestArenaPinsABlockAPieceOfIsKept(t *testing.T) {
	pool := &blockPool{}
	a := newArena(pool)
	kept := a.alloc(10)
	blk := a.last
	copy(kept, "0123456789")
	a.close() // the arena's own hold
	if len(pool.free) != 0 {
		t.Fatal("a block went back to its pool while a piece of it is kept")
	}
	for range 4 * poolBlocks {
		a.alloc(arenaMaxPiece)
		a.last.release()
	}
	if string(kept) != "0123456789" || blk.refs.Load() != 1 {
		t.Errorf("a kept piece reads %q (its block held %d times)", kept, blk.refs.Load())
	}
}

// TestSearchingAReadRecyclesItsMemory runs a rule over a tree many blocks
// large that keeps a few files' contents as strings and only searches the
// rest: what it keeps stays intact, with the read-ahead and without, and
// without it (the reads made when asked) the searched files take a block
// or two of fresh memory, not one buffer each.
func TestSearchingAReadRecyclesItsMemory(t *testing.T) {
	const files, size = 600, 3000
	tree := map[string]string{hooksFile: `
def _rule(ctx):
    kept = {}
    found = 0
    for p in ctx.repo.glob("src/*.txt"):
        if p < "src/f0002":
            kept[p] = ctx.repo.read(p)
        elif "needle" in ctx.repo.read(p):
            found += 1
    for p, s in kept.items():
        if s != "file " + p + "\n" + "x" * (3000 - len(p) - 6):
            return block(message("a kept string changed", path = p))
    return ok(data = {"found": found, "kept": len(kept)})

hook("x-rule", _rule)
`}
	for i := range files {
		rel := fmt.Sprintf("src/f%04d.txt", i)
		body := "file " + rel + "\n"
		body += strings.Repeat("x", size-len(body))
		if i%5 == 3 {
			body = body[:size-6] + "needle"
		}
		tree[rel] = body
	}
	root := writeTree(t, tree)
	table, err := Load([]Module{declared}, Options{Repo: root})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		ctx  *graph.Context
	}{{"read ahead", pureCtx(root)}, {"read when asked", gctx(root)}} {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			r, err := table["x-rule"].Run(c.ctx)
			runtime.ReadMemStats(&after)
			if err != nil || r.Status != graph.StatusPass || r.Data["found"] != 120 || r.Data["kept"] != 2 {
				t.Fatalf("%v %s %v", err, r.Render(), r.Data)
			}
			grew := after.TotalAlloc - before.TotalAlloc
			t.Logf("allocated %d KiB reading %d KiB", grew>>10, files*size>>10)
			if c.ctx.Files.Cached() {
				return // the read-ahead may read it all before a file is searched
			}
			if limit := uint64(files * size / 2); grew > limit {
				t.Errorf("searching %d files of %d bytes allocated %d bytes; want at most %d", files, size, grew, limit)
			}
		})
	}
}
