package starlark

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unsafe"

	sl "go.starlark.net/starlark"

	"github.com/the-loop/the-loop/graph"
)

// confined resolves repo-relative, slash-separated paths inside one root
// directory: an absolute path, a path whose .. leaves the root and a path
// whose symbolic links resolve outside it are refused. It never follows a
// link to find out whether something outside exists.
type confined struct {
	root     string // as given: what paths are joined to
	rootReal string // with symbolic links resolved
	what     string // "the repository", "the hook path directory /x"
	beneath  beneath
}

func newConfined(root, what string) (*confined, error) {
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("%s root %q is not an absolute path", what, root)
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("%s root: %w", what, err)
	}
	return &confined{root: filepath.Clean(root), rootReal: real, what: what}, nil
}

// clean checks rel lexically and returns it cleaned, still slash-separated.
func (c *confined) clean(rel string) (string, error) {
	switch {
	case rel == "":
		return "", errors.New("an empty path")
	case strings.HasPrefix(rel, "/") || filepath.IsAbs(rel) || filepath.VolumeName(rel) != "":
		return "", fmt.Errorf("%q is absolute; paths are relative to %s", rel, c.what)
	case strings.ContainsRune(rel, 0):
		return "", fmt.Errorf("%q contains a NUL byte", rel)
	}
	p := path.Clean(rel)
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", fmt.Errorf("%q leaves %s", rel, c.what)
	}
	return p, nil
}

// resolve returns the joined path of rel and whether it exists, after
// checking that the deepest existing part of it resolves inside the root.
func (c *confined) resolve(rel string) (joined string, exists bool, err error) {
	p, err := c.clean(rel)
	if err != nil {
		return "", false, err
	}
	joined = filepath.Join(c.root, filepath.FromSlash(p))
	probe := joined
	for {
		real, err := filepath.EvalSymlinks(probe)
		if err == nil {
			if !within(c.rootReal, real) {
				return "", false, fmt.Errorf("%q resolves outside %s through a symbolic link", rel, c.what)
			}
			return joined, probe == joined, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", false, fmt.Errorf("%s: %w", rel, err)
		}
		if probe == c.root || len(probe) <= len(c.root) {
			return "", false, fmt.Errorf("%s: %w", rel, err)
		}
		probe = filepath.Dir(probe)
	}
}

// resolveCached is resolve for a caller that resolves many paths: verified
// remembers directories already known to resolve inside the root, so a
// path that is not itself a symbolic link, in such a directory, takes one
// lstat. It returns that lstat's FileInfo when it has it.
func (c *confined) resolveCached(rel string, verified dirsInside) (joined string, fi fs.FileInfo, exists bool, err error) {
	p, err := c.clean(rel)
	if err != nil {
		return "", nil, false, err
	}
	joined = c.abs(p)
	if joined != c.root && verified.check(c, filepath.Dir(joined)) {
		fi, err := os.Lstat(joined)
		switch {
		case err == nil && fi.Mode()&fs.ModeSymlink == 0:
			return joined, fi, true, nil
		case errors.Is(err, fs.ErrNotExist):
			return joined, nil, false, nil
		}
	}
	joined, exists, err = c.resolve(rel)
	return joined, nil, exists, err
}

// dirsInside remembers, for one call, the directories known to resolve
// inside a confined root.
type dirsInside map[string]bool

// check reports whether the host directory dir resolves inside c's root,
// remembering a yes.
func (d dirsInside) check(c *confined, dir string) bool {
	if d[dir] {
		return true
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil || !within(c.rootReal, real) {
		return false
	}
	d[dir] = true
	return true
}

// within reports whether p is root or inside it; both are cleaned absolute
// paths.
func within(root, p string) bool {
	if p == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(p, root)
}

// repoValue is ctx.repo: read, exists and glob over the repository, for one
// hook call.
type repoValue struct {
	c     *confined
	files *graph.Files
	st    *callState
	attrs map[string]*sl.Builtin
	// verified caches directories known to resolve inside the repository,
	// for this call.
	verified dirsInside
	// ahead reads this call's globs ahead; nil when the evaluation may
	// write.
	ahead *readAhead
}

var _ sl.HasAttrs = (*repoValue)(nil)

func newRepoValue(c *confined, files *graph.Files, st *callState) *repoValue {
	r := &repoValue{c: c, files: files, st: st, verified: dirsInside{}}
	if files != nil {
		// Made now, not on the first glob: stop may be called from another
		// goroutine while an abandoned call still runs.
		r.ahead = newReadAhead(c, st.limits.ReadBytes, st.limits.ReadTotal)
	}
	r.attrs = map[string]*sl.Builtin{
		"read":   sl.NewBuiltin("repo.read", r.read),
		"exists": sl.NewBuiltin("repo.exists", r.exists),
		"glob":   sl.NewBuiltin("repo.glob", r.glob),
	}
	return r
}

func (r *repoValue) String() string        { return "<repo>" }
func (r *repoValue) Type() string          { return "repo" }
func (r *repoValue) Freeze()               {}
func (r *repoValue) Truth() sl.Bool        { return sl.True }
func (r *repoValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: repo") }
func (r *repoValue) AttrNames() []string   { return []string{"exists", "glob", "read"} }
func (r *repoValue) Attr(name string) (sl.Value, error) {
	if b, ok := r.attrs[name]; ok {
		return b, nil
	}
	return nil, nil
}

// pathArg is the one string argument of read, exists and glob. It is
// UnpackPositionalArgs without the allocation on the common path: a hook
// over a source tree calls read once per file.
func pathArg(b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (string, error) {
	if len(args) == 1 && len(kwargs) == 0 {
		if s, ok := args[0].(sl.String); ok {
			return string(s), nil
		}
	}
	var s string
	err := sl.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &s)
	return s, err
}

// read(path) returns the file's contents as a string.
func (r *repoValue) read(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	rel, err := pathArg(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	lim := r.st.limits
	if data, ok, err := r.readFast(rel); ok {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name(), err)
		}
		return r.account(thread, rel, data)
	}
	joined, fi, exists, err := r.c.resolveCached(rel, r.verified)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	if !exists {
		return nil, fmt.Errorf("%s: %s does not exist", b.Name(), rel)
	}
	if fi == nil {
		if fi, err = os.Stat(joined); err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name(), err)
		}
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %s is not a regular file", b.Name(), rel)
	}
	if fi.Size() > lim.ReadBytes {
		return nil, fmt.Errorf("%s: %s is %d bytes; one read is limited to %d", b.Name(), rel, fi.Size(), lim.ReadBytes)
	}
	if r.st.readTotal+fi.Size() > lim.ReadTotal {
		return nil, fmt.Errorf("%s: reading %s would take this call past its read limit of %d bytes", b.Name(), rel, lim.ReadTotal)
	}
	var data []byte
	if r.files != nil {
		data, err = r.files.ReadFile(joined)
	} else {
		data, err = readAtMost(joined, lim.ReadBytes, fi.Size())
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	if int64(len(data)) > lim.ReadBytes {
		return nil, fmt.Errorf("%s: %s is over %d bytes; one read is limited to %d", b.Name(), rel, lim.ReadBytes, lim.ReadBytes)
	}
	return r.account(thread, rel, data)
}

// readFast reads rel when its directory is already known to lie inside the
// repository: the file is opened without following a final symbolic link,
// so no further resolution is needed. ok is false when the fast path does
// not apply (an unverified directory, a final symbolic link, the root
// itself) and the caller must resolve the path in full.
func (r *repoValue) readFast(rel string) (data []byte, ok bool, err error) {
	lim := r.st.limits
	limit := min(lim.ReadBytes, lim.ReadTotal-r.st.readTotal)
	// A path a glob of this call listed, exactly as listed, is a regular
	// file the walk reached without following a link.
	if data, err, checked, ahead := r.ahead.take(rel, limit); ahead {
		if !checked && !r.dirInside(rel) {
			return nil, false, nil
		}
		return r.readResult(rel, data, err)
	}
	p, err := r.c.clean(rel)
	if err != nil || p == "." {
		return nil, false, nil
	}
	checks := r.c.checksPaths()
	if !checks && !r.dirInside(p) {
		return nil, false, nil
	}
	data, err, checked := r.c.readFile(p, limit, nil)
	if !checked && checks && !r.dirInside(p) {
		return nil, false, nil // the kernel refused openat2 after all
	}
	return r.readResult(rel, data, err)
}

// dirInside reports whether the directory holding the cleaned repository
// path rel resolves inside the repository.
func (r *repoValue) dirInside(rel string) bool {
	return r.verified.check(r.c, filepath.Dir(r.c.abs(rel)))
}

// readResult is readFast's answer for a fast read's outcome: a final
// symbolic link sends the caller the slow way.
func (r *repoValue) readResult(rel string, data []byte, err error) ([]byte, bool, error) {
	switch {
	case err == nil:
		return data, true, nil
	case errors.Is(err, errSymlink):
		return nil, false, nil
	}
	return nil, true, r.readError(rel, err)
}

// readError words a failed read of rel for the hook's author.
func (r *repoValue) readError(rel string, err error) error {
	lim := r.st.limits
	var tooLarge *tooLargeError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist", rel)
	case errors.Is(err, errNotRegular):
		return fmt.Errorf("%s is not a regular file", rel)
	case errors.As(err, &tooLarge) && tooLarge.Size > lim.ReadBytes:
		return fmt.Errorf("%s is %d bytes; one read is limited to %d", rel, tooLarge.Size, lim.ReadBytes)
	case errors.As(err, &tooLarge):
		return fmt.Errorf("reading %s would take this call past its read limit of %d bytes", rel, lim.ReadTotal)
	}
	return err
}

// account charges a read to the call: its bytes against the read total and
// its size against the step budget.
func (r *repoValue) account(thread *sl.Thread, rel string, data []byte) (sl.Value, error) {
	r.st.readTotal += int64(len(data))
	if err := r.st.chargeFor(thread, uint64(len(data))/1024, func() string { return "reading " + rel }); err != nil {
		return nil, err
	}
	return sl.String(bytesToString(data)), nil
}

// bytesToString views data as a string without copying it. data must never
// change afterwards: it is a buffer made for this read (possibly a piece
// of a read-ahead arena block, which is never reused), or a graph.Files
// entry, which no caller may modify.
func bytesToString(data []byte) string {
	if len(data) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(data), len(data))
}

// readAtMost reads at most limit+1 bytes of the named file, expecting
// about hint (the size a stat reported; below 0 when unknown): a file that
// grew past limit since its size was checked comes back longer than limit.
func readAtMost(name string, limit, hint int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if hint < 0 {
		fi, err := f.Stat()
		if err != nil {
			return nil, err
		}
		hint = fi.Size()
	}
	buf := make([]byte, min(max(hint, 0), limit)+1)
	n := 0
	for n < len(buf) {
		m, err := f.Read(buf[n:])
		n += m
		if err == io.EOF {
			return buf[:n], nil
		}
		if err != nil {
			return nil, err
		}
	}
	rest, err := io.ReadAll(io.LimitReader(f, limit+1-int64(n)))
	return append(buf[:n], rest...), err
}

// exists(path) reports whether path names a file or directory.
func (r *repoValue) exists(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	rel, err := pathArg(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	_, _, exists, err := r.c.resolveCached(rel, r.verified)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return sl.Bool(exists), nil
}

// glob(pattern) lists the regular files matching pattern, sorted.
func (r *repoValue) glob(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	pattern, err := pathArg(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	what := "glob " + pattern
	if err := r.st.charge(thread, globCost, what); err != nil {
		return nil, err
	}
	found, done := r.readAheadOf()
	walk := globWalk{
		budget:   r.st.limits.Steps - min(thread.ExecutionSteps(), r.st.limits.Steps),
		stopped:  func() bool { return r.st.trippedLimit() != limitNone },
		found:    found,
		unsorted: done != nil,
	}
	paths, seen, err := r.c.glob(pattern, walk)
	// Every entry visited is a step, whether or not the walk finished.
	if err := r.st.charge(thread, seen, what); err != nil {
		return nil, err
	}
	switch {
	case errors.Is(err, errGlobStopped):
		return nil, fmt.Errorf("%w: %s", errLimit, r.st.exceeded())
	case err != nil:
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	if done != nil {
		paths = done() // the same paths, sorted
	}
	if err := r.st.allow(uint64(len(paths))*(sizePiece+64), what); err != nil {
		return nil, err
	}
	elems := make([]sl.Value, len(paths))
	for i, p := range paths {
		elems[i] = sl.String(p)
	}
	// A fresh list each call, the hook's to extend or sort.
	return sl.NewList(elems), nil
}

// readAheadOf returns where a glob hands its matches as it finds them and
// done, which returns them sorted once the walk is over, for the
// read-ahead (see readAhead) of a read-only evaluation. Both are nil when
// the evaluation may write.
func (r *repoValue) readAheadOf() (found func([]string), done func() []string) {
	if r.ahead == nil {
		return nil, nil
	}
	g := &aheadGlob{}
	return g.add, func() []string { return r.ahead.done(g) }
}

// stop ends what the call started in the background.
func (r *repoValue) stop() { r.ahead.stop() }
