package graph

import (
	"sync"
	"unsafe"
)

// arenaBlock is how much an Arena takes at a time: a work item's
// artifacts come to some tens of kilobytes.
const arenaBlock = 256 << 10

// arenaLargest is the largest read an Arena serves: a larger file is
// given memory of its own, as if there were no arena.
const arenaLargest = arenaBlock / 4

// Arena is memory that read-only evaluations read files into, one after
// another: a check of many items reads every item's artifacts and drops
// them once its report is made, and memory allocated afresh for each is
// zeroed first and then collected. An Arena is lent to one evaluation at
// a time (Files.Lend) and Reset when its report no longer holds any of it
// (StatusReport.Detach). It is safe for concurrent use by the hooks of
// the evaluation it is lent to.
type Arena struct {
	mu     sync.Mutex
	blocks []*[arenaBlock]byte
	cur    int // the block being carved
	off    int // how much of it is carved
}

// NewArena returns an empty Arena; it takes memory as it is asked for.
func NewArena() *Arena { return &Arena{} }

// alloc is a buffer of size bytes, for a read to fill: never zeroed, and
// capped, so that an append to what is read copies.
func (a *Arena) alloc(size int64) []byte {
	if size > arenaLargest {
		return make([]byte, size)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	n := int(size)
	if len(a.blocks) == 0 || a.off+n > arenaBlock {
		if len(a.blocks) > 0 {
			a.cur++
		}
		if a.cur == len(a.blocks) {
			a.blocks = append(a.blocks, new([arenaBlock]byte))
		}
		a.off = 0
	}
	b := a.blocks[a.cur][a.off : a.off+n : a.off+n]
	a.off += n
	return b
}

// Owner reports whether a string is a view of memory the Arena has handed
// out: it takes the Arena's blocks as they are now, once, and asks of each
// string without locking. Detach asks it of every string of a report.
func (a *Arena) Owner() func(string) bool {
	a.mu.Lock()
	starts := make([]uintptr, len(a.blocks))
	for i, b := range a.blocks {
		starts[i] = uintptr(unsafe.Pointer(b))
	}
	a.mu.Unlock()
	return func(s string) bool {
		if len(s) == 0 {
			return false
		}
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		for _, start := range starts {
			if p >= start && p < start+arenaBlock {
				return true
			}
		}
		return false
	}
}

// Reset makes everything the Arena handed out its own again, to hand out
// anew: the caller must hold no view of it any more.
func (a *Arena) Reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cur, a.off = 0, 0
}
