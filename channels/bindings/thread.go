package bindings

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/the-loop/the-loop/internal/lazyregexp"
)

// Thread is the Slack thread a work item is discussed in: a reply in it
// reaches the work item. A thread belongs to one work item at a time.
type Thread struct {
	// Channel is Slack's id of the channel the thread is in, C0123ABC.
	Channel string `json:"channel"`
	// TS is the timestamp of the thread's first message, Slack's
	// thread_ts, 1712345678.000100. Slack compares it as a string, and so
	// does the store: it is kept as written.
	TS string `json:"threadTs"`
}

// Slack's shapes, strictly: an id or timestamp in any other shape is not
// one Slack sent, and a loose match would let two spellings of one thread
// be bound to two work items.
var (
	slackChannel = lazyregexp.New(`^[A-Z0-9]{2,32}$`)
	slackTS      = lazyregexp.New(`^[0-9]{1,12}\.[0-9]{1,9}$`)
)

// Want-clauses of a ThreadError: the shape Slack writes.
const (
	wantChannel = "a Slack channel id: 2 to 32 capital letters and digits, like C0123ABC"
	wantTS      = "a Slack thread timestamp: digits, a dot, digits, like 1712345678.000100"
	wantThread  = "CHANNEL:THREAD_TS, like C0123ABC:1712345678.000100"
)

// ThreadError is a Slack thread that does not have Slack's shape.
type ThreadError struct {
	// Value is the thread as given.
	Value string
	// Msg says what is wrong, as "got X, want Y".
	Msg string
}

func (e *ThreadError) Error() string { return fmt.Sprintf("slack thread %q: %s", e.Value, e.Msg) }

// ParseThread reads a thread written CHANNEL:THREAD_TS, as String writes
// it.
func ParseThread(s string) (Thread, error) {
	channel, ts, ok := strings.Cut(s, ":")
	if !ok {
		return Thread{}, &ThreadError{Value: s, Msg: "want " + wantThread}
	}
	t := Thread{Channel: channel, TS: ts}
	if err := t.Validate(); err != nil {
		return Thread{}, err
	}
	return t, nil
}

// Validate reports a *ThreadError when t is not in Slack's shape.
func (t Thread) Validate() error {
	switch {
	case !slackChannel.MatchString(t.Channel):
		return &ThreadError{Value: t.String(), Msg: fmt.Sprintf("got channel %q, want %s", t.Channel, wantChannel)}
	case !slackTS.MatchString(t.TS):
		return &ThreadError{Value: t.String(), Msg: fmt.Sprintf("got thread timestamp %q, want %s", t.TS, wantTS)}
	}
	return nil
}

// String is the thread as ParseThread reads it: CHANNEL:THREAD_TS.
func (t Thread) String() string { return t.Channel + ":" + t.TS }

// ThreadTakenError refuses to bind a thread already bound to another work
// item: a reply in it would reach one of them, and which would be a guess.
type ThreadTakenError struct {
	Thread Thread
	// Ref is the work item the thread is bound to.
	Ref string
}

func (e *ThreadTakenError) Error() string {
	return fmt.Sprintf("slack thread %s is already bound to %s: unbind it there first", e.Thread, e.Ref)
}

// Target is where a reply heard for a work item is delivered: a URL it is
// POSTed to, or a command it is piped to. Exactly one is set. It is the
// operator's configuration, kept in the state root and never read from a
// checkout, which is why running its command is allowed at all (package
// channels/deliver runs it, never through a shell).
type Target struct {
	// URL is an absolute http or https URL.
	URL string `json:"url,omitempty"`
	// Command is the argv of a program; Command[0] is looked up in PATH
	// when it holds no slash.
	Command []string `json:"command,omitempty"`
}

// Kinds of Target, as Kind names them.
const (
	TargetURL     = "url"
	TargetCommand = "command"
)

// Kind is TargetURL or TargetCommand, "" for a target that names neither.
func (t Target) Kind() string {
	switch {
	case t.URL != "" && len(t.Command) == 0:
		return TargetURL
	case t.URL == "" && len(t.Command) > 0:
		return TargetCommand
	}
	return ""
}

// String is the target for a person: the URL, or the argv joined by
// spaces.
func (t Target) String() string {
	if t.URL != "" {
		return t.URL
	}
	return strings.Join(t.Command, " ")
}

// TargetError is a Target that cannot be delivered to.
type TargetError struct {
	// Kind is the kind of target meant: TargetURL, TargetCommand, or ""
	// when it names neither or both.
	Kind string
	// Msg says what is wrong, as "got X, want Y".
	Msg string
}

func (e *TargetError) Error() string {
	if e.Kind == "" {
		return "delivery target: " + e.Msg
	}
	return fmt.Sprintf("delivery %s: %s", e.Kind, e.Msg)
}

// Validate reports a *TargetError when t names neither a URL nor a
// command, or both, or one that cannot be used.
func (t Target) Validate() error {
	switch {
	case t.URL != "" && len(t.Command) > 0:
		return &TargetError{Msg: "got a URL and a command, want one of them"}
	case t.URL != "":
		u, err := url.Parse(t.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
			return &TargetError{Kind: TargetURL, Msg: fmt.Sprintf("got %q, want an absolute http or https URL", t.URL)}
		}
	case len(t.Command) > 0:
		if t.Command[0] == "" {
			return &TargetError{Kind: TargetCommand, Msg: "got an empty program name, want the program to run first"}
		}
		for _, a := range t.Command {
			if strings.ContainsRune(a, 0) {
				return &TargetError{Kind: TargetCommand, Msg: fmt.Sprintf("got %q, want arguments without a NUL byte", a)}
			}
		}
	default:
		return &TargetError{Msg: "got neither a URL nor a command, want one of them"}
	}
	return nil
}
