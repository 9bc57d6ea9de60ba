package starlark

import (
	"errors"
	"fmt"
	"io/fs"
	"math/bits"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/the-loop/the-loop/repo"
)

// globCost is what a glob is charged in steps before the entries it
// visits, one step each: a walk costs system calls however small the tree.
const globCost = 64

// maxGlobSegments bounds a pattern's length in segments; a pattern's
// matching state is one bit per segment, plus one for "matched".
const maxGlobSegments = 63

// globPattern is a parsed ctx.repo.glob pattern. Each segment matches as
// path.Match does ("*" and "?" never match "/"); a "**" segment matches
// any number of whole segments, none included.
//
// Matching runs segment by segment as the walk descends, as a set of
// states (bit i: segs[i:] is still to match): a directory is entered only
// if some state survives its name, so "docs/*/tasks.md" reads two levels
// and no more, and no pattern costs more than len(segs) matches per entry.
type globPattern struct {
	segs   []string
	double []bool // segs[i] == "**"
	// quick is how segs[i] matches a name when it can without path.Match,
	// which a walk calls for every entry it visits: most segments are a
	// name, "*", "*.ext" or "prefix*".
	quick []segMatch
	// prefix is the literal leading directories, where the walk starts.
	prefix string
	start  globStates
}

type globStates uint64

// segMatch is a segment that needs no path.Match: the name must equal,
// end with or start with lit (any name, for "*"). A segment with any other
// wildcard, a character class or an escape is kind matchFull.
type segMatch struct {
	kind segKind
	lit  string
}

type segKind uint8

const (
	matchFull segKind = iota
	matchExact
	matchSuffix // "*lit"
	matchPrefix // "lit*"
)

func quickMatch(seg string) segMatch {
	const meta = `*?[\`
	switch {
	case !strings.ContainsAny(seg, meta):
		return segMatch{matchExact, seg}
	case seg[0] == '*' && !strings.ContainsAny(seg[1:], meta):
		return segMatch{matchSuffix, seg[1:]}
	case seg[len(seg)-1] == '*' && !strings.ContainsAny(seg[:len(seg)-1], meta):
		return segMatch{matchPrefix, seg[:len(seg)-1]}
	}
	return segMatch{}
}

// matchSeg reports whether name, one entry of a directory, matches
// segs[i] as path.Match would.
func (p *globPattern) matchSeg(i int, name string) bool {
	switch q := p.quick[i]; q.kind {
	case matchExact:
		return name == q.lit
	case matchSuffix:
		return strings.HasSuffix(name, q.lit) && !strings.Contains(name, "/")
	case matchPrefix:
		return strings.HasPrefix(name, q.lit) && !strings.Contains(name[len(q.lit):], "/")
	}
	ok, _ := path.Match(p.segs[i], name)
	return ok
}

func parseGlob(pattern, what string) (*globPattern, error) {
	if pattern == "" {
		return nil, errors.New("an empty pattern")
	}
	if strings.HasPrefix(pattern, "/") || filepath.IsAbs(pattern) {
		return nil, fmt.Errorf("pattern %q is absolute; patterns are relative to %s", pattern, what)
	}
	// Read it the way read() reads a path: "./src//*.go" is "src/*.go".
	clean := path.Clean(pattern)
	switch {
	case clean == ".." || strings.HasPrefix(clean, "../"):
		return nil, fmt.Errorf("pattern %q leaves %s", pattern, what)
	case clean == ".":
		return nil, fmt.Errorf("pattern %q names %s itself; a pattern matches files (try \"**\")", pattern, what)
	}
	segs := strings.Split(clean, "/")
	if len(segs) > maxGlobSegments {
		return nil, fmt.Errorf("pattern %q has more than %d segments", pattern, maxGlobSegments)
	}
	p := &globPattern{segs: segs, double: make([]bool, len(segs)), quick: make([]segMatch, len(segs))}
	literal := 0
	for i, s := range segs {
		if _, err := path.Match(s, ""); err != nil {
			return nil, fmt.Errorf("pattern %q: %w (an unclosed [ or a \\ at the end of a segment?)", pattern, err)
		}
		p.double[i] = s == "**"
		p.quick[i] = quickMatch(s)
		if literal == i && !p.double[i] && !strings.ContainsAny(s, `*?[\`) {
			literal++
		}
	}
	// A pattern without a wildcard names one file, listed from its
	// directory.
	literal = min(literal, len(segs)-1)
	p.prefix = strings.Join(segs[:literal], "/")
	p.start = p.closure(1 << literal)
	return p, nil
}

// closure adds to s the states a "**" reaches by matching nothing.
func (p *globPattern) closure(s globStates) globStates {
	for i, d := range p.double {
		if d && s&(1<<i) != 0 {
			s |= 1 << (i + 1)
		}
	}
	return s
}

// step returns the states after matching one more segment, name.
func (p *globPattern) step(s globStates, name string) globStates {
	var next globStates
	for rest := s &^ p.done(); rest != 0; rest &= rest - 1 {
		i := bits.TrailingZeros64(uint64(rest))
		if p.double[i] {
			next |= 1 << i
		} else if p.matchSeg(i, name) {
			next |= 1 << (i + 1)
		}
	}
	return p.closure(next)
}

// done is the state in which the whole pattern has matched.
func (p *globPattern) done() globStates { return 1 << len(p.segs) }

// match reports whether the slash-separated rel matches the pattern.
func (p *globPattern) match(rel string) bool {
	s := p.closure(1)
	for seg := range strings.SplitSeq(rel, "/") {
		if s = p.step(s, seg); s == 0 {
			return false
		}
	}
	return s&p.done() != 0
}

// globWalk is what a glob needs besides its pattern.
type globWalk struct {
	// budget is how many entries the walk may visit; past it the walk
	// stops and reports having seen more.
	budget uint64
	// stopped is polled before each directory; when it reports true the
	// walk ends with errGlobStopped.
	stopped func() bool
	// found, when set, is called with each directory's matches as soon as
	// they are known, possibly from several goroutines at once.
	found func(rels []string)
	// foundOnly returns no paths, for a caller that has them all from
	// found, and sorts them itself: collecting and sorting ten thousand
	// paths twice takes milliseconds, and a hook waits for them.
	foundOnly bool
}

var errGlobStopped = errors.New("stopped")

// glob walks the part of the tree under the pattern's literal prefix and
// returns the regular files matching it, sorted (none if opt.foundOnly), and
// the number of entries it visited. Directories named .git are not entered
// and symbolic links are neither followed nor listed. Directories are read
// on every core.
func (t *tree) glob(pattern string, opt globWalk) (paths []string, seen uint64, err error) {
	p, err := parseGlob(pattern, t.what)
	if err != nil {
		return nil, 0, err
	}
	start := p.prefix
	if start == "" {
		start = "."
	}
	fi, err := t.co.Lstat(start)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return []string{}, 0, nil
	case err != nil:
		return nil, 0, t.problem(start, err, Limits{})
	case fi.Mode()&fs.ModeSymlink != 0:
		// Not followed; but a link out is an error, not an empty tree.
		if _, err := t.co.Stat(start); errors.Is(err, repo.ErrOutside) {
			return nil, 0, t.problem(start, err, Limits{})
		}
		return []string{}, 0, nil
	case !fi.IsDir():
		return []string{}, 0, nil // a file: nothing to walk
	}
	w := &walker{t: t, p: p, opt: opt, out: []string{}, pending: 1}
	w.cond.L = &w.mu
	w.dirs = []walkDir{{rel: p.prefix, states: p.start}}
	w.work()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return nil, w.seen, w.err
	}
	slices.Sort(w.out)
	return w.out, w.seen, nil
}

// walker is one glob's walk: a queue of directories read by up to
// GOMAXPROCS goroutines, the calling one included.
type walker struct {
	t   *tree
	p   *globPattern
	opt globWalk

	mu      sync.Mutex
	cond    sync.Cond
	dirs    []walkDir // waiting to be read, oldest first
	pending int       // directories queued or being read
	workers int       // goroutines besides the caller
	seen    uint64
	out     []string
	err     error
}

type walkDir struct {
	rel    string // slash-separated; "" for the repository itself
	states globStates
}

func (w *walker) work() {
	var b walkBuffers
	for {
		d, ok := w.next()
		if !ok {
			return
		}
		w.read(d, &b)
	}
}

// walkBuffers are one walking goroutine's, used again for each directory
// it reads: what a directory yields is copied on (into the walk's queue
// and result, and by found), so its lists are scratch.
type walkBuffers struct {
	subdirs []walkDir
	matched []string
}

// next returns a directory to read, waiting while others are being read
// (they may add more), or false once the walk is over.
func (w *walker) next() (walkDir, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.dirs) == 0 && w.pending > 0 {
		w.cond.Wait()
	}
	if len(w.dirs) == 0 {
		return walkDir{}, false
	}
	d := w.dirs[0]
	w.dirs = w.dirs[1:]
	return d, true
}

// read lists one directory: its matching files join the result (and go to
// found), its subdirectories that may hold matches join the queue. A
// directory that cannot be listed fails the glob: a rule that silently
// skipped part of the tree would pass without having looked.
func (w *walker) read(d walkDir, b *walkBuffers) {
	subdirs, matched := b.subdirs[:0], b.matched[:0]
	defer func() { b.subdirs, b.matched = subdirs, matched }()
	n, err := listDirectory(w.t.co, d.rel, func(name string, kind repo.Kind) {
		switch kind {
		case repo.KindDir:
			if name == ".git" {
				return
			}
			if s := w.p.step(d.states, name); s&^w.p.done() != 0 {
				subdirs = append(subdirs, walkDir{rel: joinRel(d.rel, name), states: s})
			}
		case repo.KindRegular:
			if w.p.step(d.states, name)&w.p.done() != 0 {
				matched = append(matched, joinRel(d.rel, name))
			}
		}
	})
	if err == nil && len(matched) > 0 && w.opt.found != nil {
		w.opt.found(matched)
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending--
	w.seen += uint64(n)
	switch {
	case w.err != nil:
	case errors.Is(err, fs.ErrNotExist) && d.rel != w.p.prefix:
		// Removed since its parent was listed: nothing left to look at.
	case err != nil:
		w.err = listError(d.rel, err)
	case w.seen > w.opt.budget:
		w.err = errGlobStopped
	case w.opt.stopped != nil && w.opt.stopped():
		w.err = errGlobStopped
	}
	if w.err != nil {
		// Nothing more is read; those being read finish and leave.
		w.pending -= len(w.dirs)
		w.dirs = nil
		w.cond.Broadcast()
		return
	}
	if !w.opt.foundOnly {
		w.out = append(w.out, matched...)
	}
	w.dirs = append(w.dirs, subdirs...)
	w.pending += len(subdirs)
	if w.pending == 0 {
		w.cond.Broadcast()
		return
	}
	for range len(subdirs) {
		w.cond.Signal()
	}
	for max := runtime.GOMAXPROCS(0) - 1; w.workers < max && w.workers < len(w.dirs); w.workers++ {
		go w.work()
	}
}

// listDirectory lists the directory rel ("" for the root); tests make it
// fail.
var listDirectory = func(co *repo.Checkout, rel string, visit func(string, repo.Kind)) (int, error) {
	if rel == "" {
		rel = "."
	}
	return co.ListDir(rel, visit)
}

// listError words a directory that cannot be listed, by its repository
// path rather than the host's.
func listError(rel string, err error) error {
	if rel == "" {
		rel = "."
	}
	err = repo.Cause(err)
	switch {
	case errors.Is(err, repo.ErrOutside):
		return fmt.Errorf("%s changed while it was listed (it now leads outside the repository)", rel)
	case errors.Is(err, repo.ErrNotDir):
		return fmt.Errorf("%s changed while it was listed (it is no longer a directory)", rel)
	}
	return fmt.Errorf("cannot list %s: %w", rel, err)
}

// joinRel returns a new string: name may be a view of listDir's buffer.
func joinRel(dir, name string) string {
	if dir == "" {
		return strings.Clone(name)
	}
	return dir + "/" + name
}
