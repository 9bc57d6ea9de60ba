package policy

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/the-loop/the-loop/repo"
)

// gitTimeout bounds each git operation a verb runs: a checkout whose git
// hangs (a lock held, a network file system) fails the gate rather than
// holding it.
const gitTimeout = 30 * time.Second

// Changes is ctx.changed, for every hook this engine runs: the paths a
// change makes against Options.Base (a git revision), committed since the
// merge base of it and HEAD, staged, unstaged and untracked (see
// repo.Checkout.Changes); nil when no base was named, and [] when nothing
// changed. It is the one place check reads anything but the repository's
// files: a few read-only git processes, started by Open and waited for
// here. A base git cannot use is a *RevisionError.
func (e *Engine) Changes() ([]string, error) {
	c := e.base
	if c == nil {
		return nil, nil
	}
	<-c.done
	if c.err != nil {
		return nil, &RevisionError{Use: ForBase, Rev: c.base, Err: c.err}
	}
	return c.paths, nil
}

// changes are the paths changed against base, computed in the background:
// the git processes take longer than everything else a check of a few
// items does, so they start as soon as the checkout is known.
type changes struct {
	base  string
	done  chan struct{}
	quit  context.CancelFunc
	paths []string
	err   error
}

func startChanges(co *repo.Checkout, base string) *changes {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	c := &changes{base: base, done: make(chan struct{}), quit: cancel}
	go func() {
		defer close(c.done)
		defer cancel()
		paths, err := co.Changes(ctx, base)
		// Nothing changed since a base is an empty list, not None.
		c.paths, c.err = append([]string{}, paths...), err
	}()
	return c
}

// stop ends the git processes of changes nobody will wait for.
func (c *changes) stop() {
	if c != nil {
		c.quit()
	}
}

// What a revision the engine is given is for (RevisionError.Use).
const (
	// ForBase is the revision changes are counted from (Options.Base).
	ForBase = "base"
	// ForRules is the revision the gate's own files are read from
	// (Options.RulesFrom).
	ForRules = "rules"
)

// RevisionError is a git revision the engine was given and could not use.
type RevisionError struct {
	Use string // ForBase or ForRules
	Rev string
	Err error
}

func (e *RevisionError) Error() string { return fmt.Sprintf("%s revision %s: %v", e.Use, e.Rev, e.Err) }
func (e *RevisionError) Unwrap() error { return e.Err }

// ErrNoBase is returned by ChangedItems when no base revision was given:
// what changed is counted from one.
var ErrNoBase = errors.New("no base revision to count changes from")

// Selection is which work items a change touches.
type Selection struct {
	// Items are the work items to check, sorted.
	Items []string
	// All is set when the change touches the gate itself, and so every
	// item; Why then names the first file that made it so.
	All bool
	Why string
	// Linked are the work items the pull request belongs to (see
	// ChangedItemsFor), and Unlinked is set when it names none.
	Linked   []Link
	Unlinked bool
}

// ChangedItems is the work items whose spec folder the change since
// Options.Base touches (see Changes). A change to the gate's own files (anything under
// .the-loop/, or a .star file anywhere) may change the verdict of every
// item, so it selects them all. A folder the change deleted is no longer
// an item and is not selected, unless the rules come from a revision that
// holds a state for it (see Items). What it chose is said as a note.
func (e *Engine) ChangedItems() (Selection, error) {
	s, err := e.changedSelection()
	if err == nil {
		e.noteChanged(s)
	}
	return s, err
}

// changedSelection is the items the change since Options.Base touches,
// unnoted; ErrNoBase when no base was named.
func (e *Engine) changedSelection() (Selection, error) {
	changed, err := e.Changes()
	switch {
	case err != nil:
		return Selection{}, err
	case changed == nil:
		return Selection{}, ErrNoBase
	}
	return e.changedItems(changed)
}

// noteChanged says what a change selected.
func (e *Engine) noteChanged(s Selection) {
	switch {
	case s.All:
		e.note(fmt.Sprintf("checking every work item: the change touches %s, one of the gate's own files", s.Why))
	case len(s.Items) == 0:
		e.note(fmt.Sprintf("no work item's spec folder changed since %s; nothing to check", e.base.base))
	default:
		e.note(fmt.Sprintf("checking the %d work item(s) whose spec folder changed since %s", len(s.Items), e.base.base))
	}
}

func (e *Engine) changedItems(changed []string) (Selection, error) {
	for _, p := range changed {
		if gateFile(p) {
			items, err := e.Items()
			return Selection{Items: items, All: true, Why: p}, err
		}
	}
	spec := e.SpecDirRel()
	var named []string
	for _, p := range changed {
		rest, ok := strings.CutPrefix(p, spec+"/")
		if spec == "." {
			rest, ok = p, true
		}
		if id, _, inFolder := strings.Cut(rest, "/"); ok && inFolder && repo.ValidID(id) {
			named = append(named, id)
		}
	}
	slices.Sort(named)
	// Each folder is looked at once, however many of its files changed.
	var ids []string
	for _, id := range slices.Compact(named) {
		if _, err := e.Checkout.Item(id); err == nil {
			ids = append(ids, id)
		}
	}
	// Under RulesFrom an item the revision has and the change removed is
	// still judged (lineage.go), whatever the paths say.
	if removed := e.removedItems(); len(removed) > 0 {
		ids = withRemoved(ids, removed)
	}
	return Selection{Items: ids}, nil
}

// gateFile reports whether p is one of the gate's own files: the harness
// config and whatever sits beside it, or a Starlark rule.
func gateFile(p string) bool {
	return p == ConfigDir || strings.HasPrefix(p, ConfigDir+"/") || path.Ext(p) == ".star"
}
