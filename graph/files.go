package graph

import (
	"errors"
	"os"
	"strings"
	"sync"
	"unicode/utf8"
)

// Files is a read-through cache of the files one evaluation reads. check
// evaluates every node of an item against the same artifacts, and several
// hooks read the same file (execution-log.md gates half the loop), so each
// file is read and its front matter parsed once per item. It also gives
// every shipped hook of one evaluation the same view of its artifacts.
//
// A nil *Files reads straight from disk. The runtime only uses a cache for
// read-only evaluations: a mutating chain may write an artifact that a later
// hook must see. Files is safe for concurrent use.
type Files struct {
	mu sync.Mutex
	m  map[string]*cachedFile
}

type cachedFile struct {
	readOnce sync.Once
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
func NewFiles() *Files { return &Files{m: map[string]*cachedFile{}} }

func (f *Files) get(path string) *cachedFile {
	if f == nil {
		data, err := os.ReadFile(path)
		return &cachedFile{data: data, err: err}
	}
	// Read outside the lock, once per path: hooks reading on other cores
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
func (f *Files) Text(path string) (string, error) { return f.get(path).asText() }

func (c *cachedFile) asText() (string, error) {
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
	text, err := c.asText()
	if err != nil {
		return map[string]any{}, "", err
	}
	c.fmOnce.Do(func() { c.fm, c.body = SplitFrontMatter(text) })
	return c.fm, c.body, nil
}
