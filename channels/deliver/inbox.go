package deliver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/repo"
)

// InboxDir is where the inboxes live, relative to the state root.
const InboxDir = "sessions/inbox"

// MaxInbox bounds an inbox ReadInbox reads: some tens of thousands of
// messages, far more than a work item's thread holds.
const MaxInbox = 64 << 20

// LockTimeout is how long an append or a read waits for another
// process's append.
const LockTimeout = 10 * time.Second

// maxName bounds an inbox's readable file name, well under the 255 bytes a
// file system allows: GitHub's own names (39 and 100 characters) always
// fit, and only a ref GitHub could not have is named by its hash.
const maxName = 200

// InboxFile is the inbox of ref's work item, relative to the state root
// and slash-separated: sessions/inbox/OWNER+REPO+N.jsonl, lower case as
// ref.Key is. No two work items share one: an owner or repository name
// never holds a "+", so the name reads back as one ref only, and the rare
// name too long to be a file's is the SHA-256 of ref.Key instead, which
// holds no "+".
func InboxFile(ref channels.Ref) string {
	name := strings.ToLower(ref.Owner) + "+" + strings.ToLower(ref.Repo) + "+" + strconv.Itoa(ref.Number)
	if len(name) > maxName {
		sum := sha256.Sum256([]byte(ref.Key()))
		name = "sha256-" + hex.EncodeToString(sum[:])
	}
	return InboxDir + "/" + name + ".jsonl"
}

// InboxPath is the inbox of ref's work item under the state root
// stateRoot.
func InboxPath(stateRoot string, ref channels.Ref) string {
	return filepath.Join(stateRoot, filepath.FromSlash(InboxFile(ref)))
}

// lockOf is the lock file every appender of the inbox rel takes.
func lockOf(rel string) string { return strings.TrimSuffix(rel, ".jsonl") + ".lock" }

// InboxError is an inbox that cannot be read as messages. It is left as
// it is.
type InboxError struct {
	Path string
	// Line is the damaged line, counted from 1; 0 when the file as a whole
	// is at fault.
	Line int
	Msg  string
	Err  error
}

func (e *InboxError) Error() string {
	s := "inbox " + e.Path
	if e.Line > 0 {
		s += ":" + strconv.Itoa(e.Line)
	}
	s += ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *InboxError) Unwrap() error { return e.Err }

// appendInbox appends line to ref's inbox under the lock every appender
// takes, and returns the inbox's path.
func appendInbox(ctx context.Context, stateRoot string, ref channels.Ref, line []byte) (string, error) {
	path := InboxPath(stateRoot, ref)
	// The state root is the operator's: nobody else should read what is
	// said about a work item.
	if err := os.MkdirAll(stateRoot, 0o700); err != nil {
		return "", fmt.Errorf("inbox: %w", err)
	}
	co, err := repo.Open(stateRoot)
	if err != nil {
		return "", fmt.Errorf("inbox: %w", err)
	}
	defer co.Close()
	rel := InboxFile(ref)
	unlock, err := lock(ctx, co, rel)
	if err != nil {
		return "", err
	}
	defer unlock()
	// ReadInbox refuses an inbox over MaxInbox, so nothing takes one past it.
	if err := co.AppendFileWithin(rel, line, 0o600, MaxInbox); err != nil {
		var large *repo.TooLargeError
		if errors.As(err, &large) {
			return "", &InboxError{Path: path, Msg: fmt.Sprintf("full: the message would take it to %d bytes, over the %d MiB it is read up to; move it aside, and a new one is started", large.Size, MaxInbox>>20)}
		}
		return "", fmt.Errorf("inbox %s: %w", path, repo.Cause(err))
	}
	return path, nil
}

// ReadInbox returns the messages in ref's inbox under the state root
// stateRoot, oldest first; none when it has none. An inbox over MaxInbox,
// a damaged line (not a message, not ref's, not ended by a newline) or
// one that cannot be read is an *InboxError; nothing is skipped.
func ReadInbox(stateRoot string, ref channels.Ref) ([]Message, error) {
	path := InboxPath(stateRoot, ref)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	co, err := repo.Open(stateRoot)
	if err != nil {
		return nil, fmt.Errorf("inbox: %w", err)
	}
	defer co.Close()
	rel := InboxFile(ref)
	// Under the lock, so that an append in progress is read whole or not
	// at all.
	unlock, err := lock(context.Background(), co, rel)
	if err != nil {
		return nil, err
	}
	data, err := co.ReadFile(rel, MaxInbox)
	unlock()
	var large *repo.TooLargeError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.As(err, &large):
		return nil, &InboxError{Path: path, Msg: fmt.Sprintf("%d bytes, over the %d MiB it is read up to; move it aside, and a new one is started", large.Size, MaxInbox>>20)}
	case err != nil:
		return nil, &InboxError{Path: path, Msg: "cannot be read", Err: repo.Cause(err)}
	}
	return parse(path, ref, data)
}

// parse reads the lines of an inbox, each a message for ref.
func parse(path string, ref channels.Ref, data []byte) ([]Message, error) {
	var msgs []Message
	for n := 1; len(data) > 0; n++ {
		line, rest, ok := bytes.Cut(data, []byte("\n"))
		if !ok {
			return nil, &InboxError{Path: path, Line: n, Msg: "not a whole line: it has no newline at its end (a write cut short?)"}
		}
		var m Message
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, &InboxError{Path: path, Line: n, Msg: "not a message", Err: err}
		}
		if r, err := channels.ParseRef(m.Ref); err != nil || r.Key() != ref.Key() {
			return nil, &InboxError{Path: path, Line: n, Msg: fmt.Sprintf("got a message for %q, want one for %s", m.Ref, ref)}
		}
		msgs = append(msgs, m)
		data = rest
	}
	return msgs, nil
}

// ErrBusy is wrapped when another process held an inbox's lock for longer
// than LockTimeout.
var ErrBusy = errors.New("the inbox is being written by another process")

// lock takes the lock of the inbox rel, polling, until LockTimeout or ctx
// ends, and returns its release.
func lock(ctx context.Context, co *repo.Checkout, rel string) (func(), error) {
	l, err := co.Locker(lockOf(rel))
	if err != nil {
		return nil, fmt.Errorf("inbox: %w", err)
	}
	deadline := time.Now().Add(LockTimeout)
	wait := time.Millisecond
	for {
		ok, err := l.TryLock()
		if err != nil {
			return nil, fmt.Errorf("inbox: %w", err)
		}
		if ok {
			return func() { l.Unlock() }, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("inbox %s: %w (waited %s)", co.Abs(rel), ErrBusy, LockTimeout)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("inbox %s: %w", co.Abs(rel), ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}
