package graph

import (
	"errors"
	"fmt"
	"strings"
)

// ConfigError is a configuration that cannot be used: a graph, a harness
// config, a hook declaration. It names where the fault is so the CLI can print
// "file:line: loop node key: message" and tests can assert with errors.As.
// Zero fields are simply omitted from the rendering.
//
// A fault inside a repository's Starlark code has a column: it renders as
// a compiler's diagnostic, "file:line:col: message". Key, which names the
// config key that declared the code, and Err, whose text Msg already
// carries, are then left out of the rendering but kept for errors.As.
type ConfigError struct {
	File string
	Line int
	Col  int

	Loop string
	Node string
	Key  string
	Msg  string
	// Err is the underlying cause, when there is one.
	Err error
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
			if e.Col > 0 {
				fmt.Fprintf(&b, ":%d", e.Col)
			}
		}
		b.WriteString(": ")
	}
	if e.Col > 0 {
		b.WriteString(e.Msg)
		return b.String()
	}
	var where []string
	if e.Loop != "" {
		where = append(where, "loop "+e.Loop)
	}
	if e.Node != "" {
		where = append(where, "node "+e.Node)
	}
	if e.Key != "" {
		where = append(where, "key "+e.Key)
	}
	if len(where) > 0 {
		b.WriteString(strings.Join(where, ", "))
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Err != nil && !strings.Contains(e.Msg, e.Err.Error()) {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *ConfigError) Unwrap() error { return e.Err }

// ErrBusy is returned when another process holds a work item's state lock.
var ErrBusy = errors.New("busy: another the-loop process holds the graph-state lock")

// ErrUnknownNode is wrapped by errors naming a node the loop does not declare.
var ErrUnknownNode = errors.New("unknown node")

// ErrNotStarted is wrapped when a verb needs an item that never entered the graph.
var ErrNotStarted = errors.New("work item has not entered the graph")

// StateError is a graph-state file that cannot be trusted: unreadable,
// hand-corrupted, or written by a newer version. The file is left as it is.
type StateError struct {
	Path string
	Msg  string
	Err  error
}

func (e *StateError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Path, e.Msg, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Msg)
}

func (e *StateError) Unwrap() error { return e.Err }
