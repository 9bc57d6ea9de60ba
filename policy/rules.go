package policy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/repo"
	"github.com/the-loop/the-loop/starlark"
)

// rules is the git revision the gate's own files are read from
// (Options.RulesFrom), and which of its files the gate used.
type rules struct {
	rev *repo.Revision
	co  *repo.Checkout // the checkout under review, to compare with

	mu   sync.Mutex
	read []string // module files the hooks were loaded from, once
	said bool

	// stateFiles are the revision's graph-state files under the spec
	// directory, when a check of many items read them all at once (see
	// prefetch); nil, they are read one by one.
	states     sync.Once
	stateFiles map[string][]byte

	// lineage is how the revision's items continue in the checkout
	// (lineage.go), worked out the first time it is asked for.
	lineageOnce sync.Once
	lineage     *lineage
}

// oneByOne is how many items' states are read a file at a time, each
// a git process or two; past it, one listing and one read take them all.
const oneByOne = 16

// prefetch reads every state file under specDir at once, for a check of
// n items, when n is past oneByOne. A failure leaves them to be read one
// by one.
func (r *rules) prefetch(specDir string, n int) {
	if n <= oneByOne {
		return
	}
	r.states.Do(func() {
		if files, err := r.rev.ReadAll(specDir, graph.StateFile, graph.MaxStateBytes); err == nil {
			r.stateFiles = files
		}
	})
}

// state is the revision's graph-state file rel; ok false when the
// revision has none.
func (r *rules) state(rel string) (data []byte, ok bool, err error) {
	if r.stateFiles != nil {
		if data, ok = r.stateFiles[rel]; !ok || data != nil {
			return data, ok, nil
		}
		// Over the limit: the revision's own read says so.
	}
	data, err = r.rev.ReadFile(rel, graph.MaxStateBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	return data, err == nil, err
}

func openRules(co *repo.Checkout, rev string) (*rules, error) {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	r, err := co.Revision(ctx, rev)
	if err != nil {
		return nil, &RevisionError{Use: ForRules, Rev: rev, Err: err}
	}
	return &rules{rev: r, co: co}, nil
}

// used records the module files the hooks were loaded from: the same
// for every item, as the load is done once.
func (r *rules) used(files []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.read == nil {
		r.read = files
	}
}

// LoadRevisionHarness reads the harness config the git revision rev holds,
// for the checkout co: under check --rules-from the policy is the base
// branch's, while the spec directory it names is read in the checkout.
// Its File names it as git would ("origin/main:.the-loop/harness-config.yaml").
// No config in the revision means the defaults, as for a checkout; a name
// that is there in another form than a regular file (a link, a submodule)
// is a *graph.ConfigError, never "no config".
func LoadRevisionHarness(co *repo.Checkout, rev *repo.Revision) (*HarnessConfig, error) {
	for _, name := range HarnessConfigFiles {
		rel := ConfigDir + "/" + name
		file := rev.Abs(rel)
		fi, err := rev.Stat(rel)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case errors.Is(err, repo.ErrLink):
			return nil, &graph.ConfigError{File: file, Msg: "is a symbolic link; want a regular file (or no file, for the defaults)"}
		case err != nil:
			return nil, &graph.ConfigError{File: file, Msg: "cannot be inspected", Err: repo.Cause(err)}
		case !fi.Mode().IsRegular():
			return nil, &graph.ConfigError{File: file, Msg: "is not a regular file; want one (or no file, for the defaults)"}
		}
		return readHarness(co, file, file, func(limit int64) ([]byte, error) { return rev.ReadFile(rel, limit) })
	}
	c := DefaultHarnessConfig(co.Root())
	c.co = co
	return c, nil
}

// readLog is a revision read as hook modules, noting which files were.
type readLog struct {
	starlark.Sources
	mu    sync.Mutex
	names []string
}

func (l *readLog) ReadFile(rel string, limit int64) ([]byte, error) {
	l.mu.Lock()
	l.names = append(l.names, rel)
	l.mu.Unlock()
	return l.Sources.ReadFile(rel, limit)
}

// files are the names read; nil for a nil log.
func (l *readLog) files() []string {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.names)
}

// noteGateEdits says, once, which of the gate's own files the checkout
// under review has changed from the revision the rules were read from:
// the change cannot weaken its gate, and its author should hear that
// those edits were not what judged it. The files are the harness config
// under either name, the modules the hooks were read from, and, when a
// base was named, any other gate file the change touches.
func (e *Engine) noteGateEdits() {
	r := e.rules
	if r == nil {
		return
	}
	r.mu.Lock()
	if r.said {
		r.mu.Unlock()
		return
	}
	r.said = true
	files := slices.Clone(r.read)
	r.mu.Unlock()
	for _, name := range HarnessConfigFiles {
		files = append(files, ConfigDir+"/"+name)
	}
	// A module loaded by two others was read once each; compare it once.
	slices.Sort(files)
	files = slices.Compact(files)
	var edited []string
	for _, p := range files {
		if r.differs(p) {
			edited = append(edited, p)
		}
	}
	changed, _ := e.Changes()
	for _, p := range changed {
		if gateFile(p) {
			edited = append(edited, p)
		}
	}
	if len(edited) == 0 {
		return
	}
	slices.Sort(edited)
	edited = slices.Compact(edited)
	e.note(fmt.Sprintf("this change edits the gate's own files (%s); it was judged by the rules of %s, not by its own",
		strings.Join(edited, ", "), r.rev.Name()))
}

// maxCompared bounds a gate file compared byte for byte: past it, a file
// is only as large as no config or module may be, and counts as edited.
const maxCompared = maxConfigBytes + 1

// differs reports whether the checkout's rel is not the revision's: one
// has it and the other has not, or their bytes differ.
func (r *rules) differs(rel string) bool {
	base, baseErr := r.rev.ReadFile(rel, maxCompared)
	head, headErr := r.co.ReadFile(rel, maxCompared)
	switch {
	case errors.Is(baseErr, fs.ErrNotExist) && errors.Is(headErr, fs.ErrNotExist):
		return false
	case baseErr != nil || headErr != nil:
		return true
	}
	return !bytes.Equal(base, head)
}
