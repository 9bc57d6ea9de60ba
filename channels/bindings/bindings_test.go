package bindings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/repo"
)

func ref(t *testing.T, s string) channels.Ref {
	t.Helper()
	r, err := channels.ParseRef(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func newStore(t *testing.T) *Store {
	t.Helper()
	s := Open(filepath.Join(t.TempDir(), "state"))
	s.Now = func() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) }
	return s
}

func TestBindWritesTheStateRootAndListReadsItBack(t *testing.T) {
	s := newStore(t)
	dir := t.TempDir()
	ch, err := s.Bind(ref(t, "github:acme/shop#12"), dir+"/./")
	if err != nil {
		t.Fatal(err)
	}
	if ch.Previous != nil || ch.Unchanged || ch.Binding.Repo != dir || ch.Binding.BoundAt != "2026-05-01T12:00:00Z" {
		t.Errorf("Bind = %+v", ch)
	}
	fi, err := os.Stat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("bindings file mode %v, want 0600: it is the operator's", fi.Mode().Perm())
	}
	if root, _ := os.Stat(filepath.Dir(filepath.Dir(s.Path()))); root.Mode().Perm() != 0o700 {
		t.Errorf("state root mode %v, want 0700", root.Mode().Perm())
	}
	list, err := s.List()
	if err != nil || len(list) != 1 || list[0].Ref != "github:acme/shop#12" || list[0].Repo != dir {
		t.Fatalf("List = %+v, %v", list, err)
	}
	b, ok, err := s.Lookup(ref(t, "github:ACME/Shop#12"))
	if err != nil || !ok || b.Repo != dir {
		t.Errorf("Lookup in another case = %+v %v %v", b, ok, err)
	}
	if _, ok, _ := s.Lookup(ref(t, "github:acme/shop#13")); ok {
		t.Error("an unbound ref was found")
	}
}

func TestAStoreWithNoFileHasNoBindingsAndCreatesNothingToSaySo(t *testing.T) {
	s := newStore(t)
	list, err := s.List()
	if err != nil || len(list) != 0 {
		t.Fatalf("List = %v, %v", list, err)
	}
	if _, err := os.Stat(filepath.Dir(s.Path())); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("reading created the state root: %v", err)
	}
}

func TestBindRefusesAPathThatIsNotADirectory(t *testing.T) {
	s := newStore(t)
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	for _, dir := range []string{"", "  ", filepath.Join(t.TempDir(), "missing"), file} {
		_, err := s.Bind(ref(t, "github:acme/shop#1"), dir)
		var pe *PathError
		if !errors.As(err, &pe) {
			t.Errorf("Bind(%q) = %v, want a *PathError", dir, err)
		}
	}
	if _, err := os.Stat(s.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Error("a refused bind wrote the file")
	}
}

func TestRebindingReplacesTheBindingAndForgetsItsStart(t *testing.T) {
	s := newStore(t)
	r := ref(t, "github:acme/shop#12")
	one, two := t.TempDir(), t.TempDir()
	if _, err := s.Bind(r, one); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Record(r, Control{Command: channels.CommandStart, Actor: "alice"}); err != nil {
		t.Fatal(err)
	}
	// the same checkout again: nothing changes, the start included
	ch, err := s.Bind(r, one)
	if err != nil || !ch.Unchanged || !ch.Binding.Started() {
		t.Fatalf("rebinding to the same checkout: %+v %v", ch, err)
	}
	// another checkout: replaced whole
	ch, err = s.Bind(ref(t, "github:Acme/Shop#12"), two)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Unchanged || ch.Previous == nil || ch.Previous.Repo != one || !ch.Previous.Started() {
		t.Errorf("Previous = %+v", ch.Previous)
	}
	if ch.Binding.Repo != two || ch.Binding.Started() || ch.Binding.Ref != "github:Acme/Shop#12" {
		t.Errorf("Binding = %+v", ch.Binding)
	}
	list, _ := s.List()
	if len(list) != 1 {
		t.Errorf("a ref bound twice has %d bindings", len(list))
	}
}

func TestUnbindForgetsAndRefusesWhatIsNotBound(t *testing.T) {
	s := newStore(t)
	r := ref(t, "github:acme/shop#12")
	dir := t.TempDir()
	s.Bind(r, dir)
	gone, err := s.Unbind(r)
	if err != nil || gone.Repo != dir {
		t.Fatalf("Unbind = %+v, %v", gone, err)
	}
	if _, err := s.Unbind(r); !errors.Is(err, ErrNotBound) {
		t.Errorf("unbinding twice: %v", err)
	}
	if _, err := s.Record(r, Control{Command: channels.CommandStart}); !errors.Is(err, ErrNotBound) {
		t.Errorf("recording for an unbound item: %v", err)
	}
}

func TestConcurrentBindsLoseNothing(t *testing.T) {
	s := newStore(t)
	dir := t.TempDir()
	const workers, each = 4, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// each worker its own Store: its own descriptors, as another
			// process would have
			own := Open(filepath.Dir(filepath.Dir(s.Path())))
			for i := range each {
				if _, err := own.Bind(ref(t, fmt.Sprintf("github:acme/shop#%d", w*100+i+1)), dir); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != workers*each {
		t.Errorf("%d bindings survived %d concurrent binds", len(list), workers*each)
	}
	for i := 1; i < len(list); i++ {
		if compareBindings(list[i-1], list[i]) >= 0 {
			t.Errorf("bindings out of order: %s before %s", list[i-1].Ref, list[i].Ref)
		}
	}
}

func TestAHeldLockMakesAChangeFailBusyRatherThanWaitForever(t *testing.T) {
	s := newStore(t)
	s.Bind(ref(t, "github:acme/shop#1"), t.TempDir())
	other := Open(filepath.Dir(filepath.Dir(s.Path())))
	other.LockTimeout = 30 * time.Millisecond
	hold := make(chan struct{})
	held := make(chan struct{})
	go s.change(func(*document) (bool, error) { close(held); <-hold; return false, nil })
	<-held
	_, err := other.Bind(ref(t, "github:acme/shop#2"), t.TempDir())
	close(hold)
	if !errors.Is(err, ErrBusy) {
		t.Errorf("got %v, want ErrBusy", err)
	}
}

func TestACorruptFileIsReportedAndNeverOverwritten(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"not json":        "{\"version\": 1, \"bindings\": [",
		"unknown key":     `{"version": 1, "bindings": [], "extra": true}`,
		"two values":      `{"version": 1, "bindings": []} {}`,
		"newer version":   `{"version": 2, "bindings": []}`,
		"no version":      `{"bindings": []}`,
		"bad ref":         `{"version": 1, "bindings": [{"ref": "acme/shop#1", "repo": "/x", "boundAt": ""}]}`,
		"relative repo":   `{"version": 1, "bindings": [{"ref": "github:acme/shop#1", "repo": "x", "boundAt": ""}]}`,
		"bound twice":     `{"version": 1, "bindings": [{"ref": "github:acme/shop#1", "repo": "/x", "boundAt": ""}, {"ref": "github:ACME/shop#1", "repo": "/y", "boundAt": ""}]}`,
		"unknown command": `{"version": 1, "bindings": [{"ref": "github:acme/shop#1", "repo": "/x", "boundAt": "", "control": {"command": "launch", "at": ""}}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			s := newStore(t)
			os.MkdirAll(filepath.Dir(s.Path()), 0o700)
			os.WriteFile(s.Path(), []byte(content), 0o600)
			var ce *CorruptError
			if _, err := s.List(); !errors.As(err, &ce) || !strings.Contains(err.Error(), s.Path()) {
				t.Errorf("List: %v, want a *CorruptError naming the file", err)
			}
			if _, err := s.Bind(ref(t, "github:acme/shop#9"), dir); !errors.As(err, &ce) {
				t.Errorf("Bind: %v, want a *CorruptError", err)
			}
			if _, err := s.Unbind(ref(t, "github:acme/shop#1")); !errors.As(err, &ce) {
				t.Errorf("Unbind: %v, want a *CorruptError", err)
			}
			if got, _ := os.ReadFile(s.Path()); string(got) != content {
				t.Errorf("the corrupt file was rewritten:\n%s", got)
			}
		})
	}
}

func TestTheFileIsDeterministic(t *testing.T) {
	s := newStore(t)
	dir := t.TempDir()
	for _, r := range []string{"github:zeta/z#1", "github:acme/shop#12", "github:acme/shop#2"} {
		if _, err := s.Bind(ref(t, r), dir); err != nil {
			t.Fatal(err)
		}
	}
	s.Record(ref(t, "github:acme/shop#2"), Control{Command: channels.CommandPause, Actor: "alice", Delivery: "d-1"})
	got, _ := os.ReadFile(s.Path())
	want := fmt.Sprintf(`{
  "version": 1,
  "bindings": [
    {
      "ref": "github:acme/shop#2",
      "repo": %[1]q,
      "boundAt": "2026-05-01T12:00:00Z",
      "control": {
        "command": "pause",
        "actor": "alice",
        "at": "2026-05-01T12:00:00Z",
        "delivery": "d-1"
      }
    },
    {
      "ref": "github:acme/shop#12",
      "repo": %[1]q,
      "boundAt": "2026-05-01T12:00:00Z"
    },
    {
      "ref": "github:zeta/z#1",
      "repo": %[1]q,
      "boundAt": "2026-05-01T12:00:00Z"
    }
  ]
}
`, dir)
	if string(got) != want {
		t.Errorf("file:\n%s\nwant:\n%s", got, want)
	}
}

func thread(t *testing.T, s string) *Thread {
	t.Helper()
	th, err := ParseThread(s)
	if err != nil {
		t.Fatal(err)
	}
	return &th
}

func TestAFileWrittenBeforeThreadsReadsUnchanged(t *testing.T) {
	s := newStore(t)
	old := `{
  "version": 1,
  "bindings": [
    {
      "ref": "github:acme/shop#2",
      "repo": "/work/shop",
      "boundAt": "2026-05-01T12:00:00Z",
      "control": {"command": "start", "actor": "alice", "at": "2026-05-01T12:00:00Z"},
      "acted": [7, 9]
    }
  ]
}
`
	os.MkdirAll(filepath.Dir(s.Path()), 0o700)
	os.WriteFile(s.Path(), []byte(old), 0o600)
	b, ok, err := s.Lookup(ref(t, "github:acme/shop#2"))
	if err != nil || !ok || b.Repo != "/work/shop" || !b.Started() || !b.HasActed(9) || b.Slack != nil || b.Deliver != nil {
		t.Fatalf("Lookup = %+v %v %v", b, ok, err)
	}
	if !b.HasCheckout() {
		t.Error("a binding with a repo says it has no checkout")
	}
}

func TestAThreadOnlyBindingHasNoCheckoutAndIsFoundByItsThread(t *testing.T) {
	s := newStore(t)
	r := ref(t, "github:acme/shop#12")
	ch, err := s.Set(r, Options{Slack: thread(t, "C0123ABC:1712345678.000100")})
	if err != nil {
		t.Fatal(err)
	}
	if ch.Previous != nil || ch.Unchanged || ch.Binding.HasCheckout() || ch.Binding.Slack.TS != "1712345678.000100" {
		t.Errorf("Set = %+v", ch)
	}
	got, _ := os.ReadFile(s.Path())
	want := `{
  "version": 1,
  "bindings": [
    {
      "ref": "github:acme/shop#12",
      "boundAt": "2026-05-01T12:00:00Z",
      "slack": {
        "channel": "C0123ABC",
        "threadTs": "1712345678.000100"
      }
    }
  ]
}
`
	if string(got) != want {
		t.Errorf("file:\n%s\nwant:\n%s", got, want)
	}
	for _, tc := range []struct {
		name        string
		channel, ts string
		found       bool
	}{
		{"the thread as bound", "C0123ABC", "1712345678.000100", true},
		{"another channel", "C0999", "1712345678.000100", false},
		{"the timestamp spelled otherwise", "C0123ABC", "1712345678.0001", false},
		{"the channel in another case", "c0123abc", "1712345678.000100", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, ok, err := s.ByThread(tc.channel, tc.ts)
			if err != nil || ok != tc.found || (ok && b.Ref != "github:acme/shop#12") {
				t.Errorf("ByThread = %+v %v %v, want found %v", b, ok, err, tc.found)
			}
		})
	}
}

func TestSetRefusesAThreadBoundToAnotherWorkItem(t *testing.T) {
	s := newStore(t)
	th := thread(t, "C0123ABC:1712345678.000100")
	if _, err := s.Set(ref(t, "github:acme/shop#12"), Options{Slack: th}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(s.Path())
	_, err := s.Set(ref(t, "github:acme/shop#13"), Options{Repo: t.TempDir(), Slack: th})
	var taken *ThreadTakenError
	if !errors.As(err, &taken) || taken.Ref != "github:acme/shop#12" || !strings.Contains(err.Error(), "github:acme/shop#12") {
		t.Fatalf("binding a taken thread: %v, want a *ThreadTakenError naming github:acme/shop#12", err)
	}
	if after, _ := os.ReadFile(s.Path()); string(after) != string(before) {
		t.Error("a refused bind changed the file")
	}
	// the same work item, however spelled, may bind its own thread again
	if ch, err := s.Set(ref(t, "github:ACME/shop#12"), Options{Slack: th}); err != nil || !ch.Unchanged {
		t.Errorf("rebinding a work item's own thread: %+v %v", ch, err)
	}
	// another thread for #12 frees the first, which #13 may then take
	if _, err := s.Set(ref(t, "github:acme/shop#12"), Options{Slack: thread(t, "C0123ABC:1712345678.000200")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Set(ref(t, "github:acme/shop#13"), Options{Slack: th}); err != nil {
		t.Errorf("binding a freed thread: %v", err)
	}
}

func TestSetChangesWhatItIsGivenAndKeepsTheRest(t *testing.T) {
	s := newStore(t)
	r := ref(t, "github:acme/shop#12")
	one, two := t.TempDir(), t.TempDir()
	if _, err := s.Bind(r, one); err != nil {
		t.Fatal(err)
	}
	s.Record(r, Control{Command: channels.CommandStart, Actor: "alice"})
	s.Acted(r, 41)
	for _, tc := range []struct {
		name      string
		o         Options
		unchanged bool
		check     func(t *testing.T, b Binding)
	}{
		{"a thread is added and the start kept", Options{Slack: thread(t, "C0123ABC:1712345678.000100")}, false, func(t *testing.T, b Binding) {
			if b.Repo != one || !b.Started() || !b.HasActed(41) || b.Slack == nil {
				t.Errorf("binding %+v", b)
			}
		}},
		{"a URL target is added", Options{Deliver: &Target{URL: "https://hooks.example.com/loop"}}, false, func(t *testing.T, b Binding) {
			if b.Deliver.Kind() != TargetURL || b.Slack == nil || !b.Started() {
				t.Errorf("binding %+v", b)
			}
		}},
		{"a command replaces the URL", Options{Deliver: &Target{Command: []string{"notify", "--loud"}}}, false, func(t *testing.T, b Binding) {
			if b.Deliver.Kind() != TargetCommand || b.Deliver.URL != "" {
				t.Errorf("target %+v", b.Deliver)
			}
		}},
		{"the same values change nothing", Options{Repo: one, Slack: thread(t, "C0123ABC:1712345678.000100"), Deliver: &Target{Command: []string{"notify", "--loud"}}}, true, func(t *testing.T, b Binding) {
			if !b.Started() {
				t.Errorf("binding %+v", b)
			}
		}},
		{"another checkout forgets the start and keeps the rest", Options{Repo: two}, false, func(t *testing.T, b Binding) {
			if b.Repo != two || b.Started() || !b.HasActed(41) || b.Slack == nil || b.Deliver == nil {
				t.Errorf("binding %+v", b)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch, err := s.Set(r, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if ch.Unchanged != tc.unchanged || ch.Previous == nil {
				t.Errorf("Change = %+v, want unchanged %v", ch, tc.unchanged)
			}
			tc.check(t, ch.Binding)
			b, _, _ := s.Lookup(r)
			tc.check(t, b)
		})
	}
	gone, err := s.Unbind(r)
	if err != nil || gone.Slack == nil || gone.Deliver == nil {
		t.Fatalf("Unbind = %+v %v", gone, err)
	}
	if _, ok, _ := s.ByThread("C0123ABC", "1712345678.000100"); ok {
		t.Error("an unbound work item's thread is still found")
	}
}

func TestSetRefusesWhatCannotBeBound(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		want any
	}{
		{"nothing to bind a new work item to", Options{Deliver: &Target{URL: "https://example.com"}}, ErrNotBound},
		{"a thread not in Slack's shape", Options{Slack: &Thread{Channel: "general", TS: "1712345678.000100"}}, new(*ThreadError)},
		{"a URL that is not http", Options{Slack: thread(t, "C01:1.1"), Deliver: &Target{URL: "file:///etc/passwd"}}, new(*TargetError)},
		{"a URL and a command", Options{Slack: thread(t, "C01:1.1"), Deliver: &Target{URL: "https://example.com", Command: []string{"x"}}}, new(*TargetError)},
		{"a command with no program", Options{Slack: thread(t, "C01:1.1"), Deliver: &Target{Command: []string{""}}}, new(*TargetError)},
		{"a checkout that is not there", Options{Repo: "/nonexistent/checkout"}, new(*PathError)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			_, err := s.Set(ref(t, "github:acme/shop#1"), tc.o)
			ok := false
			if sentinel, isErr := tc.want.(error); isErr {
				ok = errors.Is(err, sentinel)
			} else {
				ok = errors.As(err, tc.want)
			}
			if !ok {
				t.Errorf("Set = %v, want %T", err, tc.want)
			}
			if _, err := os.Stat(s.Path()); !errors.Is(err, os.ErrNotExist) {
				t.Error("a refused Set wrote the file")
			}
		})
	}
}

func TestACorruptThreadOrTargetIsReported(t *testing.T) {
	for name, content := range map[string]string{
		"neither checkout nor thread": `{"version": 1, "bindings": [{"ref": "github:acme/shop#1", "boundAt": ""}]}`,
		"bad channel":                 `{"version": 1, "bindings": [{"ref": "github:acme/shop#1", "boundAt": "", "slack": {"channel": "c01", "threadTs": "1.1"}}]}`,
		"bad timestamp":               `{"version": 1, "bindings": [{"ref": "github:acme/shop#1", "boundAt": "", "slack": {"channel": "C01", "threadTs": "1"}}]}`,
		"thread bound twice":          `{"version": 1, "bindings": [{"ref": "github:acme/shop#1", "boundAt": "", "slack": {"channel": "C01", "threadTs": "1.1"}}, {"ref": "github:acme/shop#2", "boundAt": "", "slack": {"channel": "C01", "threadTs": "1.1"}}]}`,
		"empty target":                `{"version": 1, "bindings": [{"ref": "github:acme/shop#1", "repo": "/x", "boundAt": "", "deliver": {}}]}`,
		"relative URL":                `{"version": 1, "bindings": [{"ref": "github:acme/shop#1", "repo": "/x", "boundAt": "", "deliver": {"url": "/hook"}}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			s := newStore(t)
			os.MkdirAll(filepath.Dir(s.Path()), 0o700)
			os.WriteFile(s.Path(), []byte(content), 0o600)
			var ce *CorruptError
			if _, err := s.List(); !errors.As(err, &ce) {
				t.Errorf("List: %v, want a *CorruptError", err)
			}
			if _, _, err := s.ByThread("C01", "1.1"); !errors.As(err, &ce) {
				t.Errorf("ByThread: %v, want a *CorruptError", err)
			}
		})
	}
}

func TestClearControlForgetsTheControlRecordAndKeepsTheRest(t *testing.T) {
	s := newStore(t)
	r := ref(t, "github:acme/shop#12")
	dir := t.TempDir()
	if _, err := s.Bind(r, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Record(r, Control{Command: "start", Actor: "alice"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Acted(r, 7); err != nil {
		t.Fatal(err)
	}
	b, err := s.ClearControl(r)
	if err != nil || b.Control != nil || !b.HasActed(7) || b.Repo != dir {
		t.Fatalf("ClearControl = %+v, %v", b, err)
	}
	if b, _, _ := s.Lookup(r); b.Control != nil || b.Started() {
		t.Errorf("read back: %+v", b)
	}
	if _, err := s.ClearControl(r); err != nil {
		t.Errorf("clearing again: %v", err)
	}
	if _, err := s.ClearControl(ref(t, "github:acme/shop#13")); !errors.Is(err, ErrNotBound) {
		t.Errorf("an unbound ref: %v, want ErrNotBound", err)
	}
}

func TestAChangeThatWouldTakeTheFilePastWhatIsReadIsRefused(t *testing.T) {
	// One size: each run writes and reads 16 MiB files a few times.
	for _, room := range []int{60} {
		t.Run(fmt.Sprintf("%d bytes of room", room), func(t *testing.T) {
			s := newStore(t)
			// A file its reader just takes: bindings to long (made-up)
			// checkout paths, padded to maxFile-room bytes.
			encode := func(d *document) []byte {
				var buf bytes.Buffer
				enc := json.NewEncoder(&buf)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				if err := enc.Encode(d); err != nil {
					t.Fatal(err)
				}
				return buf.Bytes()
			}
			d := &document{Version: Version}
			for i := range 40 {
				d.Bindings = append(d.Bindings, Binding{Ref: fmt.Sprintf("github:acme/shop#%d", i+1),
					Repo: "/" + strings.Repeat("p", 400_000), BoundAt: "2026-05-01T12:00:00Z"})
			}
			d.Bindings[0].Repo += strings.Repeat("q", maxFile-room-len(encode(d)))
			data := encode(d)
			if len(data) != maxFile-room {
				t.Fatalf("made a file of %d bytes, want %d", len(data), maxFile-room)
			}
			os.MkdirAll(filepath.Dir(s.Path()), 0o700)
			if err := os.WriteFile(s.Path(), data, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := s.Bind(ref(t, "github:acme/shop#99999"), t.TempDir())
			var large *repo.TooLargeError
			if !errors.As(err, &large) {
				t.Fatalf("Bind = %v; want the write its reader would refuse refused", err)
			}
			if got, _ := os.ReadFile(s.Path()); !bytes.Equal(got, data) {
				t.Fatal("the refused change was written")
			}
			// The file still reads, and a change that makes room is made.
			if list, err := s.List(); err != nil || len(list) != 40 {
				t.Fatalf("List = %d bindings, %v", len(list), err)
			}
			if _, err := s.Unbind(ref(t, "github:acme/shop#1")); err != nil {
				t.Fatal(err)
			}
		})
	}
}
