package starlark

import (
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/the-loop/the-loop/repo"
)

// readAhead reads a hook call's globbed files on the other cores, ahead
// of the hook: a rule over a source tree globs it and reads what it found,
// one file at a time, and most of that time is system calls, which other
// cores can make while Starlark runs on one.
//
// Reading ahead starts at the first read of a file a glob listed, from
// there on in the glob's order, so a hook that only counts or filters
// paths reads nothing. What it holds that the hook has not taken stays
// within aheadWindow (plus at most one file per worker), and all it reads
// within the call's read budget; a file the hook passes over, or a glob it
// moves on from, gives its bytes back. What it read is handed over once
// (take) and not kept. When the hook catches up with the workers it reads
// a run of files itself and the workers go on past it (claimRun), rather
// than the hook waiting on each file a worker has just started. stop ends
// it with the call: no worker outlives the call by more than the file it
// is reading.
type readAhead struct {
	t   *tree
	max int64 // per file, as the call bounds one read

	budget   atomic.Int64 // bytes the call still lets the read-ahead read
	inflight atomic.Int64 // bytes read ahead and not yet taken or given back
	stopped  atomic.Bool

	mu    sync.Mutex // guards queue, back, workers and idle
	queue []*aheadFile
	// back is what workers took from the queue and put back unread when
	// the window filled: a few files, read before the queue. Put back
	// into the queue itself, they would cost a copy of all of it.
	back    []*aheadFile
	workers int
	idle    []*aheadWorker // what idle workers read with, for the next to go on with
	// blocks is where the workers' arenas take their blocks from, and
	// where a piece the hook is done with goes back to.
	blocks *blockPool
	// hook is the hook's goroutine's reader, for the files it reads
	// itself (see repoValue.rd); nil reads through the checkout.
	hook *repo.Reader

	// globs are the latest finished globs' matches, sorted by path, and
	// reading the one being read ahead. Only the hook's goroutine
	// touches them.
	globs   []*aheadGlob
	reading *aheadGlob
}

// aheadWorker is what a worker reads with: the arena it reads into and
// its reader, which holds the directory it reads in (see repo.Reader).
// A worker that leaves hands them to the next; stop closes the reader.
type aheadWorker struct {
	a  *arena
	rd *repo.Reader
}

type aheadFile struct {
	rel  string // as the glob listed it, and as readFile takes it
	once sync.Once
	// set once, by a worker or by take
	data  []byte
	blk   *block // the arena block data was cut from; nil if none
	err   error
	ahead bool // read by a worker: its bytes count in inflight

	// ready is set by the worker that read the file, once it has.
	ready atomic.Bool
	// claimed is set by the hook for a file it is about to reach and will
	// read itself: workers pass it over (see claimRun).
	claimed atomic.Bool

	// the hook's goroutine only
	taken   bool
	dropped bool // passed over: once is spent, and data let go
}

// aheadGlob is one glob's matches: collected from the walk's goroutines,
// then sorted so that take finds a file without a map. A hook reads what
// it globbed in the order glob listed it, so next is almost always the
// file asked for.
type aheadGlob struct {
	mu sync.Mutex
	// runs are the directories' matches, each sorted, until done puts
	// them in order as files.
	runs  [][]*aheadFile
	files []*aheadFile
	next  int
}

const (
	// aheadWindow bounds what the read-ahead holds that the hook has not
	// taken yet: a hundred source files or so. All of it is memory the
	// workers fill before the hook gives it back (see arena), and in a
	// short process fresh memory costs a page fault per page; reading
	// further ahead gains nothing once the file the hook wants next is
	// always read.
	aheadWindow = 512 << 10
	// aheadBatch is how many files a worker takes from the queue at once.
	aheadBatch = 8
	// aheadWorkers caps the workers: past a few, readers only contend in
	// the kernel, and each may read one file past the window.
	aheadWorkers = 4
	// aheadRun is how many files the hook keeps for itself when it has
	// caught up with the workers (see claimRun).
	aheadRun = 32
	// keepGlobs is how many globs' matches a call remembers: a read of a
	// path only an older glob listed is simply read, not read ahead.
	keepGlobs = 4
)

// newReadAhead returns a read-ahead for one call, its workers reading
// into blocks of pool (a pool of its own if nil).
func newReadAhead(t *tree, max, budget int64, pool *blockPool) *readAhead {
	if pool == nil {
		pool = &blockPool{}
	}
	ra := &readAhead{t: t, max: max, blocks: pool, hook: t.reader()}
	ra.budget.Store(budget)
	return ra
}

// add collects one directory's matches as the walk finds them, sorted
// here, on the walk's goroutines, so that done has only runs to put in
// order. Safe for concurrent use.
func (g *aheadGlob) add(rels []string) {
	if len(rels) == 0 {
		return
	}
	// One allocation per directory, not per file.
	all := make([]aheadFile, len(rels))
	files := make([]*aheadFile, len(rels))
	for i, rel := range rels {
		all[i].rel = rel
		files[i] = &all[i]
	}
	slices.SortFunc(files, byRel)
	g.mu.Lock()
	g.runs = append(g.runs, files)
	g.mu.Unlock()
}

func byRel(a, b *aheadFile) int { return strings.Compare(a.rel, b.rel) }

// sortRuns returns the files of runs, each sorted, in order. Ordered by
// their first paths, the runs of directories none of which holds another
// follow one another without overlapping, and are then simply joined:
// a sort of ten thousand paths, most of a long prefix alike, costs a
// hook over a tree more than a millisecond. Runs that overlap, where
// files lie beside subdirectories, are sorted together.
func sortRuns(runs [][]*aheadFile) []*aheadFile {
	slices.SortFunc(runs, func(a, b []*aheadFile) int { return byRel(a[0], b[0]) })
	n := 0
	for _, r := range runs {
		n += len(r)
	}
	files := make([]*aheadFile, 0, n)
	overlap := false
	for _, r := range runs {
		if len(files) > 0 && byRel(files[len(files)-1], r[0]) > 0 {
			overlap = true
		}
		files = append(files, r...)
	}
	if overlap {
		slices.SortFunc(files, byRel)
	}
	return files
}

// done makes a finished glob's matches available to take and returns their
// paths, sorted.
func (ra *readAhead) done(g *aheadGlob) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.files, g.runs = sortRuns(g.runs), nil
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

// piece is a file's contents as the read-ahead hands them over. blk is
// the arena block they were cut from, nil for a buffer of their own: a
// caller done with the bytes, which it handed to nothing else, gives
// them back with blk.release; one that hands them on keeps blk as it is.
type piece struct {
	data []byte
	blk  *block
}

// take is takeTo reading a file no worker has started into a buffer of
// its own.
func (ra *readAhead) take(rel string, max int64) (data []byte, err error, ok bool) {
	p, err, ok := ra.takeTo(rel, max, nil)
	return p.data, err, ok
}

// takeTo hands over the contents of rel, a path a finished glob listed,
// read ahead or being read, and forgets them; ok is false for any other
// path, or one already taken. A file no worker has started is read here,
// into own (plainly if nil). max bounds this read: the call's remaining
// read budget may be below the bound files are read ahead with. Called on
// the hook's goroutine only.
func (ra *readAhead) takeTo(rel string, max int64, own *arena) (p piece, err error, ok bool) {
	g, f := ra.find(rel)
	if f == nil || f.taken {
		return piece{}, nil, false
	}
	if !f.ready.Load() && !f.claimed.Load() {
		ra.claimRun(g) // before any worker starts on g
	}
	if g != ra.reading {
		ra.read(g)
	}
	f.taken = true
	read := false
	readHere := func() {
		f.data, f.err = ra.t.readFile(ra.hook, f.rel, ra.max, own.allocTo())
		f.blk = own.taken(f.err)
		read = true
	}
	f.once.Do(readHere)
	if f.dropped && !read {
		readHere()
	}
	p, err = piece{f.data, f.blk}, f.err
	f.data, f.blk = nil, nil
	if f.ahead && !f.dropped {
		ra.giveBack(int64(len(p.data)))
	}
	if err == nil && int64(len(p.data)) > max {
		p.blk.release()
		return piece{}, &repo.TooLargeError{Size: int64(len(p.data)), Limit: max}, true
	}
	return p, err, true
}

// claimRun is called when the hook has caught up with the workers: the
// file it wants next is being read, or not yet started, and not one of
// a run it has claimed already. It keeps the next aheadRun files for
// itself, which the workers pass over, so that
// they go on from further ahead. Otherwise a worker would start on the
// very file the hook wants after this one, the hook would wait for it,
// and the two would go on in step, the hook waiting for every file: a
// wait is a sleep and a wake-up of a thread, while reading the file
// itself costs the hook no more than it costs the worker; and while the
// hook reads its run the workers get ahead again.
func (ra *readAhead) claimRun(g *aheadGlob) {
	for _, f := range g.files[g.next:min(g.next+aheadRun, len(g.files))] {
		f.claimed.Store(true)
	}
}

// find looks rel up in the globs, the latest first, and moves that glob's
// cursor past it: files the hook passed over are dropped.
func (ra *readAhead) find(rel string) (*aheadGlob, *aheadFile) {
	if ra == nil {
		return nil, nil
	}
	for i := len(ra.globs) - 1; i >= 0; i-- {
		g := ra.globs[i]
		j := g.next
		if j >= len(g.files) || g.files[j].rel != rel {
			var found bool
			j, found = slices.BinarySearchFunc(g.files, rel, func(f *aheadFile, rel string) int { return strings.Compare(f.rel, rel) })
			if !found {
				continue
			}
		}
		if g == ra.reading {
			for _, f := range g.files[min(g.next, j):j] {
				ra.drop(f)
			}
		}
		g.next = j + 1
		return g, g.files[j]
	}
	return nil, nil
}

// drop lets go of a file the hook passed over: a read in progress ends
// first, one not started never starts, and its bytes leave the window. A
// later take reads it afresh.
func (ra *readAhead) drop(f *aheadFile) {
	if f.taken || f.dropped {
		return
	}
	f.once.Do(func() {})
	f.dropped = true
	if f.ahead {
		ra.giveBack(int64(len(f.data)))
	}
	f.blk.release()
	f.data, f.blk = nil, nil
}

// giveBack returns n bytes to the window, waking workers when it has room.
func (ra *readAhead) giveBack(n int64) {
	if ra.inflight.Add(-n) < aheadWindow/2 {
		ra.mu.Lock()
		ra.startWorkers()
		ra.mu.Unlock()
	}
}

// read makes g the glob being read ahead, from where the hook is in it on,
// and drops what the previous one read ahead; nil stops reading ahead.
func (ra *readAhead) read(g *aheadGlob) {
	old := ra.reading
	ra.reading = g
	ra.mu.Lock()
	ra.queue, ra.back = nil, nil
	if g != nil {
		ra.queue = g.files[g.next:len(g.files):len(g.files)]
	}
	ra.mu.Unlock()
	if old != nil {
		for _, f := range old.files[old.next:] {
			ra.drop(f)
		}
	}
	ra.mu.Lock()
	ra.startWorkers()
	ra.mu.Unlock()
}

// stop ends the read-ahead: workers finish the file in hand and leave,
// and the readers of those gone are closed. Safe to call from any
// goroutine, and more than once.
func (ra *readAhead) stop() {
	if ra == nil {
		return
	}
	ra.stopped.Store(true)
	ra.mu.Lock()
	defer ra.mu.Unlock()
	ra.queue, ra.back = nil, nil
	for _, w := range ra.idle {
		w.rd.Close()
	}
	ra.idle = nil
}

// canRead reports whether workers may read on.
func (ra *readAhead) canRead() bool {
	return !ra.stopped.Load() && ra.budget.Load() > 0 && ra.inflight.Load() < aheadWindow
}

// startWorkers starts workers while there is work for them and room in
// the window: one per core besides the hook's own, which reads too (see
// claimRun), so that no worker waits for a core the hook or another
// worker holds; and one on a single core, where a read that waits on the
// disk still lets the hook run meanwhile. ra.mu is held.
func (ra *readAhead) startWorkers() {
	for ra.workers < min(max(runtime.GOMAXPROCS(0)-1, 1), aheadWorkers, len(ra.back)+len(ra.queue)) && ra.canRead() {
		ra.workers++
		var w *aheadWorker
		if n := len(ra.idle); n > 0 {
			w, ra.idle = ra.idle[n-1], ra.idle[:n-1]
		} else {
			w = &aheadWorker{a: newArena(ra.blocks), rd: ra.t.reader()}
		}
		go ra.work(w)
	}
}

func (ra *readAhead) work(w *aheadWorker) {
	a := w.a
	var batch []*aheadFile
	for {
		ra.mu.Lock()
		if len(ra.back)+len(ra.queue) == 0 || !ra.canRead() {
			ra.workers--
			// Under mu, so that stop, which sets stopped before it takes
			// mu, either finds w idle or is seen here.
			if ra.stopped.Load() {
				w.rd.Close()
			} else {
				ra.idle = append(ra.idle, w)
			}
			ra.mu.Unlock()
			return
		}
		from := &ra.queue
		if len(ra.back) > 0 {
			from = &ra.back
		}
		n := min(aheadBatch, len(*from))
		batch = append(batch[:0], (*from)[:n]...)
		*from = (*from)[n:]
		ra.mu.Unlock()

		for i, f := range batch {
			if !ra.canRead() {
				// Put back what is left, for when there is room again.
				ra.mu.Lock()
				if !ra.stopped.Load() {
					ra.back = slices.Insert(ra.back, 0, batch[i:]...)
				}
				ra.mu.Unlock()
				break
			}
			if f.claimed.Load() {
				continue // the hook reads it
			}
			f.once.Do(func() {
				f.data, f.err = ra.t.readFile(w.rd, f.rel, ra.max, a.allocTo())
				f.blk = a.taken(f.err)
				f.ahead = true
				ra.budget.Add(-int64(len(f.data)))
				ra.inflight.Add(int64(len(f.data)))
				f.ready.Store(true)
			})
		}
	}
}
