package deliver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/the-loop/the-loop/channels"
)

func ref(t *testing.T, s string) channels.Ref {
	t.Helper()
	r, err := channels.ParseRef(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestInboxFileNamesEachWorkItemItsOwnFile(t *testing.T) {
	for _, tc := range []struct {
		ref, want string
	}{
		{"github:acme/shop#12", "sessions/inbox/acme+shop+12.jsonl"},
		{"github:Acme/Shop#12", "sessions/inbox/acme+shop+12.jsonl"},
		{"github:a_b/c#1", "sessions/inbox/a_b+c+1.jsonl"},
		{"github:a/b_c#1", "sessions/inbox/a+b_c+1.jsonl"},
		{"github:a-b/c#1", "sessions/inbox/a-b+c+1.jsonl"},
		{"github:a/b__c#1", "sessions/inbox/a+b__c+1.jsonl"},
		{"github:a/b.1#2", "sessions/inbox/a+b.1+2.jsonl"},
		{"github:a/b#12", "sessions/inbox/a+b+12.jsonl"},
		{"github:a/b1#2", "sessions/inbox/a+b1+2.jsonl"},
	} {
		if got := InboxFile(ref(t, tc.ref)); got != tc.want {
			t.Errorf("InboxFile(%s) = %s, want %s", tc.ref, got, tc.want)
		}
	}
	// The longest ref graph.ParseRepoName lets through names a file of
	// its own; one longer (built by hand, since no ref parses so) is
	// hashed, never cut.
	longest := ref(t, "github:"+strings.Repeat("o", 39)+"/"+strings.Repeat("r", 100)+"#2147483647")
	if name := filepath.Base(InboxFile(longest)); len(name) > 255 || strings.HasPrefix(name, "sha256-") {
		t.Errorf("the longest ref's inbox is %s", name)
	}
	long := channels.Ref{Owner: "acme", Repo: strings.Repeat("r", 300), Number: 1}
	name := filepath.Base(InboxFile(long))
	if !strings.HasPrefix(name, "sha256-") || len(name) > 255 || strings.Contains(name, "+") {
		t.Errorf("a name too long for a file is named %s", name)
	}
	if InboxFile(long) == InboxFile(channels.Ref{Owner: "acme", Repo: strings.Repeat("r", 301), Number: 1}) {
		t.Error("two long refs share an inbox")
	}
}

func TestDeliverWithNoTargetAppendsToTheInbox(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	r := ref(t, "github:acme/shop#12")
	if msgs, err := ReadInbox(state, r); err != nil || msgs != nil {
		t.Fatalf("an inbox never written: %v, %v", msgs, err)
	}
	if _, err := os.Stat(state); !errors.Is(err, os.ErrNotExist) {
		t.Error("reading an inbox created the state root")
	}
	first, second := message(), message()
	second.Text = "second\nline"
	for _, m := range []Message{first, second} {
		res, err := Deliver(context.Background(), state, binding(nil), m)
		if err != nil || res.Target != TargetInbox || res.Inbox != InboxPath(state, r) {
			t.Fatalf("Deliver = %+v, %v", res, err)
		}
	}
	fi, err := os.Stat(InboxPath(state, r))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("inbox %v, %v; want mode 0600: it is the operator's", fi, err)
	}
	data, _ := os.ReadFile(InboxPath(state, r))
	if !strings.HasPrefix(string(data), wantJSON+"\n") || strings.Count(string(data), "\n") != 2 {
		t.Errorf("inbox:\n%s", data)
	}
	msgs, err := ReadInbox(state, ref(t, "github:ACME/shop#12"))
	if err != nil || len(msgs) != 2 || msgs[0].Ref != "github:acme/shop#12" || msgs[1].Text != "second\nline" || !msgs[0].At.Equal(at) {
		t.Errorf("ReadInbox = %+v, %v", msgs, err)
	}
}

func TestConcurrentAppendsAllLandAsWholeLines(t *testing.T) {
	state := t.TempDir()
	const writers, each = 2, 25
	// big enough that a torn or interleaved write would show
	text := strings.Repeat("0123456789", 1000)
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				m := message()
				m.TS = fmt.Sprintf("%d.%d", w, i)
				m.Text = text
				if _, err := Deliver(context.Background(), state, binding(nil), m); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	msgs, err := ReadInbox(state, ref(t, "github:acme/shop#12"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range msgs {
		if m.Text != text {
			t.Errorf("message %s was torn", m.TS)
		}
		seen[m.TS] = true
	}
	if len(msgs) != writers*each || len(seen) != writers*each {
		t.Errorf("%d messages (%d distinct) of %d landed", len(msgs), len(seen), writers*each)
	}
}

func TestReadInboxReportsADamagedLineByItsNumber(t *testing.T) {
	good := wantJSON + "\n"
	for _, tc := range []struct {
		name    string
		content string
		line    int
		says    string
	}{
		{"a line that is not JSON", good + "{\"ref\":\n" + good, 2, "not a message"},
		{"an empty line", good + good + "\n" + good, 3, "not a message"},
		{"a message for another work item", good + strings.Replace(good, "#12", "#13", 1), 2, `got a message for "github:acme/shop#13"`},
		{"a last line cut short", good + good[:40], 2, "not a whole line"},
		{"a bad time", strings.Replace(good, "2026-12-01T20:10:00Z", "today", 1), 1, `not a message: at: got "today", want an RFC 3339 time`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := t.TempDir()
			path := InboxPath(state, ref(t, "github:acme/shop#12"))
			os.MkdirAll(filepath.Dir(path), 0o700)
			os.WriteFile(path, []byte(tc.content), 0o600)
			msgs, err := ReadInbox(state, ref(t, "github:acme/shop#12"))
			var ie *InboxError
			if !errors.As(err, &ie) || ie.Line != tc.line || !strings.Contains(err.Error(), fmt.Sprintf("%s:%d: %s", path, tc.line, tc.says)) {
				t.Errorf("ReadInbox = %v, %v; want an *InboxError at line %d saying %q", len(msgs), err, tc.line, tc.says)
			}
			if data, _ := os.ReadFile(path); string(data) != tc.content {
				t.Error("the damaged inbox was rewritten")
			}
		})
	}
}

func TestReadInboxRefusesAnInboxOverItsBound(t *testing.T) {
	state := t.TempDir()
	r := ref(t, "github:acme/shop#12")
	path := InboxPath(state, r)
	os.MkdirAll(filepath.Dir(path), 0o700)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(MaxInbox + 1)
	f.Close()
	_, err = ReadInbox(state, r)
	var ie *InboxError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "over the 64 MiB") {
		t.Errorf("ReadInbox = %v, want an *InboxError saying it is over its bound", err)
	}
}

func TestAMessageThatWouldTakeTheInboxPastItsBoundIsRefused(t *testing.T) {
	m := message()
	m.Ref = binding(nil).Ref
	line, err := m.line()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		size    int64
		refused bool
	}{
		{"at the bound already", MaxInbox, true},
		{"one byte short of room", MaxInbox - int64(len(line)) + 1, true},
		{"room for exactly one", MaxInbox - int64(len(line)), false},
		{"well under", 1 << 20, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			state := t.TempDir()
			r := ref(t, "github:acme/shop#12")
			path := InboxPath(state, r)
			os.MkdirAll(filepath.Dir(path), 0o700)
			// Sparse, but for a last whole line.
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			f.Truncate(c.size)
			f.WriteAt(line, c.size-int64(len(line)))
			f.Close()
			_, err = Deliver(context.Background(), state, binding(nil), message())
			fi, _ := os.Stat(path)
			if !c.refused {
				if err != nil || fi.Size() != c.size+int64(len(line)) {
					t.Fatalf("Deliver = %v, the inbox %d bytes; want the message appended", err, fi.Size())
				}
				return
			}
			var ie *InboxError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), "over the 64 MiB") || !strings.Contains(err.Error(), "move it aside") {
				t.Fatalf("Deliver = %v; want an *InboxError saying it would pass its bound", err)
			}
			if fi.Size() != c.size {
				t.Errorf("the inbox is %d bytes; want it as it was, %d", fi.Size(), c.size)
			}
		})
	}
}
