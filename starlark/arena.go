package starlark

// arena hands out the buffers one read-ahead worker reads files into, cut
// from larger blocks. A hook reading a source tree reads thousands of
// files of a few KiB; allocating each on its own costs the Go allocator
// about as much as the read. A block stays alive while any string cut from
// it does; a result's strings are copied (see messageBuiltin and toGo), so
// that is at most until the call ends. Blocks start small and double, so
// that reading a handful of files does not take a megabyte.
type arena struct {
	block []byte
	next  int64 // the size of the next block
}

const (
	arenaFirstBlock = 64 << 10
	arenaBlock      = 1 << 20
	// arenaMaxPiece: a larger file gets a buffer of its own, so that one
	// big read does not waste most of a block.
	arenaMaxPiece = 64 << 10
)

// alloc returns a buffer of n bytes; a nil arena allocates plainly.
func (a *arena) alloc(n int64) []byte {
	if a == nil || n > arenaMaxPiece {
		return make([]byte, n)
	}
	if int64(len(a.block)) < n {
		a.next = min(max(a.next, arenaFirstBlock), arenaBlock)
		a.block = make([]byte, a.next)
		a.next *= 2
	}
	b := a.block[:n:n]
	a.block = a.block[n:]
	return b
}
