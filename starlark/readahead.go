package starlark

import (
	"runtime"
	"sync"
)

// readAhead reads the files one glob found on every core, ahead of the
// hook that reads them next, one file at a time: most of reading a source
// tree is system calls, which other cores can make while Starlark runs on
// one. It lives for one hook call; what it has read is handed over once
// (take) and not kept, so a tree read file by file is not held twice.
//
// Workers start as paths arrive and stop when none are left, so nothing
// needs closing and no goroutine outlives the work.
type readAhead struct {
	max int64 // per file, as readRegular bounds it

	mu      sync.Mutex
	files   map[string]*aheadFile // by host path, until taken
	queue   []*aheadFile          // not yet started, oldest first
	budget  int64                 // bytes still to be read ahead
	workers int
}

type aheadFile struct {
	path string
	once sync.Once // guards data and err: read by a worker or by take
	data []byte
	err  error
}

func newReadAhead(max, budget int64) *readAhead {
	return &readAhead{max: max, budget: budget, files: map[string]*aheadFile{}}
}

// add queues host paths to be read, starting workers as needed, and
// returns at once. Safe for concurrent use.
func (ra *readAhead) add(paths []string) {
	ra.mu.Lock()
	defer ra.mu.Unlock()
	if ra.budget <= 0 {
		return
	}
	for _, p := range paths {
		if _, ok := ra.files[p]; !ok {
			f := &aheadFile{path: p}
			ra.files[p] = f
			ra.queue = append(ra.queue, f)
		}
	}
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

// take hands over path's contents, read ahead or being read, and forgets
// them; ok is false when path was never queued. A file no worker has
// started yet is read here. max bounds this read: the call's remaining
// read budget may be below the bound the file was read ahead with.
func (ra *readAhead) take(path string, max int64) (data []byte, err error, ok bool) {
	if ra == nil {
		return nil, nil, false
	}
	ra.mu.Lock()
	f := ra.files[path]
	delete(ra.files, path)
	ra.mu.Unlock()
	if f == nil {
		return nil, nil, false
	}
	f.once.Do(func() { f.data, f.err = readRegular(f.path, ra.max, nil) })
	data, err = f.data, f.err
	f.data = nil
	if err == nil && int64(len(data)) > max {
		return nil, &tooLargeError{Size: int64(len(data)), Max: max}, true
	}
	return data, err, true
}
