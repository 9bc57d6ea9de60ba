package main

import (
	"errors"
	"io"
	"testing"

	"github.com/the-loop/the-loop/policy"
)

// BenchmarkJSONElement writes the list elements check --all --format json
// writes for a generated corpus's reports, terminal-safe pass included.
func BenchmarkJSONElement(b *testing.B) {
	b.Setenv("HOME", b.TempDir())
	b.Setenv("THE_LOOP_CLI_CONFIG", "")
	e, err := policy.Open(policy.Options{Repo: corpusRepo(b, 100)})
	if err != nil {
		b.Fatal(err)
	}
	items, err := e.Items()
	if err != nil {
		b.Fatal(err)
	}
	reports, err := e.Check(items, false, policy.Selector{})
	if err != nil && !errors.As(err, new(policy.ItemsError)) {
		b.Fatal(err)
	}
	w := &jsonWriter{out: newOutput(io.Discard, io.Discard), list: true}
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range reports {
			if err := w.element(r); err != nil {
				b.Fatal(err)
			}
		}
	}
}
