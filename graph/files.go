package graph

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/the-loop/the-loop/repo"
)

// MaxArtifactBytes bounds one read of a work item's file: a spec document
// is kilobytes, and a checkout holding a sparse file of gigabytes where one
// should be is refused by its size.
const MaxArtifactBytes = 4 << 20

// MaxEvaluationBytes bounds what one read-only evaluation keeps of the
// files it reads: items are evaluated several at a time, and each keeps
// its files until it is done.
const MaxEvaluationBytes = 32 << 20

// Files is how hooks read a work item's files: through the checkout's
// confinement (see package repo), by repository-relative path, each read
// bounded by MaxArtifactBytes.
//
// For a read-only evaluation it is also a read-through cache: check
// evaluates every node of an item against the same artifacts, and several
// hooks read the same file (execution-log.md gates half the loop), so each
// file is read and its front matter parsed once per item, and every hook
// of one evaluation sees the same artifacts. It lists each directory it
// looks into once (repo.Folder), and answers a name the listing does not
// hold, or a file's or a directory's kind, from it. Keep and Recall hold
// what hooks work out from the files for the rest of the evaluation, and
// one lent an Arena reads into it (Lend). A mutating chain reads afresh
// (Direct), because a hook may write an artifact a later hook must see.
//
// A nil *Files reads nothing: every read fails, so a hook handed no
// checkout fails closed. Files is safe for concurrent use.
type Files struct {
	co      *repo.Checkout
	mu      sync.Mutex
	m       map[string]*cachedFile // nil: no cache
	folders map[string]*folder     // by directory; with m
	items   map[string]checkedItem // by id; with m
	kept    atomic.Int64           // bytes the cache holds
	recall  map[recallKey]any      // see Keep; with m
	arena   *Arena                 // what reads are made into; nil: fresh memory
}

// recallKey is what a value is kept under: a scope (a directory, say) and
// a key in it, so that a caller need not build one string of both.
type recallKey struct{ scope, key string }

// checkedItem is what Checkout.Item said of an id.
type checkedItem struct {
	it  repo.Item
	err error
}

// folder is one directory's listing, made once per evaluation: a work
// item's gates look up the same few names in its folder at every node,
// and most of the names a loop can produce are not there.
type folder struct {
	once sync.Once
	f    *repo.Folder // nil: the names are looked up one by one
}

type cachedFile struct {
	statOnce sync.Once
	info     fs.FileInfo
	statErr  error

	readOnce sync.Once
	data     []byte
	err      error

	textOnce sync.Once
	text     string
	textErr  error

	fmOnce  sync.Once
	fm      map[string]any
	body    string
	fmLines FrontMatterLines
}

// NewFiles returns a caching reader of co, for one read-only evaluation.
func NewFiles(co *repo.Checkout) *Files {
	return &Files{co: co, m: map[string]*cachedFile{}, folders: map[string]*folder{},
		items: map[string]checkedItem{}, recall: map[recallKey]any{}}
}

// DirectFiles returns a reader of co that caches nothing, for a chain that
// may write.
func DirectFiles(co *repo.Checkout) *Files { return &Files{co: co} }

// ErrNoCheckout is what a nil *Files answers every read with.
var ErrNoCheckout = errors.New("no checkout to read from")

// Cached reports whether reads are remembered: a read-only evaluation.
func (f *Files) Cached() bool { return f != nil && f.m != nil }

func (f *Files) get(rel string) *cachedFile {
	if f == nil || f.co == nil {
		return &cachedFile{err: ErrNoCheckout}
	}
	if f.m == nil {
		data, err := f.co.ReadFile(rel, MaxArtifactBytes)
		return &cachedFile{data: data, err: err}
	}
	c := f.entry(rel)
	c.readOnce.Do(func() {
		if absent := f.absent("read", rel); absent != nil {
			c.err = absent
			return
		}
		var alloc func(int64) []byte
		if f.arena != nil {
			alloc = f.arena.alloc
		}
		c.data, c.err = f.co.ReadFileTo(rel, MaxArtifactBytes, alloc)
		if c.err == nil && f.kept.Add(int64(len(c.data))) > MaxEvaluationBytes {
			c.data, c.err = nil, fmt.Errorf("read %s: %w", rel, ErrTooMuchRead)
		}
	})
	return c
}

// entry is rel's cache entry, made on first use. Reads and stats happen
// outside the lock, once per path: hooks reading on other cores must not
// wait behind a read of an unrelated file.
func (f *Files) entry(rel string) *cachedFile {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.m[rel]
	if !ok {
		c = &cachedFile{}
		f.m[rel] = c
	}
	return c
}

// lookup is what the listing of rel's directory says of rel; known is
// false where there is no listing to ask (the evaluation caches nothing,
// or the directory does not list).
func (f *Files) lookup(rel string) (fo *repo.Folder, kind repo.Kind, present, known bool) {
	if f == nil || f.co == nil || f.folders == nil {
		return nil, 0, false, false
	}
	dir, name, ok := repo.SplitClean(rel)
	if !ok {
		return nil, 0, false, false
	}
	if fo = f.folder(dir); fo == nil || !fo.Answers(name) {
		return nil, 0, false, false
	}
	kind, present = fo.Kind(name)
	return fo, kind, present, true
}

// folder is the listing of dir, made on first use; nil where there is
// none to ask.
func (f *Files) folder(dir string) *repo.Folder {
	f.mu.Lock()
	d, ok := f.folders[dir]
	if !ok {
		d = &folder{}
		f.folders[dir] = d
	}
	f.mu.Unlock()
	d.once.Do(func() { d.f = f.co.Folder(dir) })
	return d.f
}

// absent is the error op on rel fails with when its directory's listing
// shows it names nothing, and nil when it may name something.
func (f *Files) absent(op, rel string) error {
	if fo, _, present, known := f.lookup(rel); known && !present {
		return fo.Absent(op, rel)
	}
	return nil
}

// Kind is what rel names inside the checkout, a link inside followed: a
// regular file, a directory, or something else. In a read-only
// evaluation it is read off its directory's listing where that can tell,
// which spares a call per artifact per item. A path that names nothing,
// or leads outside, is an error, as Stat's.
func (f *Files) Kind(rel string) (repo.Kind, error) {
	if _, kind, present, known := f.lookup(rel); known && present && kind != repo.KindOther {
		return kind, nil
	}
	fi, err := f.Stat(rel)
	if err != nil {
		return repo.KindOther, err
	}
	return repo.KindOf(fi.Mode()), nil
}

// Lend has a read-only evaluation read the files it has yet to read into
// a, and returns f. The caller must Detach the report the evaluation makes
// before it resets a, and must not lend a to an evaluation whose hooks may
// go on reading once it has returned (a repository hook past its
// deadline).
func (f *Files) Lend(a *Arena) *Files {
	if f.Cached() {
		f.arena = a
	}
	return f
}

// Recall returns what Keep kept under scope and key in this read-only
// evaluation; ok is false when nothing was, and always in one that caches
// nothing.
func (f *Files) Recall(scope, key string) (v any, ok bool) {
	if f == nil || f.recall == nil {
		return nil, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok = f.recall[recallKey{scope, key}]
	return v, ok
}

// Keep keeps v under scope and key for the rest of a read-only evaluation,
// for a fact the hooks of every node would otherwise work out again from
// the same files (what a produces entry resolves to, say), and returns
// what is kept: v, or what a hook on another core kept first. v must
// depend on nothing the evaluation could see change, and must not be
// modified once kept. An evaluation that caches nothing keeps nothing.
func (f *Files) Keep(scope, key string, v any) any {
	if f == nil || f.recall == nil {
		return v
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	k := recallKey{scope, key}
	if first, ok := f.recall[k]; ok {
		return first
	}
	f.recall[k] = v
	return v
}

// Remembered is what derive makes, kept under scope and key for the rest
// of a read-only evaluation (Keep): derive runs once per evaluation, or
// on every call in one that caches nothing. Every caller of a scope and
// key must derive the same type.
func Remembered[T any](f *Files, scope, key string, derive func() T) T {
	if kept, ok := f.Recall(scope, key); ok {
		return kept.(T)
	}
	return f.Keep(scope, key, derive()).(T)
}

// Item is the checkout's Item(id), checked once per evaluation: the
// caller that chose the item's loop has checked it already.
func (f *Files) Item(id string) (repo.Item, error) {
	switch {
	case f == nil || f.co == nil:
		return repo.Item{ID: id}, ErrNoCheckout
	case f.items == nil:
		return f.co.Item(id)
	}
	f.mu.Lock()
	c, ok := f.items[id]
	f.mu.Unlock()
	if !ok {
		if repo.ValidID(id) && f.folder(f.co.ItemDir(id)) != nil {
			// Its folder listed, so it is a directory inside the
			// checkout: what Item checks, asked once for both.
			c.it, c.err = repo.Item{ID: id, Dir: f.co.ItemDir(id)}, nil
		} else {
			c.it, c.err = f.co.Item(id)
		}
		f.mu.Lock()
		f.items[id] = c
		f.mu.Unlock()
	}
	return c.it, c.err
}

// ErrTooMuchRead is a read that would take one evaluation's files past
// MaxEvaluationBytes. It is made at package initialisation, in every
// process, and without fmt, whose Errorf cost more there than the rest of
// the package's initialisation.
var ErrTooMuchRead = errors.New("the work item's files come to more than " + strconv.Itoa(MaxEvaluationBytes) + " bytes in all")

// ReadFile returns the contents of the repository path rel. Callers must
// not modify the slice.
func (f *Files) ReadFile(rel string) ([]byte, error) {
	c := f.get(rel)
	return c.data, c.err
}

// Stat describes rel inside the checkout (links inside followed). A
// read-only evaluation stats each path once: every node's gate resolves
// its artifacts, and most nodes name the same few files.
func (f *Files) Stat(rel string) (fs.FileInfo, error) {
	if f == nil || f.co == nil {
		return nil, ErrNoCheckout
	}
	if f.m == nil {
		return f.co.Stat(rel)
	}
	c := f.entry(rel)
	c.statOnce.Do(func() {
		if c.statErr = f.absent("stat", rel); c.statErr == nil {
			c.info, c.statErr = f.co.Stat(rel)
		}
	})
	return c.info, c.statErr
}

// ReadDir lists the directory rel inside the checkout, sorted. A
// read-only evaluation answers from the folder's listing, which the names
// in it are then looked up in as well, where the folder is one a listing
// stands in for.
func (f *Files) ReadDir(rel string) ([]repo.Entry, error) {
	if f == nil || f.co == nil {
		return nil, ErrNoCheckout
	}
	if err := f.absent("list", rel); err != nil {
		return nil, err
	}
	if f.m != nil {
		if dir, err := repo.Clean(rel); err == nil {
			if fo := f.folder(dir); fo != nil {
				return fo.Entries(), nil
			}
		}
	}
	return f.co.ReadDir(rel)
}

// IsRegular reports whether rel is a regular file inside the checkout.
func (f *Files) IsRegular(rel string) bool {
	fi, err := f.Stat(rel)
	return err == nil && fi.Mode().IsRegular()
}

// ErrNotText is why a binary or mis-encoded artifact cannot be read.
var ErrNotText = errors.New("not valid UTF-8 text")

// Text reads rel as a text artifact the way the reference implementation
// does: UTF-8 only, with \r\n and a lone \r read as \n.
func (f *Files) Text(rel string) (string, error) { return f.get(rel).asText() }

func (c *cachedFile) asText() (string, error) {
	c.textOnce.Do(func() {
		switch {
		case c.err != nil:
			c.textErr = c.err
		case !utf8.Valid(c.data):
			c.textErr = ErrNotText
		default:
			// A view, not a copy: the bytes are never changed.
			c.text = unsafe.String(unsafe.SliceData(c.data), len(c.data))
			if strings.Contains(c.text, "\r") {
				c.text = strings.ReplaceAll(c.text, "\r\n", "\n")
				c.text = strings.ReplaceAll(c.text, "\r", "\n")
			}
		}
	})
	return c.text, c.textErr
}

// FrontMatter returns rel's front matter and body (see SplitFrontMatter),
// parsed once. Callers must not modify the map.
func (f *Files) FrontMatter(rel string) (map[string]any, string, error) {
	c, err := f.frontMatter(rel)
	if err != nil {
		return map[string]any{}, "", err
	}
	return c.fm, c.body, nil
}

// FrontMatterLines is FrontMatter and the lines the front matter stands on
// (see SplitFrontMatterLines), from the same read and parse. Callers must
// not modify the maps.
func (f *Files) FrontMatterLines(rel string) (map[string]any, string, FrontMatterLines, error) {
	c, err := f.frontMatter(rel)
	if err != nil {
		return map[string]any{}, "", FrontMatterLines{}, err
	}
	return c.fm, c.body, c.fmLines, nil
}

func (f *Files) frontMatter(rel string) (*cachedFile, error) {
	c := f.get(rel)
	text, err := c.asText()
	if err != nil {
		return nil, err
	}
	c.fmOnce.Do(func() { c.fm, c.body, c.fmLines = SplitFrontMatterLines(text) })
	return c, nil
}
