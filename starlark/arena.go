package starlark

import (
	"sync"
	"sync/atomic"
)

// arena hands out the buffers a hook call's files are read into, cut from
// blocks of a blockPool. A hook reading a source tree reads thousands of
// files of a few KiB; allocating each on its own costs the Go allocator
// about as much as the read.
//
// A block is reused once every piece cut from it has been given back
// (block.release). A read whose contents a hook only searches ("x" in
// ctx.repo.read(p): see searchedFile) gives its piece back as soon as it
// is searched, so a rule over ten thousand files reads them into the same
// few blocks, the way grep reads into one buffer, instead of into fresh
// memory: in a short process, every page of fresh memory is a page fault,
// and those cost as much CPU as the reads themselves. A piece handed to
// Starlark as a string is never given back: its block is the collector's
// to free once no string cut from it is left, and a result's strings are
// copied (see messageBuiltin and toGo), so that is at most when the call
// ends.
//
// An arena is used by one goroutine at a time; blocks move between
// goroutines through their pool.
type arena struct {
	pool *blockPool
	cur  *block
	// last is the block alloc last cut from, nil if that buffer is one
	// of its own: the caller of a read that allocates through alloc
	// learns from it what to give back.
	last *block
	// allocFn is alloc as a function value, made once: a method value
	// made per read would be an allocation per file.
	allocFn func(int64) []byte
}

// block is memory pieces are cut from.
type block struct {
	buf  []byte // what is left to cut from
	mem  []byte // all of it, to start again from
	refs atomic.Int32
	pool *blockPool
}

// blockPool keeps blocks whose pieces have all been given back, for the
// arenas of one call. Safe for concurrent use.
type blockPool struct {
	mu   sync.Mutex
	free []*block
}

const (
	// arenaBlock is a block's size: a few dozen source files. Small
	// blocks come back to the pool soon after their files are searched.
	arenaBlock = 256 << 10
	// arenaMaxPiece: a larger file gets a buffer of its own, so that one
	// big read does not waste most of a block.
	arenaMaxPiece = 64 << 10
	// poolBlocks bounds the blocks a pool keeps: past what the read-ahead
	// window holds, a block given back is left to the collector.
	poolBlocks = aheadWindow/arenaBlock + 2*aheadWorkers + 2
)

func newArena(pool *blockPool) *arena {
	a := &arena{pool: pool}
	a.allocFn = a.alloc
	return a
}

// alloc returns a buffer of n bytes and sets a.last to the block it was
// cut from; a nil arena allocates plainly.
func (a *arena) alloc(n int64) []byte {
	if a == nil {
		return make([]byte, n)
	}
	a.last = nil
	if n > arenaMaxPiece {
		return make([]byte, n)
	}
	if a.cur == nil || int64(len(a.cur.buf)) < n {
		a.cur.release() // the arena's own hold: it cuts no more from it
		a.cur = a.pool.get()
	}
	b := a.cur
	p := b.buf[:n:n]
	b.buf = b.buf[n:]
	b.refs.Add(1)
	a.last = b
	return p
}

// close gives back the block the arena was cutting from.
func (a *arena) close() {
	if a != nil {
		a.cur.release()
		a.cur, a.last = nil, nil
	}
}

// release gives back one piece of b (or the arena's hold on it); the last
// one returns b to its pool. A nil block is a buffer of its own: nothing
// to give back.
func (b *block) release() {
	if b == nil {
		return
	}
	if n := b.refs.Add(-1); n == 0 {
		b.pool.put(b)
	} else if n < 0 {
		panic("starlark: an arena block given back more often than cut from")
	}
}

// get returns an empty block, held once (by the arena cutting from it).
func (p *blockPool) get() *block {
	p.mu.Lock()
	var b *block
	if n := len(p.free); n > 0 {
		b, p.free = p.free[n-1], p.free[:n-1]
	}
	p.mu.Unlock()
	if b == nil {
		b = &block{mem: make([]byte, arenaBlock), pool: p}
	}
	b.buf = b.mem
	b.refs.Store(1)
	return b
}

func (p *blockPool) put(b *block) {
	p.mu.Lock()
	if len(p.free) < poolBlocks {
		p.free = append(p.free, b)
	}
	p.mu.Unlock()
}

// allocTo returns the function a read allocates its buffer with, for
// taken to tell which block that buffer came from; nil (allocate plainly)
// for a nil arena.
func (a *arena) allocTo() func(int64) []byte {
	if a == nil {
		return nil
	}
	a.last = nil
	return a.allocFn
}

// taken returns the block the read just made through allocTo cut its
// buffer from, for the reader to give back when done with it. A read that
// failed keeps nothing: its piece goes back now.
func (a *arena) taken(err error) *block {
	if a == nil {
		return nil
	}
	b := a.last
	a.last = nil
	if err != nil {
		b.release()
		return nil
	}
	return b
}
