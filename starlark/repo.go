package starlark

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"unsafe"

	sl "go.starlark.net/starlark"

	"github.com/the-loop/the-loop/repo"
)

// tree is a directory the host reads .star files and hooks read files
// from: the repository, a directory on the operator's hook path, or the
// rules of a git revision (Options.Rules). Every access goes through a
// repo.Checkout or a repo.Revision, which keeps it inside; what names the
// tree in the messages a hook's author reads.
type tree struct {
	// co serves ctx.repo; nil for a tree of rules only.
	co *repo.Checkout
	// src serves the .star files: co itself, or a revision.
	src  Sources
	what string // "the repository", "the hook path directory /x"
}

// Sources is where Load reads path modules and the files they load(): a
// *repo.Checkout, or a *repo.Revision when the rules are read from a git
// revision rather than from the checkout under review. Paths are cleaned,
// slash-separated and relative to its root.
type Sources interface {
	Stat(rel string) (fs.FileInfo, error)
	ReadFile(rel string, limit int64) ([]byte, error)
	// Abs is how a message names the file rel.
	Abs(rel string) string
}

// openTree opens the directory at root, which must be absolute.
func openTree(root, what string) (*tree, error) {
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("%s root %q is not an absolute path", what, root)
	}
	co, err := repo.Open(root)
	if err != nil {
		return nil, fmt.Errorf("%s root: %w", what, err)
	}
	return &tree{co: co, src: co, what: what}, nil
}

// reader returns a reader of the tree's files for one goroutine (see
// repo.Reader); nil for a tree of rules only.
func (t *tree) reader() *repo.Reader {
	if t == nil || t.co == nil {
		return nil
	}
	return t.co.Reader()
}

// readFile reads the file at rel through rd, or the checkout if rd is nil.
func (t *tree) readFile(rd *repo.Reader, rel string, limit int64, alloc func(int64) []byte) ([]byte, error) {
	if rd != nil {
		return rd.ReadFileTo(rel, limit, alloc)
	}
	return t.co.ReadFileTo(rel, limit, alloc)
}

// clean checks rel lexically and returns it cleaned, still slash-separated.
func (t *tree) clean(rel string) (string, error) {
	p, err := repo.Clean(rel)
	switch {
	case err == nil:
		return p, nil
	case rel == "":
		return "", errors.New("an empty path")
	case strings.ContainsRune(rel, 0):
		return "", fmt.Errorf("%q contains a NUL byte", rel)
	case strings.HasPrefix(rel, "/") || filepath.IsAbs(rel) || filepath.VolumeName(rel) != "":
		return "", fmt.Errorf("%q is absolute; paths are relative to %s", rel, t.what)
	}
	return "", fmt.Errorf("%q leaves %s", rel, t.what)
}

// problem words a failed access to the cleaned path rel for a hook's
// author, by repository path.
func (t *tree) problem(rel string, err error, lim Limits) error {
	var tooLarge *repo.TooLargeError
	switch {
	case errors.Is(err, repo.ErrOutside):
		return fmt.Errorf("%q resolves outside %s through a symbolic link", rel, t.what)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, repo.ErrNotDir):
		return fmt.Errorf("%s does not exist", rel)
	case errors.Is(err, repo.ErrNotRegular):
		return fmt.Errorf("%s is not a regular file", rel)
	case errors.As(err, &tooLarge) && tooLarge.Size > lim.ReadBytes:
		return fmt.Errorf("%s is %d bytes; one read is limited to %d (ctx.repo.size(path) tells a rule so before it reads)", rel, tooLarge.Size, lim.ReadBytes)
	case errors.As(err, &tooLarge):
		return fmt.Errorf("reading %s would take this call past its read limit of %d bytes", rel, lim.ReadTotal)
	}
	return fmt.Errorf("%s: %w", rel, repo.Cause(err))
}

// stat describes the cleaned path rel: its FileInfo, or exists false.
func (t *tree) stat(rel string) (fs.FileInfo, bool, error) {
	fi, err := t.src.Stat(rel)
	switch {
	case err == nil:
		return fi, true, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil
	}
	return nil, false, err
}

// repoValue is ctx.repo: read, exists and glob over the repository, for one
// hook call.
type repoValue struct {
	t  *tree
	st *callState
	// fns are its attributes, looked up by a switch: a rule over a tree
	// names ctx.repo.read and .size once per file.
	fns struct{ read, exists, glob, size *sl.Builtin }
	// ahead reads this call's globs ahead; nil when the evaluation may
	// write, and its files must be read when asked for, not before.
	ahead *readAhead
	// sized is the file size() last took from the read-ahead, kept for
	// the read that follows it: a rule asks a file's size, then reads it.
	// Its rel is "" when there is none.
	sized sizedFile
	// own is the arena the hook's goroutine reads into a file it only
	// searches, or one size() keeps (see searchedFile); the read-ahead's
	// workers share its pool.
	own *arena
	// rd is the hook's goroutine's reader (nil for a tree of rules only),
	// closed by that goroutine when the call returns (closeReader): stop
	// may run while an abandoned call still reads.
	rd *repo.Reader
	// searchRead is read for a call whose result is only searched: what
	// $searched returns in place of read (see searchedFile).
	searchRead *sl.Builtin
	// searched is what searchRead returns, the one file between a read
	// and its search: $in takes it before the hook can read again.
	searched searchedFile
}

type sizedFile struct {
	rel string
	piece
}

// takeSized returns what size() kept for rel, if anything, and forgets
// it; what it kept for another path is given back.
func (r *repoValue) takeSized(rel string) (piece, bool) {
	sized := r.sized
	r.sized = sizedFile{}
	if sized.rel == "" {
		return piece{}, false
	}
	if sized.rel != rel {
		sized.blk.release()
		return piece{}, false
	}
	return sized.piece, true
}

var _ sl.HasAttrs = (*repoValue)(nil)

// repoAttrs are ctx.repo's attribute names, sorted.
var repoAttrs = []string{"exists", "glob", "read", "size"}

func newRepoValue(t *tree, readOnly bool, st *callState) *repoValue {
	pool := &blockPool{}
	r := &repoValue{t: t, st: st, own: newArena(pool)}
	if readOnly {
		// Made now, not on the first glob: stop may be called from another
		// goroutine while an abandoned call still runs.
		r.ahead = newReadAhead(t, st.limits.ReadBytes, st.limits.ReadTotal, pool)
		r.rd = r.ahead.hook
	} else {
		r.rd = t.reader()
	}
	r.fns.read = sl.NewBuiltin("repo.read", r.read)
	r.fns.exists = sl.NewBuiltin("repo.exists", r.exists)
	r.fns.glob = sl.NewBuiltin("repo.glob", r.glob)
	r.fns.size = sl.NewBuiltin("repo.size", r.size)
	r.searchRead = sl.NewBuiltin("repo.read", r.readSearched)
	st.repo = r
	return r
}

func (r *repoValue) String() string        { return "<repo>" }
func (r *repoValue) Type() string          { return "repo" }
func (r *repoValue) Freeze()               {}
func (r *repoValue) Truth() sl.Bool        { return sl.True }
func (r *repoValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: repo") }
func (r *repoValue) AttrNames() []string   { return repoAttrs }
func (r *repoValue) Attr(name string) (sl.Value, error) {
	switch name {
	case "read":
		return r.fns.read, nil
	case "exists":
		return r.fns.exists, nil
	case "glob":
		return r.fns.glob, nil
	case "size":
		return r.fns.size, nil
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
	p, err := r.load(thread, b, args, kwargs, nil)
	if err != nil {
		return nil, err
	}
	// The string holds on to p's block for good: it is never given back.
	return sl.String(bytesToString(p.data)), nil
}

// readSearched is read where the result is only searched: the same read,
// the same limits and errors, into a piece $in gives back once searched.
func (r *repoValue) readSearched(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	p, err := r.load(thread, b, args, kwargs, r.own)
	if err != nil {
		return nil, err
	}
	r.searched.giveBack() // only if $in never got it, which cannot happen
	r.searched = searchedFile{piece: p}
	return &r.searched, nil
}

// searchedFile is what ctx.repo.read returns where its result is only
// searched: "x" in ctx.repo.read(p) is rewritten to
// $in("x", $searched(ctx.repo.read)(p)) (see rewrite), so the value goes
// from the read straight into $in, which no Starlark code can name, and
// nothing else ever sees it. $in searches it like the string read would
// have returned, then gives its piece back to the arena: reading a tree
// to look for a licence header then recycles a few blocks instead of
// touching fresh memory for every file, which costs more than the reads.
type searchedFile struct {
	piece
	done bool // searched, and given back
}

var _ sl.Value = (*searchedFile)(nil)

func (f *searchedFile) String() string        { return "<file contents>" }
func (f *searchedFile) Type() string          { return "string" }
func (f *searchedFile) Freeze()               {}
func (f *searchedFile) Truth() sl.Bool        { return len(f.data) > 0 }
func (f *searchedFile) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: searched file") }

// has reports whether the file contains x, as x in the string read would
// have returned does (an error if x is not a string), and gives the bytes
// back: f is searched once.
func (f *searchedFile) has(x sl.Value) (bool, error) {
	if f.done {
		return false, errors.New("internal error: a file's contents searched twice")
	}
	found, err := sl.String(bytesToString(f.data)).Has(x)
	f.giveBack()
	return found, err
}

// giveBack lets go of the bytes, unsearched if $in refuses the search.
func (f *searchedFile) giveBack() {
	if !f.done {
		f.done = true
		f.blk.release()
		f.piece = piece{}
	}
}

// searchedBuiltin is $searched(fn): the function to call for fn(...) when
// its result only goes to $in. That is the call's own ctx.repo.read's
// searching twin, and fn itself for anything else (another repository
// value's read, a struct's, a def named read), which is then called as
// the program says.
func searchedBuiltin(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	if err := internalArgs("searched", args, kwargs, 1); err != nil {
		return nil, err
	}
	if st, _ := thread.Local(stateKey).(*callState); st != nil && st.repo != nil {
		if fn, ok := args[0].(*sl.Builtin); ok && fn == st.repo.fns.read {
			return st.repo.searchRead, nil
		}
	}
	return args[0], nil
}

// load is read and readSearched: the file the path argument names, charged
// to the call. A path a glob of this call listed, exactly as listed, may
// have been read already, by the read-ahead or for the size() just
// before; otherwise it is read here, into own (plainly if nil).
func (r *repoValue) load(thread *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple, own *arena) (piece, error) {
	rel, err := pathArg(b, args, kwargs)
	if err != nil {
		return piece{}, err
	}
	lim := r.st.limits
	limit := min(lim.ReadBytes, lim.ReadTotal-r.st.readTotal)
	p, ahead := r.takeSized(rel)
	if !ahead {
		p, err, ahead = r.ahead.takeTo(rel, limit, own)
	} else if n := int64(len(p.data)); n > limit {
		p.blk.release()
		p, err = piece{}, &repo.TooLargeError{Size: n, Limit: limit}
	}
	if !ahead {
		var clean string
		if clean, err = r.t.clean(rel); err != nil {
			return piece{}, fmt.Errorf("%s: %w", b.Name(), err)
		}
		rel = clean
		p.data, err = r.t.readFile(r.rd, clean, limit, own.allocTo())
		p.blk = own.taken(err)
	}
	if err != nil {
		return piece{}, fmt.Errorf("%s: %w", b.Name(), r.t.problem(rel, err, lim))
	}
	r.st.readTotal += int64(len(p.data))
	if err := r.st.chargeFor(thread, uint64(len(p.data))/1024, func() string { return "reading " + rel }); err != nil {
		p.blk.release()
		return piece{}, err
	}
	return p, nil
}

// bytesToString views data as a string without copying it. data must never
// change afterwards: it is a buffer made for this read, or a piece of an
// arena block that is not given back (see arena).
func bytesToString(data []byte) string {
	if len(data) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(data), len(data))
}

// exists(path) reports whether path names a file or directory.
func (r *repoValue) exists(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	_, _, exists, err := r.statArg(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	return sl.Bool(exists), nil
}

// size(path) is the regular file's size in bytes, None when nothing is
// there: a rule over a tree learns that a file is over the read limit, and
// skips it, before a read fails the whole call.
func (r *repoValue) size(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	if n, ok := r.sizeAhead(b, args, kwargs); ok {
		return sl.MakeInt64(n), nil
	}
	p, fi, exists, err := r.statArg(b, args, kwargs)
	switch {
	case err != nil:
		return nil, err
	case !exists:
		return sl.None, nil
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s: %w", b.Name(), r.t.problem(p, repo.ErrNotRegular, r.st.limits))
	}
	return sl.MakeInt64(fi.Size()), nil
}

// sizeAhead answers size() for a file a glob listed from the read-ahead,
// which has read it or reads it now, and keeps what it read for the read
// that follows: asking a file's size before reading it then costs nothing
// more. ok is false for a path the read-ahead cannot answer for.
func (r *repoValue) sizeAhead(b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (int64, bool) {
	if r.ahead == nil || len(args) != 1 || len(kwargs) != 0 {
		return 0, false
	}
	rel, isString := args[0].(sl.String)
	if !isString {
		return 0, false
	}
	r.takeSized("")
	p, err, ok := r.ahead.takeTo(string(rel), r.ahead.max, r.own)
	switch {
	case !ok:
		return 0, false
	case err == nil:
		r.sized = sizedFile{rel: string(rel), piece: p}
		return int64(len(p.data)), true
	}
	return tooLargeSize(err) // else the stat says what is wrong, as for any path
}

// tooLargeSize is the size a *repo.TooLargeError reports. Apart from
// sizeAhead, which calls it for every file, so that the error target does
// not escape to the heap on every call.
func tooLargeSize(err error) (int64, bool) {
	var tooLarge *repo.TooLargeError
	if errors.As(err, &tooLarge) {
		return tooLarge.Size, true
	}
	return 0, false
}

// statArg describes what the path argument of exists or size names: its
// cleaned path, and its FileInfo or exists false. A path that is refused
// is an error naming the builtin.
func (r *repoValue) statArg(b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (string, fs.FileInfo, bool, error) {
	rel, err := pathArg(b, args, kwargs)
	if err != nil {
		return "", nil, false, err
	}
	p, err := r.t.clean(rel)
	if err != nil {
		return "", nil, false, fmt.Errorf("%s: %w", b.Name(), err)
	}
	fi, exists, err := r.t.stat(p)
	if err != nil {
		return "", nil, false, fmt.Errorf("%s: %w", b.Name(), r.t.problem(rel, err, r.st.limits))
	}
	return p, fi, exists, nil
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
		budget:    r.st.limits.Steps - min(thread.ExecutionSteps(), r.st.limits.Steps),
		stopped:   func() bool { return r.st.trippedLimit() != limitNone },
		found:     found,
		foundOnly: done != nil,
	}
	paths, seen, err := r.t.glob(pattern, walk)
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
		paths = done() // what the walk gave found, sorted
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

// stop ends what the call started in the background. Safe to call from
// any goroutine.
func (r *repoValue) stop() { r.ahead.stop() }

// closeReader releases the hook's reader. Called on the hook's goroutine
// once the call has returned, never from another: the reader holds a
// directory's descriptor, which must not be closed under a read.
func (r *repoValue) closeReader() {
	if r.rd != nil {
		r.rd.Close()
	}
}
