package corpus

import (
	"errors"
	"sync"
	"testing"
)

// loaded is the mirror's work items, read once per process.
var loaded = sync.OnceValues(func() (*Source, error) { return Load(Mirror()) })

// Shared is the original's work items for a test or benchmark, read from
// the mirror once per process; tb is skipped when the mirror is not on
// this machine, and fails when it is and cannot be read.
func Shared(tb testing.TB) *Source {
	tb.Helper()
	src, err := loaded()
	if errors.Is(err, ErrNoMirror) {
		tb.Skip(err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return src
}
