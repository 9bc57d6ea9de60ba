package starlark

// arena hands out the buffers one read-ahead worker reads files into, cut
// from larger blocks. A hook reading a source tree reads thousands of
// files of a few KiB; allocating each on its own costs the Go allocator
// about as much as the read. A block stays alive while any file cut from it
// does, which for a hook call's reads is until the call ends.
type arena struct{ block []byte }

const (
	arenaBlock = 1 << 20
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
		a.block = make([]byte, arenaBlock)
	}
	b := a.block[:n:n]
	a.block = a.block[n:]
	return b
}
