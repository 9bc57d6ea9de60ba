package starlark

import (
	"runtime"
	"slices"
	"strings"
	"sync"
)

// readAhead reads a hook call's globbed files on the other cores, ahead
// of the hook: a rule over a source tree globs it and reads what it found,
// one file at a time, and most of that time is system calls, which other
// cores can make while Starlark runs on one.
//
// Reading ahead starts at the first read of a file a glob listed, from
// there on in the glob's order, so a hook that only counts or filters
// paths reads nothing. It runs at most aheadWindow bytes ahead of the
// hook and within the call's read budget; what it read is handed over
// once (take) and not kept. stop ends it with the call: no worker outlives
// the call by more than the batch it is reading.
type readAhead struct {
	c   *confined
	max int64 // per file, as the call bounds one read

	mu       sync.Mutex // guards the fields below it
	queue    []*aheadFile
	budget   int64 // bytes the call still lets the read-ahead read
	inflight int64 // bytes read ahead and not yet taken
	workers  int
	stopped  bool
	arenas   []*arena // idle workers' arenas, for the next to go on filling

	// globs are the latest finished globs' matches, sorted by path, and
	// reading the one being read ahead. Only the hook's goroutine
	// touches them.
	globs   []*aheadGlob
	reading *aheadGlob
}

type aheadFile struct {
	rel  string // as the glob listed it, and as readFile takes it
	once sync.Once
	// set once, by a worker or by take
	data    []byte
	err     error
	checked bool // see confined.readFile
	ahead   bool // read by a worker: its bytes count in inflight

	taken bool // the hook's goroutine only
}

// aheadGlob is one glob's matches: collected from the walk's goroutines,
// then sorted so that take finds a file without a map. A hook reads what
// it globbed in the order glob listed it, so next is almost always the
// file asked for.
type aheadGlob struct {
	mu    sync.Mutex
	files []*aheadFile
	next  int
}

const (
	// aheadWindow bounds what the read-ahead holds that the hook has not
	// taken yet.
	aheadWindow = 8 << 20
	// aheadBatch is how many files a worker takes from the queue at once.
	aheadBatch = 8
	// keepGlobs is how many globs' matches a call remembers: a read of a
	// path only an older glob listed is simply read, not read ahead.
	keepGlobs = 4
)

func newReadAhead(c *confined, max, budget int64) *readAhead {
	return &readAhead{c: c, max: max, budget: budget}
}

// start begins collecting a glob's matches.
func (ra *readAhead) start() *aheadGlob { return &aheadGlob{} }

// add collects matches as the walk finds them. Safe for concurrent use.
func (g *aheadGlob) add(rels []string) {
	files := make([]*aheadFile, len(rels))
	for i, rel := range rels {
		files[i] = &aheadFile{rel: rel}
	}
	g.mu.Lock()
	g.files = append(g.files, files...)
	g.mu.Unlock()
}

// done makes a finished glob's matches available to take and returns their
// paths, sorted.
func (ra *readAhead) done(g *aheadGlob) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	slices.SortFunc(g.files, func(a, b *aheadFile) int { return strings.Compare(a.rel, b.rel) })
	ra.globs = append(ra.globs, g)
	if len(ra.globs) > keepGlobs {
		if ra.globs[0] == ra.reading {
			ra.read(nil)
		}
		ra.globs = slices.Delete(ra.globs, 0, 1)
	}
	rels := make([]string, len(g.files))
	for i, f := range g.files {
		rels[i] = f.rel
	}
	return rels
}

// take hands over the contents of rel, a path a finished glob listed, read
// ahead or being read, and forgets them; ok is false for any other path,
// or one already taken. A file no worker has started is read here. max
// bounds this read: the call's remaining read budget may be below the
// bound files are read ahead with. Called on the hook's goroutine only.
func (ra *readAhead) take(rel string, max int64) (data []byte, err error, checked, ok bool) {
	g, f := ra.find(rel)
	if f == nil || f.taken {
		return nil, nil, false, false
	}
	if g != ra.reading {
		ra.read(g)
	}
	f.taken = true
	f.once.Do(func() { f.data, f.err, f.checked = ra.c.readFile(f.rel, ra.max, nil) })
	data, err, checked = f.data, f.err, f.checked
	f.data = nil
	if f.ahead {
		ra.mu.Lock()
		ra.inflight -= int64(len(data))
		if ra.inflight < aheadWindow/2 {
			ra.startWorkers()
		}
		ra.mu.Unlock()
	}
	if err == nil && int64(len(data)) > max {
		return nil, &tooLargeError{Size: int64(len(data)), Max: max}, checked, true
	}
	return data, err, checked, true
}

// find looks rel up in the globs, the latest first.
func (ra *readAhead) find(rel string) (*aheadGlob, *aheadFile) {
	if ra == nil {
		return nil, nil
	}
	for i := len(ra.globs) - 1; i >= 0; i-- {
		g := ra.globs[i]
		if g.next < len(g.files) && g.files[g.next].rel == rel {
			g.next++
			return g, g.files[g.next-1]
		}
		j, found := slices.BinarySearchFunc(g.files, rel, func(f *aheadFile, rel string) int { return strings.Compare(f.rel, rel) })
		if found {
			g.next = j + 1
			return g, g.files[j]
		}
	}
	return nil, nil
}

// read makes g the glob being read ahead, from where the hook is in it on;
// nil stops reading ahead.
func (ra *readAhead) read(g *aheadGlob) {
	ra.reading = g
	ra.mu.Lock()
	defer ra.mu.Unlock()
	ra.queue = nil
	if g != nil {
		ra.queue = g.files[g.next:len(g.files):len(g.files)]
		ra.startWorkers()
	}
}

// stop ends the read-ahead: workers finish the batch in hand and leave.
// Safe to call from any goroutine, and more than once.
func (ra *readAhead) stop() {
	if ra == nil {
		return
	}
	ra.mu.Lock()
	defer ra.mu.Unlock()
	ra.stopped, ra.queue = true, nil
}

// startWorkers starts workers while there is work for them and room in
// the window. ra.mu is held.
func (ra *readAhead) startWorkers() {
	for ra.workers < min(runtime.GOMAXPROCS(0), len(ra.queue)) && ra.canRead() {
		ra.workers++
		var a *arena
		if n := len(ra.arenas); n > 0 {
			a, ra.arenas = ra.arenas[n-1], ra.arenas[:n-1]
		} else {
			a = &arena{}
		}
		go ra.work(a)
	}
}

// canRead reports whether workers may read on. ra.mu is held.
func (ra *readAhead) canRead() bool {
	return !ra.stopped && len(ra.queue) > 0 && ra.budget > 0 && ra.inflight < aheadWindow
}

func (ra *readAhead) work(a *arena) {
	var batch []*aheadFile
	for {
		ra.mu.Lock()
		if !ra.canRead() {
			ra.workers--
			ra.arenas = append(ra.arenas, a)
			ra.mu.Unlock()
			return
		}
		n := min(aheadBatch, len(ra.queue))
		batch = append(batch[:0], ra.queue[:n]...)
		ra.queue = ra.queue[n:]
		ra.mu.Unlock()

		var read int64
		for _, f := range batch {
			f.once.Do(func() {
				f.data, f.err, f.checked = ra.c.readFile(f.rel, ra.max, a)
				f.ahead = true
				read += int64(len(f.data))
			})
		}
		ra.mu.Lock()
		ra.budget -= read
		ra.inflight += read
		ra.mu.Unlock()
	}
}
