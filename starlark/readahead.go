package starlark

import (
	"runtime"
	"slices"
	"strings"
	"sync"
)

// readAhead reads the files a hook call's globs found on every core, ahead
// of the hook, which reads them next one file at a time: most of reading a
// source tree is system calls, which other cores can make while Starlark
// runs on one. It lives for one hook call; what it has read is handed over
// once (take) and not kept, so a tree read file by file is not held twice.
//
// Workers start as paths arrive and stop when none are left, so nothing
// needs closing and no goroutine outlives the work.
type readAhead struct {
	max int64 // per file, as readRegular bounds it

	mu      sync.Mutex // guards queue, budget and workers
	queue   []*aheadFile
	budget  int64 // bytes still to be read ahead
	workers int

	// globs are the matches of each finished glob, sorted by path. Only
	// the hook's goroutine touches them.
	globs []*aheadGlob
}

type aheadFile struct {
	rel  string // as the glob listed it
	path string // on the host
	once sync.Once
	data []byte // set once, by a worker or by take
	err  error

	taken bool // the hook's goroutine only
}

// aheadGlob is one glob's matches: collected from the walk's goroutines,
// then sorted so that take finds a file without a map. A hook reads what
// it globbed in the order glob listed it, so next is almost always the
// file asked for.
type aheadGlob struct {
	ra    *readAhead
	mu    sync.Mutex
	files []*aheadFile
	next  int
}

func newReadAhead(max, budget int64) *readAhead {
	return &readAhead{max: max, budget: budget}
}

// start begins collecting a glob's matches.
func (ra *readAhead) start() *aheadGlob { return &aheadGlob{ra: ra} }

// add queues matches to be read, starting workers as needed, and returns
// at once. Safe for concurrent use.
func (g *aheadGlob) add(c *confined, rels []string) {
	files := make([]*aheadFile, len(rels))
	for i, rel := range rels {
		files[i] = &aheadFile{rel: rel, path: c.abs(rel)}
	}
	g.mu.Lock()
	g.files = append(g.files, files...)
	g.mu.Unlock()
	g.ra.queueFiles(files)
}

// done makes the glob's matches available to take, now that the walk is
// over, and returns their paths, sorted.
func (g *aheadGlob) done() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	slices.SortFunc(g.files, func(a, b *aheadFile) int { return strings.Compare(a.rel, b.rel) })
	g.ra.globs = append(g.ra.globs, g)
	rels := make([]string, len(g.files))
	for i, f := range g.files {
		rels[i] = f.rel
	}
	return rels
}

func (ra *readAhead) queueFiles(files []*aheadFile) {
	ra.mu.Lock()
	defer ra.mu.Unlock()
	if ra.budget <= 0 {
		return // take reads them when asked
	}
	ra.queue = append(ra.queue, files...)
	for n := min(runtime.GOMAXPROCS(0), len(ra.queue)); ra.workers < n; ra.workers++ {
		go ra.work()
	}
}

// aheadBatch is how many files a worker takes from the queue at once.
const aheadBatch = 8

func (ra *readAhead) work() {
	var a arena
	var batch []*aheadFile
	for {
		ra.mu.Lock()
		if len(ra.queue) == 0 || ra.budget <= 0 {
			ra.workers--
			ra.queue = nil
			ra.mu.Unlock()
			return
		}
		n := min(aheadBatch, len(ra.queue))
		batch = append(batch[:0], ra.queue[:n]...)
		clear(ra.queue[:n])
		ra.queue = ra.queue[n:]
		ra.mu.Unlock()

		var read int64
		for _, f := range batch {
			f.once.Do(func() {
				f.data, f.err = readRegular(f.path, ra.max, &a)
				read += int64(len(f.data))
			})
		}
		ra.mu.Lock()
		ra.budget -= read
		ra.mu.Unlock()
	}
}

// take hands over the contents of rel, a path a finished glob listed, read
// ahead or being read, and forgets them; ok is false for any other path,
// or one already taken. A file no worker has started yet is read here.
// max bounds this read: the call's remaining read budget may be below the
// bound the file was read ahead with. Called on the hook's goroutine only.
func (ra *readAhead) take(rel string, max int64) (data []byte, err error, ok bool) {
	f := ra.find(rel)
	if f == nil || f.taken {
		return nil, nil, false
	}
	f.taken = true
	f.once.Do(func() { f.data, f.err = readRegular(f.path, ra.max, nil) })
	data, err = f.data, f.err
	f.data = nil
	if err == nil && int64(len(data)) > max {
		return nil, &tooLargeError{Size: int64(len(data)), Max: max}, true
	}
	return data, err, true
}

// find looks rel up in the globs, the latest first.
func (ra *readAhead) find(rel string) *aheadFile {
	if ra == nil {
		return nil
	}
	for i := len(ra.globs) - 1; i >= 0; i-- {
		g := ra.globs[i]
		if g.next < len(g.files) && g.files[g.next].rel == rel {
			g.next++
			return g.files[g.next-1]
		}
		j, found := slices.BinarySearchFunc(g.files, rel, func(f *aheadFile, rel string) int { return strings.Compare(f.rel, rel) })
		if found {
			g.next = j + 1
			return g.files[j]
		}
	}
	return nil
}
