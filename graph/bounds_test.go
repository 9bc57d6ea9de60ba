package graph

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// The widest characters there are in the state's encoding: an astral
// character is two \u escapes, 12 bytes, and a control character one, 6.
var (
	astral  = "\U0001F600"
	control = "\x01"
)

const itemDir = "docs/specs/item"

func stateBytes(t *testing.T, rt *Runtime) []byte {
	t.Helper()
	data, err := os.ReadFile(rt.Checkout.Abs(itemDir + "/" + StateFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return data
}

// stillWorks asserts the item's state reads, it is judged, and it moves.
func stillWorks(t *testing.T, rt *Runtime) {
	t.Helper()
	if _, err := LoadState(rt.Checkout, itemDir, "item"); err != nil {
		t.Fatalf("the state no longer reads: %v", err)
	}
	if _, err := rt.Status("item", false); err != nil {
		t.Fatalf("the item can no longer be judged: %v", err)
	}
	res, err := rt.Force("item", "build", "moves after all that", "@ops")
	if err != nil || res.ToNode != "build" {
		t.Fatalf("the item can no longer be moved: %+v, %v", res, err)
	}
	if _, err := rt.Advance("item", nil); err != nil {
		t.Fatalf("the item can no longer advance: %v", err)
	}
}

func TestManyLongForcesKeepTheStateReadable(t *testing.T) {
	for _, c := range []struct {
		name   string
		char   string
		forces int
	}{
		{"ascii", "r", 5},
		{"astral characters, 12 bytes each", astral, 3},
		{"control characters, 6 bytes each", control, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			rt, _ := newRuntime(t)
			reason := func(i int) string { return fmt.Sprintf("%04d", i) + strings.Repeat(c.char, MaxReason-4) }
			actor := strings.Repeat(c.char, MaxActor)
			// The state of an item forced MaxForcedKept times already, as
			// long as each force may be (each written by Force would take
			// the test minutes), then more forces.
			seed := NewState("item")
			seed.CurrentNode = "draft"
			for i := range MaxForcedKept {
				seed.Forced = append(seed.Forced, map[string]any{"from": "select", "to": "draft", "reason": reason(i), "actor": actor,
					"at": "2026-11-30T01:02:03+00:00", "warnings": []any{strings.Repeat(c.char, 200)}})
			}
			if err := seed.Save(rt.Checkout, itemDir); err != nil {
				t.Fatal(err)
			}
			c.forces += MaxForcedKept
			targets := []string{"draft", "review", "build"}
			for i := MaxForcedKept; i < c.forces; i++ {
				if _, err := rt.Force("item", targets[i%len(targets)], reason(i), actor); err != nil {
					t.Fatalf("force %d: %v", i, err)
				}
			}
			st, err := LoadState(rt.Checkout, itemDir, "item")
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Forced) != MaxForcedKept {
				t.Fatalf("the state keeps %d forces; want the most recent %d", len(st.Forced), MaxForcedKept)
			}
			first, _ := st.Forced[0]["reason"].(string)
			last, _ := st.Forced[MaxForcedKept-1]["reason"].(string)
			if !strings.HasPrefix(first, fmt.Sprintf("%04d", c.forces-MaxForcedKept)) || !strings.HasPrefix(last, fmt.Sprintf("%04d", c.forces-1)) {
				t.Errorf("kept forces %.4s..%.4s; want the most recent", first, last)
			}
			if n := len(stateBytes(t, rt)); n > MaxStateBytes/2 {
				t.Errorf("the state is %d bytes; the bounds should keep it well under %d", n, MaxStateBytes)
			}
			stillWorks(t, rt)
		})
	}
}

func TestAReasonOrActorOverItsBoundIsRefusedAndNothingWritten(t *testing.T) {
	for _, c := range []struct {
		name, flag string
		do         func(rt *Runtime) error
	}{
		{"a force's huge reason", "--reason", func(rt *Runtime) error {
			_, err := rt.Force("item", "draft", strings.Repeat("x", 30<<20), "")
			return err
		}},
		{"a force's reason one over", "--reason", func(rt *Runtime) error {
			_, err := rt.Force("item", "draft", strings.Repeat(astral, MaxReason+1), "")
			return err
		}},
		{"a skip's reason one over", "--reason", func(rt *Runtime) error {
			_, err := rt.DeclareSkips("item", []string{"docs"}, strings.Repeat("é", MaxReason+1), "")
			return err
		}},
		{"a force's actor", "--actor", func(rt *Runtime) error {
			_, err := rt.Force("item", "draft", "why", strings.Repeat("a", MaxActor+1))
			return err
		}},
		{"a skip's actor", "--actor", func(rt *Runtime) error {
			_, err := rt.DeclareSkips("item", []string{"docs"}, "why", strings.Repeat("a", 1<<20))
			return err
		}},
		{"a completion's actor", "--actor", func(rt *Runtime) error {
			_, err := rt.Complete("item", "", strings.Repeat("a", MaxActor+1), nil)
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rt, rec := newRuntime(t)
			if _, err := rt.Start("item"); err != nil {
				t.Fatal(err)
			}
			before := stateBytes(t, rt)
			events := len(rec.events)
			err := c.do(rt)
			var tl *TooLongError
			if !errors.As(err, &tl) || tl.Flag != c.flag || !strings.Contains(err.Error(), fmt.Sprintf("at most %d", tl.Limit)) {
				t.Fatalf("got %v; want a TooLongError naming %s and its bound", err, c.flag)
			}
			if !bytes.Equal(stateBytes(t, rt), before) || len(rec.events) != events {
				t.Error("a refused verb wrote something")
			}
			stillWorks(t, rt)
		})
	}
}

func TestAReasonAtItsBoundIsKeptWhole(t *testing.T) {
	rt, _ := newRuntime(t)
	reason := strings.Repeat(astral, MaxReason)
	// Space around it is not counted: the state keeps it trimmed.
	if _, err := rt.DeclareSkips("item", []string{"docs"}, "  "+reason+"\n", strings.Repeat("b", MaxActor)); err != nil {
		t.Fatal(err)
	}
	st, _ := LoadState(rt.Checkout, itemDir, "item")
	for _, n := range []string{"draft", "review"} {
		if st.Skips[n]["reason"] != reason {
			t.Errorf("skip %s keeps %d bytes of the reason; want it whole", n, len(fmt.Sprint(st.Skips[n]["reason"])))
		}
	}
	stillWorks(t, rt)
}

// padded writes a state whose file is want bytes, padded by a key
// another tool recorded.
func padded(t *testing.T, rt *Runtime, want int) {
	t.Helper()
	st := NewState("item")
	st.CurrentNode = "draft"
	st.extra = map[string]json.RawMessage{}
	st.extra["zPadding"] = []byte(`""`)
	base, err := st.format()
	if err != nil {
		t.Fatal(err)
	}
	st.extra["zPadding"] = []byte(`"` + strings.Repeat("p", want-len(base)) + `"`)
	if err := st.Save(rt.Checkout, itemDir); err != nil {
		t.Fatal(err)
	}
	if n := len(stateBytes(t, rt)); n != want {
		t.Fatalf("padded the state to %d bytes, want %d", n, want)
	}
}

func TestAWriteTheReaderWouldRefuseIsRefusedAndTheItemStillMoves(t *testing.T) {
	for _, room := range []int{0, 1, 500, 5000} {
		t.Run(fmt.Sprintf("%d bytes under the bound", room), func(t *testing.T) {
			rt, rec := newRuntime(t)
			padded(t, rt, MaxStateBytes-room)
			before := stateBytes(t, rt)
			events := len(rec.events)
			_, err := rt.Force("item", "review", strings.Repeat(astral, MaxReason), "")
			var se *StateError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), "not written") || !strings.Contains(err.Error(), "4 MiB") {
				t.Fatalf("force = %v; want the write refused, naming the bound", err)
			}
			if !bytes.Equal(stateBytes(t, rt), before) {
				t.Fatal("the refused state was written")
			}
			if rec.has("graph.forced") && len(rec.events) == events {
				t.Error("no event says the state was not written")
			}
			if _, err := rt.Status("item", false); err != nil {
				t.Fatalf("the item can no longer be judged: %v", err)
			}
			// Whoever must can make room (the padding is not ours to drop),
			// and the item moves again.
			st, _ := LoadState(rt.Checkout, itemDir, "item")
			delete(st.extra, "zPadding")
			if err := st.Save(rt.Checkout, itemDir); err != nil {
				t.Fatal(err)
			}
			stillWorks(t, rt)
		})
	}
}

func TestAnAnswerByManyKeepsTheStateBounded(t *testing.T) {
	for _, c := range []struct {
		name    string
		authors int
		width   int
	}{
		{"a few", 3, 10},
		{"many short logins", 5000, 8},
		{"a few huge names", 4, 3000},
		{"one name over the bound", 1, MaxStoredMessage * 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			var names []string
			for i := range c.authors {
				names = append(names, fmt.Sprintf("%0*d", c.width, i))
			}
			list := strings.Join(names, ", ")
			got := cutList(list)
			if len(got) > MaxStoredMessage+64 {
				t.Errorf("kept %d bytes; want at most about %d", len(got), MaxStoredMessage)
			}
			if len(list) <= MaxStoredMessage && got != list {
				t.Errorf("cut a list that fits: %q", got)
			}
			if len(list) > MaxStoredMessage && !strings.Contains(got, "more not kept") {
				t.Errorf("a cut list does not say so: %.80q", got)
			}
		})
	}
}
