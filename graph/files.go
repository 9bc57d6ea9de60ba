package graph

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// Files is a read-through cache of the files one evaluation reads. check
// evaluates every node of an item against the same artifacts, and several
// hooks read the same file (execution-log.md gates half the loop), so each
// file is read and its front matter parsed once per item. It also gives
// every hook of one evaluation the same view of the tree.
//
// A nil *Files reads straight from disk. The runtime only uses a cache for
// read-only evaluations: a mutating chain may write an artifact that a later
// hook must see. Files is safe for concurrent use.
type Files struct {
	mu sync.Mutex
	m  map[string]*cachedFile
	// regular caches ReadRegular separately: an entry of m may have been
	// read through a symbolic link, which ReadRegular must refuse.
	regular map[string]*cachedFile
}

type cachedFile struct {
	// readOnce guards data and err; taken marks a ReadRegular entry whose
	// contents a TakeRegular handed over.
	readOnce sync.Once
	taken    bool
	data     []byte
	err      error

	textOnce sync.Once
	text     string
	textErr  error

	fmOnce sync.Once
	fm     map[string]any
	body   string
}

// NewFiles returns an empty cache.
func NewFiles() *Files { return &Files{m: map[string]*cachedFile{}, regular: map[string]*cachedFile{}} }

// Errors ReadRegular returns.
var (
	// ErrSymlink: the path's last element is a symbolic link.
	ErrSymlink = errors.New("is a symbolic link")
	// ErrNotRegular: the path is a directory, a device, a pipe...
	ErrNotRegular = errors.New("is not a regular file")
)

// TooLargeError is a file over ReadRegular's bound.
type TooLargeError struct{ Size, Max int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("is %d bytes; a read is limited to %d", e.Size, e.Max)
}

type pathError struct {
	op, path string
	err      error
}

func (e *pathError) Error() string { return e.op + " " + e.path + ": " + e.err.Error() }
func (e *pathError) Unwrap() error { return e.err }

// ReadRegular reads path if it is a regular file of at most max bytes,
// refusing a symbolic link in its last element (ErrSymlink) instead of
// following it: the caller has already checked the directories above it.
// Results are cached like ReadFile's.
func (f *Files) ReadRegular(path string, max int64) ([]byte, error) {
	if f == nil {
		return readRegular(path, max)
	}
	c, _ := f.regularEntry(path)
	return f.readEntry(c, path, max)
}

func (f *Files) readEntry(c *cachedFile, path string, max int64) ([]byte, error) {
	c.readOnce.Do(func() { c.data, c.err = readRegular(path, max) })
	f.mu.Lock()
	data, err, taken := c.data, c.err, c.taken
	f.mu.Unlock()
	if taken {
		return readRegular(path, max)
	}
	if err == nil && int64(len(data)) > max {
		return nil, &TooLargeError{Size: int64(len(data)), Max: max}
	}
	return data, err
}

// TakeRegular is ReadRegular for a reader that keeps what it reads: the
// cache lets go of the contents (a later read goes to the disk again), so a
// tree read once, file by file, is not held twice in memory.
func (f *Files) TakeRegular(path string, max int64) ([]byte, error) {
	if f == nil {
		return readRegular(path, max)
	}
	c, _ := f.regularEntry(path)
	data, err := f.readEntry(c, path, max)
	f.mu.Lock()
	c.data, c.taken = nil, true
	f.mu.Unlock()
	return data, err
}

// regularEntry is path's ReadRegular entry, and whether it is new; its
// readOnce guards the read, so a reader arriving while a prefetch has the
// file in flight waits for it rather than reading it twice.
func (f *Files) regularEntry(path string) (*cachedFile, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.regular[path]
	if !ok {
		c = &cachedFile{}
		f.regular[path] = c
	}
	return c, !ok
}

// Prefetch starts reading paths (as ReadRegular would, each bounded by max)
// on every core in the background, stopping once budget bytes are read, and
// returns at once. A hook that globs a tree and then reads it file by file
// finds most files already read. Only for a read-only evaluation's cache.
func (f *Files) Prefetch(paths []string, max, budget int64) {
	if f == nil || len(paths) < 2 {
		return
	}
	var next, spent atomic.Int64
	for range runtime.GOMAXPROCS(0) {
		go func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(len(paths)) || spent.Load() >= budget {
					return
				}
				// A file someone already asked for is theirs to read.
				if c, fresh := f.regularEntry(paths[i]); fresh {
					data, _ := f.readEntry(c, paths[i], max)
					spent.Add(int64(len(data)))
				}
			}
		}()
	}
}

func (f *Files) get(path string) *cachedFile {
	if f == nil {
		data, err := os.ReadFile(path)
		return &cachedFile{data: data, err: err}
	}
	// Read outside the lock, once per path: a prefetch on another core
	// must not wait behind a read of an unrelated file.
	f.mu.Lock()
	c, ok := f.m[path]
	if !ok {
		c = &cachedFile{}
		f.m[path] = c
	}
	f.mu.Unlock()
	c.readOnce.Do(func() { c.data, c.err = os.ReadFile(path) })
	return c
}

// ReadFile returns path's contents. Callers must not modify the slice.
func (f *Files) ReadFile(path string) ([]byte, error) {
	c := f.get(path)
	return c.data, c.err
}

// ErrNotText is why a binary or mis-encoded artifact cannot be read.
var ErrNotText = errors.New("not valid UTF-8 text")

// Text reads path as a text artifact the way the reference implementation
// does: UTF-8 only, with \r\n and a lone \r read as \n.
func (f *Files) Text(path string) (string, error) {
	c := f.get(path)
	c.textOnce.Do(func() {
		switch {
		case c.err != nil:
			c.textErr = c.err
		case !utf8.Valid(c.data):
			c.textErr = ErrNotText
		default:
			c.text = string(c.data)
			if strings.Contains(c.text, "\r") {
				c.text = strings.ReplaceAll(c.text, "\r\n", "\n")
				c.text = strings.ReplaceAll(c.text, "\r", "\n")
			}
		}
	})
	return c.text, c.textErr
}

// FrontMatter returns path's front matter and body (see SplitFrontMatter),
// parsed once. Callers must not modify the map.
func (f *Files) FrontMatter(path string) (map[string]any, string, error) {
	c := f.get(path)
	text, err := f.Text(path)
	if err != nil {
		return map[string]any{}, "", err
	}
	if f == nil {
		fm, body := SplitFrontMatter(text)
		return fm, body, nil
	}
	c.fmOnce.Do(func() { c.fm, c.body = SplitFrontMatter(text) })
	return c.fm, c.body, nil
}
