package repo

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Revision is a read-only view of the files a git commit holds under the
// checkout root, read from git's object store rather than the work tree:
// what the change under review is compared with. Paths are relative to
// the checkout root, as a Checkout's are, and Stat, ReadFile and Abs have
// a Checkout's signatures, so one interface serves both.
//
// Nothing is followed: a symbolic link is refused with ErrLink, at the
// path or on the way to it, and a submodule with ErrNotRegular, whatever
// they point at.
//
// A Revision reads lazily, as a caller reading a few files of a large
// tree wants, and never lists the whole tree: Checkout.Revision resolves
// the commit, and a path is looked up the first time it is asked about
// (one git ls-tree, two when a name on its way is not a directory) and
// remembered, found or not; a read is one git cat-file more. Each of
// these processes is bounded by the time the context given to
// Checkout.Revision had left, or by revisionTimeout when it had no
// deadline; the context itself is not kept, so cancelling it later stops
// nothing.
//
// The zero value is not usable; use Checkout.Revision. A Revision is safe
// for concurrent use.
type Revision struct {
	c       *Checkout
	name    string
	commit  string
	prefix  string        // the checkout root from the top of the tree: "" or "sub/"
	timeout time.Duration // for each git process a Stat or ReadFile runs

	mu    sync.Mutex
	known map[string]treeEntry // by path from the top of the tree: what ls-tree said, and what it showed is missing
}

// revisionTimeout bounds each git process a Revision runs after it is
// made, when the context it was made with had no deadline.
const revisionTimeout = 30 * time.Second

// maxLookupOutput bounds what ls-tree may print about one path: a line
// for it and one for each directory on its way.
const maxLookupOutput = 1 << 20

// entryKind is what a path of a commit is.
type entryKind uint8

const (
	entryMissing   entryKind = iota // nothing is there
	entryTree                       // a directory
	entryRegular                    // a file
	entryLink                       // a symbolic link
	entrySubmodule                  // a submodule's commit, or a mode git has no other name for
)

// treeEntry is one line of git ls-tree, or a path it showed is missing.
type treeEntry struct {
	kind entryKind
	mode fs.FileMode // of a regular file: 0o644 or 0o755
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

// Revision resolves rev to a commit, refusing an ambiguous name as
// Changes does, and returns a view of the files it holds under the
// checkout root; nothing is listed until it is asked for. A commit
// without the root's directory is an empty view. Errors are diagnosed as
// Changes's are.
func (c *Checkout) Revision(ctx context.Context, rev string) (*Revision, error) {
	if err := checkRev(rev); err != nil {
		return nil, err
	}
	commit, prefix, err := c.resolve(ctx, rev, true)
	if err != nil {
		return nil, c.diagnose(ctx, rev, "", err)
	}
	timeout := revisionTimeout
	if deadline, ok := ctx.Deadline(); ok {
		timeout = time.Until(deadline)
	}
	return &Revision{c: c, name: rev, commit: commit, prefix: prefix, timeout: timeout, known: map[string]treeEntry{}}, nil
}

// Name is the revision as it was given: "origin/main".
func (r *Revision) Name() string { return r.name }

// Commit is the full hash of the commit Name resolved to.
func (r *Revision) Commit() string { return r.commit }

// Abs names rel for a message: "<rev>:<rel>", as git would.
func (r *Revision) Abs(rel string) string {
	if rel == "" {
		rel = "."
	}
	return r.name + ":" + rel
}

// find cleans rel and looks it up, an error naming op and rel when it
// cannot be had.
func (r *Revision) find(op, rel string) (string, treeEntry, error) {
	p, err := Clean(rel)
	if err != nil {
		return "", treeEntry{}, err
	}
	e, err := r.lookup(p)
	if err != nil {
		return "", treeEntry{}, &fs.PathError{Op: op, Path: rel, Err: err}
	}
	return p, e, nil
}

// Stat describes the regular file or directory rel names in the revision.
func (r *Revision) Stat(rel string) (fs.FileInfo, error) {
	p, e, err := r.find("stat", rel)
	switch {
	case err != nil:
		return nil, err
	case e.kind == entryTree:
		return &revFileInfo{name: path.Base(p), mode: fs.ModeDir | 0o755}, nil
	}
	return &revFileInfo{name: path.Base(p), size: e.size, mode: e.mode}, nil
}

// ReadFile reads the regular file at rel as the revision holds it, of at
// most limit bytes: a larger one is refused by the size git records,
// before a byte is read.
func (r *Revision) ReadFile(rel string, limit int64) ([]byte, error) {
	_, e, err := r.find("read", rel)
	switch {
	case err != nil:
		return nil, err
	case e.kind == entryTree:
		return nil, &fs.PathError{Op: "read", Path: rel, Err: ErrNotRegular}
	case e.size > limit:
		return nil, &fs.PathError{Op: "read", Path: rel, Err: &TooLargeError{Size: e.size, Limit: limit}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	data, err := r.c.git(ctx, int(e.size), "cat-file", "blob", e.oid)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: rel, Err: r.c.diagnose(ctx, "", "", err)}
	}
	return data, nil
}

// ReadAll reads every regular file called name in dir or below it, of at
// most limit bytes each, with two git processes however many there are
// (one listing, one cat-file --batch), where reading them one by one
// would cost two each: what a caller wanting a file of every work item
// needs. Keys are paths from the checkout root. A file over limit is there
// with nil data (ReadFile says why); links and submodules are left out.
// Files that come to more than 64 MiB together are refused, not held.
// What the listing shows is remembered for Stat and ReadFile.
func (r *Revision) ReadAll(dir, name string, limit int64) (map[string][]byte, error) {
	p, err := Clean(dir)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	args := []string{"ls-tree", "--full-tree", "-r", "-t", "-z", "-l", r.commit}
	if full := strings.TrimSuffix(r.prefix+p, "/."); full != "." && full != "" {
		args = append(args, "--", strings.TrimSuffix(full, "/"))
	}
	found, err := r.listRemembered(ctx, args)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	var oids []string
	var wanted []string
	total := 0
	for _, full := range slices.Sorted(maps.Keys(found)) {
		e := found[full]
		rel, under := strings.CutPrefix(full, r.prefix)
		if !under || e.kind != entryRegular || path.Base(full) != name {
			continue
		}
		// Each a regular file all the way down: the listing enters no link.
		files[rel] = nil
		if e.size > limit {
			continue
		}
		oids, wanted = append(oids, e.oid), append(wanted, rel)
		total += int(e.size) + len(e.oid) + 32
	}
	if len(oids) == 0 {
		return files, nil
	}
	if total > maxGitOutput {
		return nil, &GitError{Rev: r.name, Msg: fmt.Sprintf("the %s files under %s come to more than %s", name, dir, byteSize(maxGitOutput)), Hint: "read them one at a time"}
	}
	batch, _, err := r.c.run(ctx, gitCmd{args: []string{"cat-file", "--batch"}, stdin: strings.Join(oids, "\n") + "\n", limit: total})
	if err != nil {
		return nil, r.c.diagnose(ctx, "", "", err)
	}
	for i, rel := range wanted {
		var data []byte
		if data, batch, err = nextBlob(batch, oids[i]); err != nil {
			return nil, &GitError{Rev: r.name, Msg: fmt.Sprintf("git cat-file --batch, for %s: %v", rel, err)}
		}
		files[rel] = data
	}
	return files, nil
}

// nextBlob reads one "<oid> blob <size>\n<data>\n" record of cat-file
// --batch from out, the blob oid's, and returns its data and the rest.
func nextBlob(out []byte, oid string) (data, rest []byte, err error) {
	head, body, ok := bytes.Cut(out, []byte("\n"))
	fields := strings.Fields(string(head))
	if !ok || len(fields) != 3 || fields[0] != oid || fields[1] != "blob" {
		return nil, nil, fmt.Errorf("printed %q, want %q", head, oid+" blob <size>")
	}
	n, err := strconv.Atoi(fields[2])
	if err != nil || n < 0 || n+1 > len(body) || body[n] != '\n' {
		return nil, nil, fmt.Errorf("printed a record of size %q it does not hold", fields[2])
	}
	return body[:n:n], body[n+1:], nil
}

// lookup finds the cleaned path p: a regular file's entry or a tree's. A
// link or submodule is refused, on the way or at the end; anything else
// missing does not exist.
func (r *Revision) lookup(p string) (treeEntry, error) {
	if p == "." {
		return treeEntry{kind: entryTree}, nil
	}
	full := r.prefix + p
	if e, ok, err := r.cached(full); ok {
		return e, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	if err := r.learn(ctx, full); err != nil {
		return treeEntry{}, err
	}
	if e, ok, err := r.cached(full); ok {
		return e, err
	}
	return treeEntry{}, &GitError{Rev: r.name, Msg: fmt.Sprintf("git ls-tree did not say what %q is", full)}
}

// cached answers for the path full from what is known, ok false when git
// must be asked. The directories on the way are looked at from the top:
// the first that is not a directory decides.
func (r *Revision) cached(full string) (e treeEntry, ok bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range len(full) {
		if full[i] != '/' {
			continue
		}
		d, ok := r.known[full[:i]]
		switch {
		case !ok:
			return treeEntry{}, false, nil
		case d.kind == entryTree:
			continue
		case d.kind == entryLink:
			return treeEntry{}, true, ErrLink
		}
		return treeEntry{}, true, fs.ErrNotExist // nothing, a file or a submodule: nothing under it
	}
	e, ok = r.known[full]
	switch {
	case !ok:
		return treeEntry{}, false, nil
	case e.kind == entryMissing:
		return treeEntry{}, true, fs.ErrNotExist
	case e.kind == entryLink:
		return treeEntry{}, true, ErrLink
	case e.kind == entrySubmodule:
		return treeEntry{}, true, ErrNotRegular
	}
	return e, true, nil
}

// learn asks git about the path full and remembers the answer. With -t,
// ls-tree shows every directory it enters on the way, and the path if it
// is there; the first name on the way it does not show is no directory,
// and one more ls-tree says what it is: nothing, a file, a link or a
// submodule.
func (r *Revision) learn(ctx context.Context, full string) error {
	found, err := r.lsTree(ctx, "-t", full)
	if err != nil {
		return err
	}
	for i := 0; ; {
		j := strings.IndexByte(full[i:], '/')
		name := full
		if j >= 0 {
			name = full[:i+j]
		}
		e, ok := found[name]
		if ok && e.kind == entryTree && j >= 0 {
			i += j + 1
			continue
		}
		if !ok && name != full {
			more, err := r.lsTree(ctx, "", name)
			if err != nil {
				return err
			}
			for k, v := range more {
				found[k] = v
			}
		}
		if _, ok := found[name]; !ok {
			found[name] = treeEntry{kind: entryMissing}
		}
		break
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, v := range found {
		r.known[k] = v
	}
	return nil
}

// lsTree runs git ls-tree on the one path full (named from the top of the
// tree), with option ("-t" or "") and the sizes of blobs, and returns
// what it printed, by path.
func (r *Revision) lsTree(ctx context.Context, option, full string) (map[string]treeEntry, error) {
	args := []string{"ls-tree", "--full-tree", "-z", "-l"}
	if option != "" {
		args = append(args, option)
	}
	out, err := r.c.git(ctx, maxLookupOutput, append(args, r.commit, "--", full)...)
	if err != nil {
		return nil, r.c.diagnose(ctx, "", "", err)
	}
	return r.parse(string(out))
}

// listRemembered runs git ls-tree with args, bounded as a whole listing,
// and remembers what it lists for Stat and ReadFile.
func (r *Revision) listRemembered(ctx context.Context, args []string) (map[string]treeEntry, error) {
	out, err := r.c.git(ctx, maxGitOutput, args...)
	if err != nil {
		return nil, r.c.diagnose(ctx, "", "", err)
	}
	found, err := r.parse(string(out))
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	maps.Copy(r.known, found)
	r.mu.Unlock()
	return found, nil
}

// parse reads ls-tree -z -l: "<mode> <type> <object> <size>\t<path>"
// records ended by NUL, the size padded with spaces and "-" for a tree or
// submodule.
func (r *Revision) parse(out string) (map[string]treeEntry, error) {
	found := map[string]treeEntry{}
	for out != "" {
		var rec string
		rec, out, _ = strings.Cut(out, "\x00")
		meta, name, ok1 := strings.Cut(rec, "\t")
		mode, meta, ok2 := strings.Cut(meta, " ")
		_, meta, ok3 := strings.Cut(meta, " ") // the type, which the mode implies
		oid, size, ok4 := strings.Cut(meta, " ")
		size = strings.TrimLeft(size, " ")
		if !ok1 || !ok2 || !ok3 || !ok4 || name == "" || len(mode) != 6 {
			return nil, &GitError{Rev: r.name, Msg: fmt.Sprintf("git ls-tree printed %q, want <mode> <type> <object> <size>\\t<path>", rec)}
		}
		e := treeEntry{kind: entrySubmodule, oid: oid}
		switch {
		case mode == "040000":
			e.kind = entryTree
		case mode == "120000":
			e.kind = entryLink
		case strings.HasPrefix(mode, "100"):
			// 100755 is executable; old repositories hold 100664 too.
			e.kind, e.mode = entryRegular, 0o644
			if bits, _ := strconv.ParseUint(mode[3:], 8, 32); bits&0o111 != 0 {
				e.mode = 0o755
			}
			var err error
			if e.size, err = strconv.ParseInt(size, 10, 64); err != nil || e.size < 0 {
				return nil, &GitError{Rev: r.name, Msg: fmt.Sprintf("git ls-tree printed size %q for %q", size, name)}
			}
		}
		found[name] = e
	}
	return found, nil
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

// Dirs lists the names of the directories directly in the directory rel,
// sorted, in one git ls-tree; none when the revision has no directory
// there. What the listing shows is remembered for Stat and ReadFile.
func (r *Revision) Dirs(rel string) ([]string, error) {
	p, err := Clean(rel)
	if err != nil {
		return nil, err
	}
	full := strings.TrimSuffix(r.prefix+p, "/.")
	if p == "." {
		full = strings.TrimSuffix(r.prefix, "/")
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	args := []string{"ls-tree", "--full-tree", "-z", "-l", r.commit}
	if full != "" {
		// The trailing slash lists what is in it, not the name itself.
		args = append(args, "--", full+"/")
	}
	found, err := r.listRemembered(ctx, args)
	if err != nil {
		return nil, err
	}
	var names []string
	for name, e := range found {
		dir, base := path.Split(name)
		if e.kind == entryTree && strings.TrimSuffix(dir, "/") == full {
			names = append(names, base)
		}
	}
	slices.Sort(names)
	return names, nil
}
