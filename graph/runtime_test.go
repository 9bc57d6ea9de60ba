package graph

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/the-loop/the-loop/repo"
)

type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Emit(event, level string, fields map[string]any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, event)
	return nil
}

func (r *recorder) has(e string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.events, e)
}

func newRuntime(t *testing.T) (*Runtime, *recorder) {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "docs/specs/item"), 0o755)
	co, err := checkoutOf(t, dir).WithSpecDir("docs/specs")
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	clock := time.Date(2026, 11, 30, 1, 2, 3, 0, time.UTC)
	return &Runtime{
		Checkout: co, Graph: mustCompile(t, "testdata/mini.yaml"),
		Events: rec, Now: func() time.Time { return clock },
	}, rec
}

func comment(body string) *Event { return &Event{Comments: []Comment{{Author: "alice", Body: body}}} }

func TestAWorkItemWalksTheLoop(t *testing.T) {
	rt, rec := newRuntime(t)
	step, err := rt.Start("item")
	if err != nil || step.Node != "select" {
		t.Fatalf("start: %+v, %v", step, err)
	}
	if again, _ := rt.Start("item"); again != nil {
		t.Error("a second start moved the item")
	}
	if s, _ := rt.Advance("item", nil); s.Status != "wait" {
		t.Fatalf("selection without a reply: got %s, want wait", s.Status)
	}
	st, _ := LoadState(rt.Checkout, "docs/specs/item", "item")
	if st.Parked == nil || st.Parked["node"] != "select" {
		t.Errorf("a wait must park: %v", st.Parked)
	}
	if s, _ := rt.Advance("item", comment("selected")); s.To != "draft" {
		t.Fatalf("selected: got %+v", s)
	}
	// draft blocks until draft.md exists, and escalates at maxAttempts 2.
	if s, _ := rt.Advance("item", nil); s.Status != "block" || !strings.Contains(strings.Join(s.Messages, ""), "missing draft.md") {
		t.Fatalf("draft: got %+v", s)
	}
	os.WriteFile(rt.Checkout.Abs("docs/specs/item/draft.md"), []byte("# d\n"), 0o644)
	if s, _ := rt.Advance("item", nil); s.To != "review" {
		t.Fatalf("draft done: got %+v", s)
	}
	if s, _ := rt.Advance("item", comment("changes-requested")); s.To != "draft" {
		t.Fatalf("changes requested: got %+v", s)
	}
	rt.Advance("item", nil)
	rt.Advance("item", comment("approved"))
	s, _ := rt.Advance("item", nil) // build: nothing skips, ok passes
	if s.To != "done" || !s.Terminal {
		t.Fatalf("build: got %+v", s)
	}
	s, _ = rt.Advance("item", nil)
	if s.Status != "pass" || s.To != "" || !s.Terminal {
		t.Fatalf("done: got %+v", s)
	}
	for _, e := range []string{"graph.started", "graph.parked", "graph.blocked", "graph.advanced", "graph.completed", "graph.hook_degraded", "graph.gate_session"} {
		if !rec.has(e) {
			t.Errorf("no %s event in %v", e, rec.events)
		}
	}
	rep, err := rt.Status("item", false)
	if err != nil || rep.CurrentNode != "done" {
		t.Fatalf("status: %+v, %v", rep, err)
	}
}

func TestABlockEscalatesAfterARepeatedMessage(t *testing.T) {
	rt, rec := newRuntime(t)
	rt.Force("item", "draft", "testing", "me")
	rt.Start("item")
	first, _ := rt.Advance("item", nil)
	second, _ := rt.Advance("item", nil)
	if first.Status != "block" || second.Status != StatusEscalated || !rec.has("graph.escalated") {
		t.Errorf("got %s then %s", first.Status, second.Status)
	}
}

func TestNoDeclaredEdgeParksAndEscalates(t *testing.T) {
	rt, rec := newRuntime(t)
	rt.Start("item")
	s, _ := rt.Advance("item", comment("something-else"))
	if s.Status != StatusEscalated || !strings.Contains(strings.Join(s.Messages, " "), `no declared edge from select on outcome "something-else"`) || !rec.has("graph.no_edge") {
		t.Errorf("got %+v", s)
	}
}

func TestStatusIsPureAndRecomputeIgnoresThePointer(t *testing.T) {
	rt, rec := newRuntime(t)
	rt.Force("item", "build", "jump", "me")
	before := len(rec.events)
	dir := rt.Checkout.Abs("docs/specs/item")
	stateBefore, _ := os.ReadFile(filepath.Join(dir, StateFile))
	rep, err := rt.Status("item", false)
	if err != nil {
		t.Fatal(err)
	}
	if rep.CurrentNode != "build" || rep.OK {
		t.Errorf("stored: at %s ok %v; the selection gate before the pointer waits", rep.CurrentNode, rep.OK)
	}
	if rep.Nodes[3].Node != "build" || !rep.Nodes[3].Forced {
		t.Errorf("build should be reported forced: %+v", rep.Nodes[3])
	}
	re, _ := rt.Status("item", true)
	if re.CurrentNode != "select" || re.Nodes[3].Forced {
		t.Errorf("recompute: at %s, forced %v", re.CurrentNode, re.Nodes[3].Forced)
	}
	stateAfter, _ := os.ReadFile(filepath.Join(dir, StateFile))
	if len(rec.events) != before || string(stateBefore) != string(stateAfter) {
		t.Error("status wrote an event or the state")
	}
}

func TestDeclaredSkipsRouteAroundNodesAndAreReported(t *testing.T) {
	rt, rec := newRuntime(t)
	rt.Start("item")
	res, err := rt.DeclareSkips("item", []string{"docs", "select", "bogus"}, "small change", "bob")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Declared, ",") != "draft,review" || len(res.Rejected) != 2 {
		t.Fatalf("got %+v", res)
	}
	s, _ := rt.Advance("item", comment("selected"))
	if s.To != "build" {
		t.Fatalf("got %+v, want the skipped nodes routed around", s)
	}
	rep, _ := rt.Status("item", false)
	if rep.Nodes[1].Status != "skip" || !strings.Contains(rep.Nodes[1].Messages[0], "by bob, reason: small change") {
		t.Errorf("draft: %+v", rep.Nodes[1])
	}
	if !rec.has("graph.node_skipped") || !rec.has("graph.skips_rejected") {
		t.Errorf("events: %v", rec.events)
	}
	// A skip is a plan, not an amnesty: nothing behind the pointer.
	res, _ = rt.DeclareSkips("item", []string{"draft"}, "again", "bob")
	if len(res.Declared) != 0 {
		t.Errorf("declared a node behind the pointer: %+v", res)
	}
	if _, err := rt.DeclareSkips("item", []string{"draft"}, "  ", ""); !errors.Is(err, ErrReasonRequired) {
		t.Errorf("no reason: got %v", err)
	}
}

func TestAForgedSkipOnAProtectedGateIsRefused(t *testing.T) {
	rt, _ := newRuntime(t)
	st := NewState("item")
	st.Skips["select"] = map[string]any{"via": "hand"}
	st.Save(rt.Checkout, "docs/specs/item")
	rep, _ := rt.Status("item", false)
	if rep.Nodes[0].Status != "wait" || !strings.Contains(strings.Join(rep.Nodes[0].Messages, " "), "refused") {
		t.Errorf("got %+v", rep.Nodes[0])
	}
}

func TestForceMovesThePointerWithoutForgingAVerdict(t *testing.T) {
	rt, rec := newRuntime(t)
	f, err := rt.Force("item", "done", "ship it", "carol")
	if err != nil {
		t.Fatal(err)
	}
	if f.FromNode != "select" || len(f.Warnings) < 3 {
		t.Errorf("got %+v; want off-edge, required and audit-comment warnings", f)
	}
	rep, _ := rt.Status("item", true)
	if rep.Nodes[0].Status != "wait" {
		t.Error("the bypassed gate lost its verdict")
	}
	st, _ := LoadState(rt.Checkout, "docs/specs/item", "item")
	if len(st.Forced) != 1 || st.Forced[0]["actor"] != "carol" || !st.Nodes["done"].Forced || !rec.has("graph.forced") {
		t.Errorf("force not recorded: %+v", st.Forced)
	}
	if _, err := rt.Force("item", "nowhere", "x", ""); !errors.Is(err, ErrUnknownNode) {
		t.Errorf("unknown target: %v", err)
	}
	if _, err := rt.Force("item", "done", "", ""); !errors.Is(err, ErrReasonRequired) {
		t.Errorf("no reason: %v", err)
	}
}

func TestCompleteClaims(t *testing.T) {
	rt, _ := newRuntime(t)
	c, _ := rt.Complete("item", "", "", nil)
	if c.Status != "refused" || c.Reason != "not-started" {
		t.Errorf("not started: %+v", c)
	}
	rt.Force("item", "build", "skip ahead", "")
	if c, _ := rt.Complete("item", "done", "", nil); c.Reason != "not-current" || c.CurrentNode != "build" {
		t.Errorf("ahead: %+v", c)
	}
	if c, _ := rt.Complete("item", "select", "", nil); c.Status != "noop" || c.Reason != "already-past" {
		t.Errorf("behind: %+v", c)
	}
	c, _ = rt.Complete("item", "build", "agent-1", nil)
	if !c.Moved || c.CurrentNode != "done" {
		t.Errorf("current: %+v", c)
	}
}

func TestAHeldLockAnswersBusy(t *testing.T) {
	rt, _ := newRuntime(t)
	rt.Start("item")
	lock := flock.New(rt.Checkout.Abs("docs/specs/item/" + LockFile))
	if ok, err := lock.TryLock(); !ok || err != nil {
		t.Fatal(ok, err)
	}
	defer lock.Unlock()
	c, err := rt.Complete("item", "", "", nil)
	if err != nil || c.Status != "busy" {
		t.Errorf("complete: %+v, %v", c, err)
	}
	if _, err := rt.Advance("item", nil); !errors.Is(err, ErrBusy) {
		t.Errorf("advance: %v", err)
	}
}

func TestRunStopsAtWaitTerminalAndMaxNodes(t *testing.T) {
	rt, _ := newRuntime(t)
	rep, err := rt.Run("item", 10, false, comment("selected"))
	if err != nil || rep.Stopped != "block" || rep.At != "draft" {
		t.Fatalf("got %+v, %v", rep, err)
	}
	os.WriteFile(rt.Checkout.Abs("docs/specs/item/draft.md"), []byte("x"), 0o644)
	rep, _ = rt.Run("item", 10, false, nil)
	if rep.Stopped != "wait" || rep.At != "review" {
		t.Fatalf("got %+v", rep)
	}
	rep, _ = rt.Run("item", 1, false, comment("approved"))
	if rep.Stopped != "max-nodes" || rep.At != "build" {
		t.Fatalf("got %+v", rep)
	}
	rep, _ = rt.Run("item", 10, false, nil)
	if rep.Stopped != "terminal" || rep.At != "done" {
		t.Fatalf("got %+v", rep)
	}
}

func TestADryRunWritesNothing(t *testing.T) {
	rt, rec := newRuntime(t)
	os.WriteFile(rt.Checkout.Abs("docs/specs/item/draft.md"), []byte("x"), 0o644)
	rt.Force("item", "draft", "test", "")
	dir := rt.Checkout.Abs("docs/specs/item")
	before, _ := os.ReadFile(filepath.Join(dir, StateFile))
	n := len(rec.events)
	rep, err := rt.Run("item", 10, true, nil)
	if err != nil || rep.Stopped != "wait" || rep.At != "review" || len(rep.Steps) != 2 {
		t.Fatalf("got %+v, %v", rep, err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, StateFile))
	if string(before) != string(after) || len(rec.events) != n {
		t.Error("a dry run wrote")
	}
}

func TestUnknownItemsAndBadIDs(t *testing.T) {
	rt, _ := newRuntime(t)
	if _, err := rt.Status("missing", false); err == nil || !strings.Contains(err.Error(), "no spec folder at docs/specs/missing") {
		t.Errorf("missing: %v", err)
	}
	if _, err := rt.Status("../etc", false); err == nil || !strings.Contains(err.Error(), "want the name of a folder in the spec directory") {
		t.Errorf("escape: %v", err)
	}
}

func TestDeriveRef(t *testing.T) {
	cases := []struct{ id, origin, want string }{
		{"issue-12", "octo/repo", "github:octo/repo#12"},
		{"issue-12", "", ""},
		{"feature-x", "octo/repo", ""},
		{"issue-12", "octo/re po", ""},
		{"issue-0", "octo/repo", ""},
	}
	for _, c := range cases {
		if got := DeriveRef(c.id, c.origin); got != c.want {
			t.Errorf("DeriveRef(%q, %q) = %q, want %q", c.id, c.origin, got, c.want)
		}
	}
}

// syncRecorder is an event log that can be synced: at each sync it notes
// how many events it holds and where the state file says the item is, so
// a test can see that events reach the disk before the state does.
type syncRecorder struct {
	recorder
	co    *repo.Checkout
	syncs []string
}

func (s *syncRecorder) Sync() error {
	st, err := LoadState(s.co, "docs/specs/item", "item")
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.syncs = append(s.syncs, fmt.Sprintf("%s with the state at %q", s.events[len(s.events)-1], st.CurrentNode))
	return nil
}

func TestATransitionsEventsAreDurableBeforeTheStateThatRecordsIt(t *testing.T) {
	rt, _ := newRuntime(t)
	log := &syncRecorder{co: rt.Checkout}
	rt.Events = log
	if _, err := rt.Start("item"); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Advance("item", comment("selected")); err != nil {
		t.Fatal(err)
	}
	want := []string{`graph.started with the state at ""`, `graph.advanced with the state at "select"`}
	if !slices.Equal(log.syncs, want) {
		t.Errorf("syncs = %q; want %q: each transition's events synced before its state is written", log.syncs, want)
	}
}

func TestAnEntryChainThatDoesNotPassIsSaidAndRecordedButDoesNotGate(t *testing.T) {
	rt, rec := newRuntime(t)
	g, err := Apply(rt.Graph, map[string]Hook{"x-entry": fixed(Block("x-entry", Errorf("not on my watch")))},
		[]Attachment{{Hook: "x-entry", Node: "draft", Boundary: Entry}})
	if err != nil {
		t.Fatal(err)
	}
	rt.Graph = g
	rt.Start("item")
	s, err := rt.Advance("item", comment("selected"))
	if err != nil || s.To != "draft" {
		t.Fatalf("advance = %+v, %v; want the item in draft all the same", s, err)
	}
	msgs := strings.Join(s.Messages, "\n")
	if !strings.Contains(msgs, "warning: x-entry returned block at the entry of draft: not on my watch; entry chains do not gate") {
		t.Errorf("messages do not say the entry hook blocked:\n%s", msgs)
	}
	if !rec.has("graph.entry_unmet") {
		t.Errorf("no graph.entry_unmet event: %v", rec.events)
	}
}

func TestALockedVerbRemovesWhatAKilledWriterLeft(t *testing.T) {
	rt, _ := newRuntime(t)
	dir := rt.Checkout.Abs("docs/specs/item")
	for _, name := range []string{".graph-state.json.4242.tmp", ".draft.md.17.tmp", ".notes.md.18.tmp", "keep.tmp"} {
		os.WriteFile(filepath.Join(dir, name), []byte("{"), 0o644)
	}
	// An artifact's is removed only once no live writer can still hold it.
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(dir, ".draft.md.17.tmp"), old, old)
	if _, err := rt.Start("item"); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, ","); got != ".notes.md.18.tmp,graph-state.json,graph-state.lock,keep.tmp" {
		t.Errorf("the item folder holds %s; want the stale temporary files gone and nothing else touched", got)
	}
}

func TestAHugeBlockMessageIsStoredCut(t *testing.T) {
	rt, _ := newRuntime(t)
	huge := strings.Repeat("x", 30<<20)
	g, err := Apply(rt.Graph, map[string]Hook{"x-huge": fixed(Block("x-huge", Errorf("%s", huge)))},
		[]Attachment{{Hook: "x-huge", Node: "build"}})
	if err != nil {
		t.Fatal(err)
	}
	rt.Graph = g
	rt.Force("item", "build", "test", "")
	s, err := rt.Advance("item", nil)
	if err != nil || s.Status != "block" {
		t.Fatalf("advance = %+v, %v", s, err)
	}
	data, _ := os.ReadFile(rt.Checkout.Abs("docs/specs/item/" + StateFile))
	if len(data) > 64<<10 {
		t.Errorf("the state file is %d bytes; a block message must be stored cut", len(data))
	}
}

// sabotage is an event log that, on the first event, puts a non-empty
// directory where the state file goes, so that the write after it fails.
type sabotage struct {
	recorder
	dir  string
	done bool
}

func (s *sabotage) Emit(event, level string, fields map[string]any) error {
	if !s.done {
		s.done = true
		os.Remove(filepath.Join(s.dir, StateFile))
		os.MkdirAll(filepath.Join(s.dir, StateFile, "in-the-way"), 0o755)
	}
	return s.recorder.Emit(event, level, fields)
}

func TestAStateThatCannotBeWrittenAfterItsEventsIsSaidInTheLog(t *testing.T) {
	rt, _ := newRuntime(t)
	log := &sabotage{dir: rt.Checkout.Abs("docs/specs/item")}
	rt.Events = log
	if _, err := rt.Force("item", "build", "test", ""); err == nil {
		t.Fatal("force wrote a state over a directory")
	}
	if got := strings.Join(log.events, ","); got != "graph.forced,graph.state_write_failed" {
		t.Errorf("events %s; want the move's event, then that its state was not written", got)
	}
}

// orderLog is an event log that notes, for every event it appends and
// every sync, where the state file then says the item is, in one sequence
// shared with the hooks of a test.
type orderLog struct {
	co    *repo.Checkout
	notes *[]string
	// appending, when set, is called before an event is appended.
	appending func(event string)
	// refuse, when set, is what appending the event refuse names, or
	// the sync, answers: a full disk.
	refuse  string
	refusal error
}

func (l *orderLog) pointer() string {
	st, err := LoadState(l.co, "docs/specs/item", "item")
	if err != nil {
		return "unreadable"
	}
	return fmt.Sprintf("%q", st.CurrentNode)
}

func (l *orderLog) Emit(event, level string, fields map[string]any) error {
	if l.appending != nil {
		l.appending(event)
	}
	if event == l.refuse {
		*l.notes = append(*l.notes, event+" refused, the state at "+l.pointer())
		return l.refusal
	}
	*l.notes = append(*l.notes, event+" appended, the state at "+l.pointer())
	return nil
}

func (l *orderLog) Sync() error {
	if l.refuse == "sync" {
		*l.notes = append(*l.notes, "sync refused, the state at "+l.pointer())
		return l.refusal
	}
	*l.notes = append(*l.notes, "synced, the state at "+l.pointer())
	return nil
}

func TestTheExecutorAppliesATransitionsEffectsInTheirDocumentedOrder(t *testing.T) {
	for _, c := range []struct {
		name string
		// block puts a directory where the state file goes once the
		// first event is appended.
		block bool
		// refuse names the event, or "sync", the log refuses.
		refuse string
		want   []string
	}{{
		name: "events, synced, then the state, then the entry chain; its events at the end",
		want: []string{
			`graph.one appended, the state at ""`,
			`graph.two appended, the state at ""`,
			`synced, the state at ""`,
			`the entry chain of draft ran, the state at "draft"`,
			`apply returned`,
			`graph.hook_degraded appended, the state at "draft"`,
		},
	}, {
		name:  "a state that cannot be written runs no entry chain",
		block: true,
		want: []string{
			`graph.one appended, the state at unreadable`,
			`graph.two appended, the state at unreadable`,
			`synced, the state at unreadable`,
			`graph.state_write_failed appended, the state at unreadable`,
			`apply returned an error`,
		},
	}, {
		name:   "an event the log cannot take writes no state, says so after those it took, and runs no entry chain",
		refuse: "graph.two",
		want: []string{
			`graph.one appended, the state at ""`,
			`graph.two refused, the state at ""`,
			`graph.state_write_failed appended, the state at ""`,
			`apply returned an error`,
		},
	}, {
		name:   "the first event refused: nothing is written",
		refuse: "graph.one",
		want: []string{
			`graph.one refused, the state at ""`,
			`apply returned an error`,
		},
	}, {
		name:   "events that cannot be synced write no state",
		refuse: "sync",
		want: []string{
			`graph.one appended, the state at ""`,
			`graph.two appended, the state at ""`,
			`sync refused, the state at ""`,
			`graph.state_write_failed appended, the state at ""`,
			`apply returned an error`,
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			rt, _ := newRuntime(t)
			var notes []string
			log := &orderLog{co: rt.Checkout, notes: &notes, refuse: c.refuse, refusal: syscall.ENOSPC}
			rt.Events = log
			entry := HookFunc(func(ctx *Context) (Result, error) {
				notes = append(notes, "the entry chain of "+ctx.Node.ID+" ran, the state at "+log.pointer())
				return Degraded("x-entry", ErrIntegrationUnavailable), nil
			})
			g, err := Apply(rt.Graph, map[string]Hook{"x-entry": entry}, []Attachment{{Hook: "x-entry", Node: "draft", Boundary: Entry}})
			if err != nil {
				t.Fatal(err)
			}
			rt.Graph = g
			if c.block {
				log.appending = func(event string) {
					if event == "graph.one" {
						os.MkdirAll(rt.Checkout.Abs("docs/specs/item/"+StateFile+"/in-the-way"), 0o755)
					}
				}
			}
			item, _ := rt.WorkItem("item")
			st := NewState("item")
			st.enter("draft", rt.now())
			tr := &transition{state: st, step: Step{Node: "select", To: "draft"}, effects: effects{
				events: []emission{{"graph.one", "info", nil}, {"graph.two", "info", nil}}, write: true, enter: "draft"}}
			rt.lockedItem(item, func(tx *txn) error {
				step, err := tx.apply(tr)
				switch {
				case err != nil && c.refuse != "" && !errors.Is(err, syscall.ENOSPC):
					t.Errorf("apply = %v; want the log's refusal", err)
				case err != nil:
					notes = append(notes, "apply returned an error")
				case len(step.Messages) != 1 || !strings.Contains(step.Messages[0], "x-entry did not complete"):
					t.Errorf("step messages %q; want the entry chain's finding said", step.Messages)
					fallthrough
				default:
					notes = append(notes, "apply returned")
				}
				return err
			})
			if !slices.Equal(notes, c.want) {
				t.Errorf("order:\n  %s\nwant:\n  %s", strings.Join(notes, "\n  "), strings.Join(c.want, "\n  "))
			}
		})
	}
}
