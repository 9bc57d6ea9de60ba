package repo

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Revision is a read-only view of the files a git commit holds under the
// checkout root, read from git's object store rather than the work tree:
// what the change under review is compared with. Paths are relative to
// the checkout root, as a Checkout's are, and Stat, ReadFile and Abs have
// a Checkout's signatures, so one interface serves both.
//
// Nothing is followed: a symbolic link is refused with ErrLink and a
// submodule with ErrNotRegular, whatever they point at.
//
// The zero value is not usable; use Checkout.Revision. A Revision is
// immutable and safe for concurrent use.
type Revision struct {
	c       *Checkout
	name    string
	commit  string
	entries map[string]treeEntry // every blob and submodule, by path
	dirs    map[string]bool      // the directories the paths imply
	files   []string             // the regular files, sorted
}

// treeEntry is one line of git ls-tree.
type treeEntry struct {
	kind Kind // KindRegular, or KindOther for a link or submodule
	mode fs.FileMode
	oid  string
	size int64
}

// fileView is what a Checkout and a Revision share, so that a caller can
// read a file from either: kept in step by the compiler.
type fileView interface {
	Stat(rel string) (fs.FileInfo, error)
	ReadFile(rel string, limit int64) ([]byte, error)
	Abs(rel string) string
}

var (
	_ fileView = (*Checkout)(nil)
	_ fileView = (*Revision)(nil)
)

// Revision resolves rev to a commit and lists, once, the files it holds
// under the checkout root. A commit without the root's directory is an
// empty view. Errors are diagnosed as Changes's are.
func (c *Checkout) Revision(ctx context.Context, rev string) (*Revision, error) {
	if err := checkRev(rev); err != nil {
		return nil, err
	}
	commit, err := c.resolve(ctx, rev)
	if err != nil {
		return nil, c.diagnose(ctx, rev, false, err)
	}
	// Run from a subdirectory, ls-tree lists only what is under it and
	// names it from there: the checkout's view, with no prefix to strip.
	out, err := c.git(ctx, maxGitOutput, "ls-tree", "-r", "-z", "-l", commit)
	if err != nil {
		return nil, c.diagnose(ctx, rev, false, err)
	}
	r := &Revision{c: c, name: rev, commit: commit}
	if err := r.parse(string(out)); err != nil {
		return nil, err
	}
	return r, nil
}

// parse reads ls-tree -r -z -l: "<mode> <type> <object> <size>\t<path>"
// records ended by NUL, the size padded with spaces and "-" for a
// submodule. A large project lists tens of thousands, so a record is cut
// in place rather than split.
func (r *Revision) parse(out string) error {
	n := strings.Count(out, "\x00")
	r.entries = make(map[string]treeEntry, n)
	r.dirs = make(map[string]bool, n/4)
	r.files = make([]string, 0, n)
	for out != "" {
		var rec string
		rec, out, _ = strings.Cut(out, "\x00")
		meta, name, ok1 := strings.Cut(rec, "\t")
		mode, meta, ok2 := strings.Cut(meta, " ")
		_, meta, ok3 := strings.Cut(meta, " ") // the type, which the mode implies
		oid, size, ok4 := strings.Cut(meta, " ")
		size = strings.TrimLeft(size, " ")
		if !ok1 || !ok2 || !ok3 || !ok4 || name == "" || len(mode) != 6 {
			return &GitError{Rev: r.name, Msg: fmt.Sprintf("git ls-tree printed %q, want <mode> <type> <object> <size>\\t<path>", rec)}
		}
		e := treeEntry{kind: KindOther, oid: oid}
		switch {
		case mode == "120000":
			e.mode = fs.ModeSymlink | 0o777
		case strings.HasPrefix(mode, "100"):
			// 100755 is executable; old repositories hold 100664 too.
			e.kind, e.mode = KindRegular, 0o644
			if bits, _ := strconv.ParseUint(mode[3:], 8, 32); bits&0o111 != 0 {
				e.mode = 0o755
			}
			var err error
			if e.size, err = strconv.ParseInt(size, 10, 64); err != nil {
				return &GitError{Rev: r.name, Msg: fmt.Sprintf("git ls-tree printed size %q for %q", size, name)}
			}
			r.files = append(r.files, name)
		default: // 160000, a submodule's commit
			e.mode = fs.ModeIrregular
		}
		r.entries[name] = e
		for d := path.Dir(name); d != "." && !r.dirs[d]; d = path.Dir(d) {
			r.dirs[d] = true
		}
	}
	// Git's tree order is byte order of full paths already; sorting keeps
	// the promise without relying on it, at the cost of one pass.
	if !slices.IsSorted(r.files) {
		slices.Sort(r.files)
	}
	return nil
}

// Name is the revision as it was given: "origin/main".
func (r *Revision) Name() string { return r.name }

// Commit is the full hash of the commit Name resolved to.
func (r *Revision) Commit() string { return r.commit }

// Paths lists the revision's regular files under the root, sorted, in a
// new slice. Links and submodules are not among them.
func (r *Revision) Paths() []string { return slices.Clone(r.files) }

// Abs names rel for a message: "<rev>:<rel>", as git would.
func (r *Revision) Abs(rel string) string {
	if rel == "" {
		rel = "."
	}
	return r.name + ":" + rel
}

// Stat describes the regular file or directory rel names in the revision.
// A directory is one the paths imply, as git stores no other.
func (r *Revision) Stat(rel string) (fs.FileInfo, error) {
	p, err := Clean(rel)
	if err != nil {
		return nil, err
	}
	e, dir, err := r.lookup(p)
	switch {
	case err != nil:
		return nil, &fs.PathError{Op: "stat", Path: rel, Err: err}
	case dir:
		return &revFileInfo{name: path.Base(p), mode: fs.ModeDir | 0o755}, nil
	}
	return &revFileInfo{name: path.Base(p), size: e.size, mode: e.mode}, nil
}

// ReadFile reads the regular file at rel as the revision holds it, of at
// most limit bytes: a larger one is refused by the size git records,
// before a byte is read.
func (r *Revision) ReadFile(rel string, limit int64) ([]byte, error) {
	p, err := Clean(rel)
	if err != nil {
		return nil, err
	}
	e, dir, err := r.lookup(p)
	switch {
	case err != nil:
		return nil, &fs.PathError{Op: "read", Path: rel, Err: err}
	case dir:
		return nil, &fs.PathError{Op: "read", Path: rel, Err: ErrNotRegular}
	case e.size > limit:
		return nil, &fs.PathError{Op: "read", Path: rel, Err: &TooLargeError{Size: e.size, Limit: limit}}
	}
	// The signature is a Checkout's, without a context: the read is
	// bounded by the blob's recorded size instead.
	ctx := context.Background()
	data, err := r.c.git(ctx, int(e.size), "cat-file", "blob", e.oid)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: rel, Err: r.c.diagnose(ctx, "", false, err)}
	}
	return data, nil
}

// lookup finds the cleaned path p: a regular file's entry, or dir true.
// A link or submodule is refused, on the path or at its end; anything
// else missing does not exist.
func (r *Revision) lookup(p string) (e treeEntry, dir bool, err error) {
	if p == "." || r.dirs[p] {
		return treeEntry{}, true, nil
	}
	if e, ok := r.entries[p]; ok {
		switch {
		case e.kind == KindRegular:
			return e, false, nil
		case e.mode&fs.ModeSymlink != 0:
			return e, false, ErrLink
		}
		return e, false, ErrNotRegular
	}
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		if e, ok := r.entries[d]; ok && e.mode&fs.ModeSymlink != 0 {
			return treeEntry{}, false, ErrLink
		}
	}
	return treeEntry{}, false, fs.ErrNotExist
}

// revFileInfo describes a path of a revision. Git records no times, so
// ModTime is the zero time.
type revFileInfo struct {
	name string
	size int64
	mode fs.FileMode
}

func (fi *revFileInfo) Name() string       { return fi.name }
func (fi *revFileInfo) Size() int64        { return fi.size }
func (fi *revFileInfo) Mode() fs.FileMode  { return fi.mode }
func (fi *revFileInfo) ModTime() time.Time { return time.Time{} }
func (fi *revFileInfo) IsDir() bool        { return fi.mode.IsDir() }
func (fi *revFileInfo) Sys() any           { return nil }
