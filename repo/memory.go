package repo

import (
	"errors"
	"io/fs"
	"maps"
	"path"
	"slices"
	"time"
)

// ErrReadOnly is a write to a checkout held in memory.
var ErrReadOnly = errors.New("an in-memory repository is read-only")

// memTree is the content of a checkout held in memory: regular files by
// cleaned path, and the directories their paths imply.
type memTree struct {
	files map[string][]byte
	dirs  map[string][]string // directory -> sorted entry names
}

// InMemory is a checkout whose files are the given ones, by
// repository-relative path, the directories dirs (which may hold nothing)
// and those the paths imply, and nothing else: a rule's test builds the
// repository it judges without touching the disk. name is what Root
// answers and messages show. Every read goes through the same Clean as an
// on-disk checkout's, so a test cannot reach what a real checkout could
// not; writes and locks fail with ErrReadOnly. The contents are kept, not
// copied: the caller must not change them.
func InMemory(name string, files map[string][]byte, dirs ...string) (*Checkout, error) {
	t := &memTree{files: make(map[string][]byte, len(files)), dirs: map[string][]string{".": nil}}
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		p, err := Clean(rel)
		if err != nil {
			return nil, err
		}
		if p == "." {
			return nil, &fs.PathError{Op: "create", Path: rel, Err: ErrNotRegular}
		}
		if _, dup := t.files[p]; dup {
			return nil, &fs.PathError{Op: "create", Path: rel, Err: fs.ErrExist}
		}
		t.files[p] = files[rel]
	}
	implied := slices.Collect(maps.Keys(t.files))
	for _, d := range dirs {
		p, err := Clean(d)
		if err != nil {
			return nil, err
		}
		if _, isFile := t.files[p]; isFile {
			return nil, &fs.PathError{Op: "mkdir", Path: d, Err: fs.ErrExist}
		}
		if _, ok := t.dirs[p]; !ok && p != "." {
			t.dirs[p] = nil
			implied = append(implied, p)
		}
	}
	listed := map[string]bool{}
	for _, p := range implied {
		for child := p; child != "."; child = path.Dir(child) {
			dir := path.Dir(child)
			if _, isFile := t.files[dir]; isFile {
				return nil, &fs.PathError{Op: "create", Path: p, Err: ErrNotDir}
			}
			if !listed[child] {
				listed[child] = true
				t.dirs[dir] = append(t.dirs[dir], path.Base(child))
			}
		}
	}
	for _, names := range t.dirs {
		slices.Sort(names)
	}
	return &Checkout{root: name, mem: t}, nil
}

func (t *memTree) read(rel string, limit int64, alloc func(int64) []byte) ([]byte, error) {
	data, ok := t.files[rel]
	switch {
	case ok:
	case t.isDir(rel):
		return nil, ErrNotRegular
	default:
		return nil, t.missing(rel)
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Size: int64(len(data)), Limit: limit}
	}
	var buf []byte
	if alloc != nil {
		buf = alloc(int64(len(data)))[:0]
	}
	buf = append(buf, data...)
	return buf[:len(buf):len(buf)], nil
}

func (t *memTree) isDir(rel string) bool {
	_, ok := t.dirs[rel]
	return ok
}

// missing is the error for a path that names nothing: through a file, a
// path names nothing either, as on disk.
func (t *memTree) missing(rel string) error {
	for dir := path.Dir(rel); dir != "."; dir = path.Dir(dir) {
		if _, ok := t.files[dir]; ok {
			return ErrNotDir
		}
	}
	return fs.ErrNotExist
}

func (t *memTree) stat(rel string) (fs.FileInfo, error) {
	if data, ok := t.files[rel]; ok {
		return memInfo{name: path.Base(rel), size: int64(len(data)), mode: 0o644}, nil
	}
	if t.isDir(rel) {
		return memInfo{name: path.Base(rel), mode: fs.ModeDir | 0o755}, nil
	}
	return nil, t.missing(rel)
}

func (t *memTree) list(rel string, visit func(string, Kind)) (int, error) {
	names, ok := t.dirs[rel]
	if !ok {
		if _, isFile := t.files[rel]; isFile {
			return 0, ErrNotDir
		}
		return 0, t.missing(rel)
	}
	for _, name := range names {
		kind := KindRegular
		if t.isDir(path.Join(rel, name)) {
			kind = KindDir
		}
		visit(name, kind)
	}
	return len(names), nil
}

// memInfo describes a file or directory of a memTree.
type memInfo struct {
	name string
	size int64
	mode fs.FileMode
}

func (m memInfo) Name() string       { return m.name }
func (m memInfo) Size() int64        { return m.size }
func (m memInfo) Mode() fs.FileMode  { return m.mode }
func (m memInfo) ModTime() time.Time { return time.Time{} }
func (m memInfo) IsDir() bool        { return m.mode.IsDir() }
func (m memInfo) Sys() any           { return nil }
