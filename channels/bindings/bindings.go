package bindings

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/repo"
)

// File is where the bindings live, relative to the state root.
const File = "sessions/bindings.json"

// lockFile serializes every change to File, across processes.
const lockFile = "sessions/bindings.lock"

// Version is the format of File this build reads and writes.
const Version = 1

// maxFile bounds a read of File: a binding is a few hundred bytes.
const maxFile = 16 << 20

// DefaultLockTimeout is how long a change waits for another process's.
const DefaultLockTimeout = 10 * time.Second

// Binding is one work item bound to the checkout the ingress drives it in,
// to the Slack thread it is discussed in, or to both.
type Binding struct {
	// Ref is the work item, github:OWNER/REPO#N, as it was bound.
	Ref string `json:"ref"`
	// Repo is the checkout: absolute and cleaned. It is "" for a binding
	// that knows only its Slack thread: a reply on the thread can be
	// recorded for the work item, but no graph is read.
	Repo string `json:"repo,omitempty"`
	// BoundAt is when it was bound to its checkout (or, with none, first
	// bound), RFC 3339 UTC.
	BoundAt string `json:"boundAt"`
	// Slack is the thread the work item is discussed in, nil for none. No
	// two bindings share a thread.
	Slack *Thread `json:"slack,omitempty"`
	// Deliver is where a reply heard for the work item is delivered; nil
	// keeps it in the work item's inbox (package channels/deliver).
	Deliver *Target `json:"deliver,omitempty"`
	// Control is the last control command applied to the work item, nil
	// when none has been.
	Control *Control `json:"control,omitempty"`
	// Acted are the ids of the latest comments the ingress acted on for
	// the work item, at most maxActed, oldest first: a signed delivery
	// replayed under a new delivery id is still the same comment.
	Acted []int64 `json:"acted,omitempty"`
}

// maxActed bounds Binding.Acted.
const maxActed = 1000

// HasCheckout reports whether b names a checkout: one that knows only its
// thread has no graph to read or drive.
func (b Binding) HasCheckout() bool { return b.Repo != "" }

// HasActed reports whether the ingress acted on comment id for b.
func (b Binding) HasActed(id int64) bool { return slices.Contains(b.Acted, id) }

// Control is a control command recorded for a work item: what makes a
// start outlive the process that received it, and a stop or pause hold the
// item until someone says otherwise.
type Control struct {
	// Command is one of channels.Commands.
	Command string `json:"command"`
	// Actor is the login that asked for it.
	Actor string `json:"actor,omitempty"`
	// At is when it was applied, RFC 3339 UTC.
	At string `json:"at"`
	// Delivery is the webhook delivery that carried it, "" for none.
	Delivery string `json:"delivery,omitempty"`
	// CommentAt is when the comment that asked for it was written, RFC
	// 3339: a command written before it is stale, and changes nothing.
	CommentAt string `json:"commentAt,omitempty"`
	// CommentID is that comment's id: of two written in the same second,
	// the one with the lower id is the earlier.
	CommentID int64 `json:"commentId,omitempty"`
}

// Precedes reports whether a comment written at at, with id, came before
// the one that asked for c: such a comment was written before c applied,
// and what it asks is stale. A Control that does not say when its comment
// was written precedes nothing.
func (c *Control) Precedes(at time.Time, id int64) bool {
	if c == nil {
		return false
	}
	last, err := time.Parse(time.RFC3339Nano, c.CommentAt)
	if err != nil {
		return false
	}
	at = at.Truncate(time.Second)
	return at.Before(last) || (at.Equal(last) && id <= c.CommentID)
}

// Started reports whether the last control command armed the work item
// (start, resume, contribute or do).
func (b Binding) Started() bool { return b.Control != nil && channels.Arming(b.Control.Command) }

// Command is the last control command recorded, "" for none.
func (b Binding) Command() string {
	if b.Control == nil {
		return ""
	}
	return b.Control.Command
}

// document is File's content: the bindings sorted by key.
type document struct {
	Version  int       `json:"version"`
	Bindings []Binding `json:"bindings"`
}

// Store is the bindings of one state root. Every change takes a lock on
// the file shared by every process and replaces the file atomically (a
// temporary file beside it, synced, renamed over it), so two changes never
// lose one another and a crash leaves the old file or the new one. A file
// that cannot be read as bindings is reported, never overwritten: it may
// hold start records. The zero value is not usable; use Open. A Store is
// safe for concurrent use.
type Store struct {
	root string
	// LockTimeout is how long a change waits for the lock before failing;
	// zero means DefaultLockTimeout.
	LockTimeout time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Open returns the bindings kept under the state root stateRoot (absolute,
// the CLI config's state.root). Nothing is read or created until it is
// used.
func Open(stateRoot string) *Store { return &Store{root: stateRoot} }

// Path is the bindings file.
func (s *Store) Path() string { return filepath.Join(s.root, filepath.FromSlash(File)) }

func (s *Store) now() string {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	return now().UTC().Format(time.RFC3339)
}

// CorruptError is a bindings file that cannot be read as bindings. It is
// left exactly as it is.
type CorruptError struct {
	Path string
	Msg  string
	Err  error
}

func (e *CorruptError) Error() string {
	s := fmt.Sprintf("%s: %s", e.Path, e.Msg)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s + "; it is left as it is: repair it, or move it aside to start with no bindings"
}

func (e *CorruptError) Unwrap() error { return e.Err }

// ErrNotBound is wrapped by Unbind and Update for a work item with no
// binding.
var ErrNotBound = errors.New("not bound")

// ErrBusy is wrapped when another process held the lock for longer than
// the store waits.
var ErrBusy = errors.New("the bindings are being changed by another process")

// PathError is a checkout path that cannot be bound.
type PathError struct {
	Path string
	Msg  string
}

func (e *PathError) Error() string { return fmt.Sprintf("checkout %q: %s", e.Path, e.Msg) }

// CheckoutPath is dir as a binding records it: absolute and cleaned. It
// must be an existing directory.
func CheckoutPath(dir string) (string, error) {
	if strings.TrimSpace(dir) == "" {
		return "", &PathError{Path: dir, Msg: "want the directory of a checkout"}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", &PathError{Path: dir, Msg: err.Error()}
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", &PathError{Path: dir, Msg: "no such directory"}
	case err != nil:
		return "", &PathError{Path: dir, Msg: err.Error()}
	case !fi.IsDir():
		return "", &PathError{Path: dir, Msg: "not a directory"}
	}
	return abs, nil
}

// Change is what Bind or Set did.
type Change struct {
	// Binding is the binding now in force.
	Binding Binding
	// Previous is the binding it replaced, nil when the work item was not
	// bound.
	Previous *Binding
	// Unchanged is set when the binding already said everything asked of
	// it: nothing was written.
	Unchanged bool
}

// Rebound reports whether the change moved the work item from one
// checkout to another, or gave a checkout to one that had none: its
// control record, if it had one, was forgotten.
func (c Change) Rebound() bool {
	return c.Previous != nil && c.Previous.Repo != c.Binding.Repo
}

// Options are what Set changes in a binding. A zero field leaves the
// binding's as it is.
type Options struct {
	// Repo is the checkout, a directory CheckoutPath accepts.
	Repo string
	// Slack is the thread the work item is discussed in.
	Slack *Thread
	// Deliver is where a reply heard for the work item is delivered.
	Deliver *Target
}

// Bind binds ref to the checkout dir (see CheckoutPath): Set with a
// checkout alone.
func (s *Store) Bind(ref channels.Ref, dir string) (Change, error) {
	path, err := CheckoutPath(dir)
	if err != nil {
		return Change{}, err
	}
	return s.Set(ref, Options{Repo: path})
}

// Set binds ref, or changes its binding: what o sets replaces the
// binding's, and the rest is kept, its control record and acted comments
// included. Setting what the binding already says changes nothing and
// writes nothing (Change.Unchanged).
//
// A new binding needs a checkout or a Slack thread, else the error wraps
// ErrNotBound. Another checkout (or a first one) forgets the control
// record and restamps BoundAt: a start was given for the checkout the
// binding named, so the new one waits for its own. The acted comments are
// kept whatever changes, so that a comment replayed after a rebind is not
// acted on a second time. A thread bound to another work item is refused
// with a *ThreadTakenError naming it; another thread for this work item
// frees the one it had.
//
// o is checked before anything is read: a checkout that is not a directory
// is a *PathError, a thread not in Slack's shape a *ThreadError, a target
// that cannot be delivered to a *TargetError.
func (s *Store) Set(ref channels.Ref, o Options) (Change, error) {
	var path string
	if o.Repo != "" {
		var err error
		if path, err = CheckoutPath(o.Repo); err != nil {
			return Change{}, err
		}
	}
	if o.Slack != nil {
		if err := o.Slack.Validate(); err != nil {
			return Change{}, err
		}
	}
	if o.Deliver != nil {
		if err := o.Deliver.Validate(); err != nil {
			return Change{}, err
		}
	}
	var ch Change
	err := s.change(func(d *document) (bool, error) {
		i, bound := find(d, ref)
		if o.Slack != nil {
			if j, ok := findThread(d, *o.Slack); ok && j != i {
				return false, &ThreadTakenError{Thread: *o.Slack, Ref: d.Bindings[j].Ref}
			}
		}
		var b Binding
		if bound {
			prev := d.Bindings[i]
			ch.Previous = &prev
			b = prev
		} else {
			if path == "" && o.Slack == nil {
				return false, fmt.Errorf("%s: %w: bind it to a checkout or a Slack thread first", ref, ErrNotBound)
			}
			b = Binding{Ref: ref.String(), BoundAt: s.now()}
		}
		if path != "" && path != b.Repo {
			b.Ref, b.Repo, b.BoundAt, b.Control = ref.String(), path, s.now(), nil
		}
		if o.Slack != nil && !sameThread(b.Slack, o.Slack) {
			t := *o.Slack
			b.Slack = &t
		}
		if o.Deliver != nil && !sameTarget(b.Deliver, o.Deliver) {
			t := Target{URL: o.Deliver.URL, Command: slices.Clone(o.Deliver.Command)}
			b.Deliver = &t
		}
		ch.Binding = b
		if bound && b.Repo == ch.Previous.Repo && sameThread(b.Slack, ch.Previous.Slack) && sameTarget(b.Deliver, ch.Previous.Deliver) {
			ch.Unchanged = true
			return false, nil
		}
		if bound {
			d.Bindings[i] = b
		} else {
			d.Bindings = append(d.Bindings, b)
		}
		return true, nil
	})
	if err != nil {
		return Change{}, err
	}
	return ch, nil
}

func sameThread(a, b *Thread) bool { return a == b || (a != nil && b != nil && *a == *b) }

func sameTarget(a, b *Target) bool {
	return a == b || (a != nil && b != nil && a.URL == b.URL && slices.Equal(a.Command, b.Command))
}

// Unbind forgets ref's binding, control record and all, and returns it.
func (s *Store) Unbind(ref channels.Ref) (Binding, error) {
	var gone Binding
	err := s.change(func(d *document) (bool, error) {
		i, ok := find(d, ref)
		if !ok {
			return false, fmt.Errorf("%s: %w", ref, ErrNotBound)
		}
		gone = d.Bindings[i]
		d.Bindings = slices.Delete(d.Bindings, i, i+1)
		return true, nil
	})
	return gone, err
}

// Record sets ref's control record to c, stamped now when c.At is "", and
// returns the binding as written.
func (s *Store) Record(ref channels.Ref, c Control) (Binding, error) {
	if c.At == "" {
		c.At = s.now()
	}
	var b Binding
	err := s.change(func(d *document) (bool, error) {
		i, ok := find(d, ref)
		if !ok {
			return false, fmt.Errorf("%s: %w", ref, ErrNotBound)
		}
		d.Bindings[i].Control = &c
		b = d.Bindings[i]
		return true, nil
	})
	return b, err
}

// ClearControl forgets ref's control record, as the end of the work item
// does, and returns the binding as written: a work item reopened starts
// from a clean slate, not from the start or stop it was last given. The
// comments acted on stay recorded.
func (s *Store) ClearControl(ref channels.Ref) (Binding, error) {
	var b Binding
	err := s.change(func(d *document) (bool, error) {
		i, ok := find(d, ref)
		if !ok {
			return false, fmt.Errorf("%s: %w", ref, ErrNotBound)
		}
		changed := d.Bindings[i].Control != nil
		d.Bindings[i].Control = nil
		b = d.Bindings[i]
		return changed, nil
	})
	return b, err
}

// Acted records that the ingress acted on comment id for ref's work item.
func (s *Store) Acted(ref channels.Ref, id int64) error {
	return s.change(func(d *document) (bool, error) {
		i, ok := find(d, ref)
		if !ok {
			return false, fmt.Errorf("%s: %w", ref, ErrNotBound)
		}
		b := &d.Bindings[i]
		if b.HasActed(id) {
			return false, nil
		}
		b.Acted = append(b.Acted, id)
		if over := len(b.Acted) - maxActed; over > 0 {
			b.Acted = slices.Delete(b.Acted, 0, over)
		}
		return true, nil
	})
}

// Lookup returns ref's binding; ok is false when it is not bound.
func (s *Store) Lookup(ref channels.Ref) (b Binding, ok bool, err error) {
	d, err := s.read()
	if err != nil {
		return Binding{}, false, err
	}
	i, ok := find(d, ref)
	if !ok {
		return Binding{}, false, nil
	}
	return d.Bindings[i], true, nil
}

// ByThread returns the binding of the work item discussed in the Slack
// thread ts of channel; ok is false when no work item is bound to it. The
// thread is matched as Slack writes it, exactly.
func (s *Store) ByThread(channel, ts string) (b Binding, ok bool, err error) {
	d, err := s.read()
	if err != nil {
		return Binding{}, false, err
	}
	i, ok := findThread(d, Thread{Channel: channel, TS: ts})
	if !ok {
		return Binding{}, false, nil
	}
	return d.Bindings[i], true, nil
}

// List returns every binding, sorted by work item.
func (s *Store) List() ([]Binding, error) {
	d, err := s.read()
	if err != nil {
		return nil, err
	}
	return d.Bindings, nil
}

// find is the index of ref's binding.
func find(d *document, ref channels.Ref) (int, bool) {
	key := ref.Key()
	for i, b := range d.Bindings {
		if r, err := channels.ParseRef(b.Ref); err == nil && r.Key() == key {
			return i, true
		}
	}
	return -1, false
}

// findThread is the index of the binding of thread t.
func findThread(d *document, t Thread) (int, bool) {
	for i, b := range d.Bindings {
		if b.Slack != nil && *b.Slack == t {
			return i, true
		}
	}
	return -1, false
}

// read reads the file without the lock: a reader sees the old file or the
// new one, never a torn one, since every write replaces it whole.
func (s *Store) read() (*document, error) {
	if _, err := os.Stat(s.root); errors.Is(err, fs.ErrNotExist) {
		return &document{Version: Version}, nil
	}
	co, err := repo.Open(s.root)
	if err != nil {
		return nil, fmt.Errorf("bindings: %w", err)
	}
	defer co.Close()
	return s.load(co)
}

func (s *Store) load(co *repo.Checkout) (*document, error) {
	data, err := co.ReadFile(File, maxFile)
	if errors.Is(err, fs.ErrNotExist) {
		return &document{Version: Version}, nil
	}
	if err != nil {
		return nil, &CorruptError{Path: s.Path(), Msg: "cannot be read", Err: repo.Cause(err)}
	}
	return decode(s.Path(), data)
}

// decode reads a bindings file strictly: an unknown key, a ref, path,
// thread or target that does not parse, a binding with neither checkout
// nor thread, or the same work item or thread twice is corruption, not
// something to guess around. A file written before threads and targets
// existed reads as it always did.
func decode(path string, data []byte) (*document, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var d document
	if err := dec.Decode(&d); err != nil {
		return nil, &CorruptError{Path: path, Msg: "not a bindings file", Err: err}
	}
	if dec.More() {
		return nil, &CorruptError{Path: path, Msg: "not a bindings file: more than one JSON value"}
	}
	switch {
	case d.Version > Version:
		return nil, &CorruptError{Path: path, Msg: fmt.Sprintf("got version %d, want %d: it was written by a newer the-loop", d.Version, Version)}
	case d.Version != Version:
		return nil, &CorruptError{Path: path, Msg: fmt.Sprintf("got version %d, want %d", d.Version, Version)}
	}
	seen := map[string]bool{}
	threads := map[Thread]string{}
	for i, b := range d.Bindings {
		r, err := channels.ParseRef(b.Ref)
		if err != nil {
			return nil, &CorruptError{Path: path, Msg: fmt.Sprintf("bindings[%d]", i), Err: err}
		}
		if seen[r.Key()] {
			return nil, &CorruptError{Path: path, Msg: fmt.Sprintf("bindings[%d]: %s is bound twice", i, b.Ref)}
		}
		seen[r.Key()] = true
		switch {
		case b.Repo == "" && b.Slack == nil:
			return nil, &CorruptError{Path: path, Msg: fmt.Sprintf("bindings[%d]: got neither a checkout nor a Slack thread, want at least one", i)}
		case b.Repo != "" && (!filepath.IsAbs(b.Repo) || filepath.Clean(b.Repo) != b.Repo):
			return nil, &CorruptError{Path: path, Msg: fmt.Sprintf("bindings[%d].repo: got %q, want an absolute, clean path", i, b.Repo)}
		}
		if b.Slack != nil {
			if err := b.Slack.Validate(); err != nil {
				return nil, &CorruptError{Path: path, Msg: fmt.Sprintf("bindings[%d].slack", i), Err: err}
			}
			if other, ok := threads[*b.Slack]; ok {
				return nil, &CorruptError{Path: path, Msg: fmt.Sprintf("bindings[%d].slack: the thread %s is bound to both %s and %s", i, b.Slack, other, b.Ref)}
			}
			threads[*b.Slack] = b.Ref
		}
		if b.Deliver != nil {
			if err := b.Deliver.Validate(); err != nil {
				return nil, &CorruptError{Path: path, Msg: fmt.Sprintf("bindings[%d].deliver", i), Err: err}
			}
		}
		if b.Control != nil && !slices.Contains(channels.Commands, b.Control.Command) {
			return nil, &CorruptError{Path: path, Msg: fmt.Sprintf("bindings[%d].control.command: got %q, want one of %s", i, b.Control.Command, strings.Join(channels.Commands, ", "))}
		}
	}
	if d.Bindings == nil {
		d.Bindings = []Binding{}
	}
	return &d, nil
}

// change applies fn to the bindings under the lock, and writes them when
// fn says it changed them.
func (s *Store) change(fn func(*document) (bool, error)) error {
	// The state root is the operator's: nobody else should read who works
	// on what, or from where.
	if err := os.MkdirAll(s.root, 0o700); err != nil {
		return fmt.Errorf("bindings: %w", err)
	}
	co, err := repo.Open(s.root)
	if err != nil {
		return fmt.Errorf("bindings: %w", err)
	}
	defer co.Close()
	lock, err := co.Locker(lockFile)
	if err != nil {
		return fmt.Errorf("bindings: %w", err)
	}
	if err := s.acquire(lock); err != nil {
		return err
	}
	defer lock.Unlock()
	d, err := s.load(co)
	if err != nil {
		return err
	}
	changed, err := fn(d)
	if err != nil || !changed {
		return err
	}
	slices.SortFunc(d.Bindings, compareBindings)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		return fmt.Errorf("bindings: %w", err)
	}
	// load refuses a file over maxFile: one would leave no binding
	// readable, so the change that would make it is refused instead.
	if err := co.WriteFileWithin(File, buf.Bytes(), 0o600, maxFile); err != nil {
		return fmt.Errorf("bindings: %w", err)
	}
	return nil
}

// compareBindings orders bindings by repository, then by number: every
// ref in a document that loaded parses.
func compareBindings(a, b Binding) int {
	ra, _ := channels.ParseRef(a.Ref)
	rb, _ := channels.ParseRef(b.Ref)
	return cmp.Or(strings.Compare(strings.ToLower(ra.Repository()), strings.ToLower(rb.Repository())), cmp.Compare(ra.Number, rb.Number))
}

// acquire waits for the lock, polling, up to the store's timeout.
func (s *Store) acquire(lock *repo.Lock) error {
	timeout := s.LockTimeout
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	deadline := time.Now().Add(timeout)
	wait := time.Millisecond
	for {
		ok, err := lock.TryLock()
		if err != nil {
			return fmt.Errorf("bindings: %w", err)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %w (waited %s)", s.Path(), ErrBusy, timeout)
		}
		time.Sleep(wait)
		wait = min(2*wait, 50*time.Millisecond)
	}
}
