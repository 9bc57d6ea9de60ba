package route

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/the-loop/the-loop/builtins"
	"github.com/the-loop/the-loop/channels"
)

// identity is a Config.Identity that answers login, or err, and counts
// the questions.
type identity struct {
	mu    sync.Mutex
	login string
	err   error
	asked int
}

func (i *identity) answer(context.Context) (string, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.asked++
	return i.login, i.err
}

func (i *identity) set(login string, err error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.login, i.err = login, err
}

// withIdentity rebuilds e's router to know the login it posts with.
func (e *env) withIdentity(id *identity) {
	e.t.Helper()
	r, err := New(Config{CLI: e.router.cli, Integration: e.in, Events: e.events, Identity: id.answer})
	if err != nil {
		e.t.Fatal(err)
	}
	e.router = r
}

// The operator, alice, is on the allowlist so that Slack answers land,
// and the-loop posts with her token: her login's unmarked comment is
// the-loop's own, and answers nothing.
func TestACommentByTheLoginTheLoopPostsWithIsItsOwn(t *testing.T) {
	relay := builtins.StampEnvelope("💬 **the-loop** recorded an answer to the open gate from `JC` (`slack:U0456`):\n\n> approved",
		builtins.Envelope{Type: "gate.feedback", Source: "slack", Actor: map[string]string{"github": "jc1993", "slack": "U0456"}})
	for _, tc := range []struct {
		name  string
		login string
		d     *delivery
		want  string // a drop reason, or "design" for a move there
	}{
		{"an unmarked audit comment", "alice", newComment("d1", "acme/shop", 12, "alice", "forced transition requirements-approval -> design by alice. Reason: approved at the review."), channels.DropSelfAuthored},
		{"logins are case-insensitive", "Alice", newComment("d2", "acme/shop", 12, "alice", "approved"), channels.DropSelfAuthored},
		{"an envelope that is no relay", "alice", newComment("d3", "acme/shop", 12, "alice", builtins.StampEnvelope("> approved", builtins.Envelope{Type: "phase-approval-pending", Source: "slack"})), channels.DropSelfAuthored},
		{"a relay of a person's words", "alice", newComment("d4", "acme/shop", 12, "alice", relay), "design"},
		{"another authorized person", "alice", newComment("d5", "acme/shop", 12, "jc1993", "approved"), "design"},
		{"a credential that is no user's", "", newComment("d6", "acme/shop", 12, "alice", "approved"), "design"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "routing:\n  authorizedUsers: [alice, {github: jc1993, slack: U0456}]\n")
			e.bind("github:acme/shop#12", channels.CommandStart)
			id := &identity{login: tc.login}
			e.withIdentity(id)
			before := e.read("docs/specs/issue-12/graph-state.json")
			out, err := e.process(tc.d.build())
			if tc.want != "design" {
				wantDropped(t, out, err, tc.want)
				if out.Fields["why"] != "identity" {
					t.Errorf("why %v, want identity", out.Fields["why"])
				}
				if after := e.read("docs/specs/issue-12/graph-state.json"); after != before {
					t.Errorf("the-loop's own comment changed the state:\n%s", after)
				}
				if got := e.in.reactions(); len(got) != 0 {
					t.Errorf("the-loop reacted to its own comment: %v", got)
				}
				return
			}
			if fields := wantRouted(t, out, err); fields["to"] != "design" {
				t.Errorf("got %v, want the gate answered", fields)
			}
		})
	}
}

func TestACommentThatCannotBeToldFromTheLoopsOwnIsKeptForARetry(t *testing.T) {
	e := newEnv(t, "routing:\n  authorizedUsers: [alice]\n")
	e.bind("github:acme/shop#12", channels.CommandStart)
	id := &identity{err: errors.New("github get-user: GET /user: 502 Bad Gateway")}
	e.withIdentity(id)
	before := e.read("docs/specs/issue-12/graph-state.json")

	// alice's "approved" may be the-loop's echo or alice's word: a fault.
	out, err := e.process(newComment("d1", "acme/shop", 12, "alice", "approved").build())
	if err == nil {
		t.Fatalf("got %+v, want an error: the comment cannot be judged", out)
	}
	if after := e.read("docs/specs/issue-12/graph-state.json"); after != before {
		t.Errorf("an unjudged comment changed the state:\n%s", after)
	}
	// A marked comment and a stranger's need no identity to judge.
	out, err = e.process(newComment("d2", "acme/shop", 12, "alice", "approved\n"+marker).build())
	wantDropped(t, out, err, channels.DropSelfAuthored)
	out, err = e.process(newComment("d3", "acme/shop", 12, "mallory", "approved").build())
	wantDropped(t, out, err, channels.DropUnauthorizedActor)

	// GitHub answers again: the login is asked again, and the echo known.
	id.set("alice", nil)
	asked := id.asked
	out, err = e.process(newComment("d1", "acme/shop", 12, "alice", "approved").build())
	wantDropped(t, out, err, channels.DropSelfAuthored)
	if id.asked == asked {
		t.Error("the login was not asked again after a failure")
	}
	if after := e.read("docs/specs/issue-12/graph-state.json"); after != before {
		t.Errorf("the echo changed the state:\n%s", after)
	}
}

func TestTheRouterSaysWhoTheLoopPostsAs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		login string
		err   error
		want  string
	}{
		{"an authorized login", "alice", nil, "which routing.authorizedUsers names"},
		{"another login", "loop-bot", nil, "the-loop posts on GitHub as loop-bot"},
		{"no user", "", nil, "no user's"},
		{"not learned", "", errors.New("github get-user: GET /user: 502 Bad Gateway"), "asked again with the next comment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "")
			var log syncBuffer
			id := &identity{login: tc.login, err: tc.err}
			if _, err := New(Config{CLI: e.router.cli, Integration: e.in, Identity: id.answer, Log: slog.New(slog.NewTextHandler(&log, nil))}); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for !strings.Contains(log.String(), tc.want) {
				if time.Now().After(deadline) {
					t.Fatalf("the router did not log %q:\n%s", tc.want, log.String())
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
}

// syncBuffer is a buffer safe for a logger's goroutine and the test's.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
