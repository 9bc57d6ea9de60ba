package graph

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// What one verb may add to a work item's state. A state file is read up
// to MaxStateBytes; these keep a long-lived item's state well under it,
// and Save refuses a state over it (a write its reader would refuse would
// leave an item nobody can judge or move again).
//
// Departure from the original (docs/compatibility.md#what-a-verb-adds-to-graph-statejson-is-bounded): reasons, actors, forces and who answered are bounded.
const (
	// MaxReason bounds a --reason (a force's, a skip's), in characters.
	// A longer one is refused, never cut: the reason is the record.
	MaxReason = 1000
	// MaxActor bounds an --actor, in characters.
	MaxActor = 200
	// MaxForcedKept is how many forces the state keeps, the most recent;
	// the event log keeps every one (graph.forced).
	MaxForcedKept = 100
)

// TooLongError refuses a flag's value over what the state keeps of it.
type TooLongError struct {
	Flag         string
	Chars, Limit int
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("%s: got %d characters, want at most %d; the state keeps it whole, so it is refused rather than cut (put the detail in the item's own files and refer to it)", e.Flag, e.Chars, e.Limit)
}

// checkLength refuses v, the value of flag, over limit characters.
func checkLength(flag, v string, limit int) error {
	if n := utf8.RuneCountInString(strings.TrimSpace(v)); n > limit {
		return &TooLongError{Flag: flag, Chars: n, Limit: limit}
	}
	return nil
}

// keepRecent is list's last n entries, in a slice of its own.
func keepRecent[T any](list []T, n int) []T {
	if len(list) <= n {
		return list
	}
	return append([]T(nil), list[len(list)-n:]...)
}

// cutList is the comma-separated list as the state keeps it: whole
// entries up to MaxStoredMessage bytes, then how many were left out.
func cutList(list string) string {
	if len(list) <= MaxStoredMessage {
		return list
	}
	cut := strings.LastIndex(list[:MaxStoredMessage], ", ")
	if cut < 0 {
		cut = boundary(list, MaxStoredMessage)
	}
	return fmt.Sprintf("%s, … (%d more not kept)", list[:cut], strings.Count(list[cut:], ", "))
}
