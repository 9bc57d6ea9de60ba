//go:build unix

package main

import (
	"slices"
	"testing"
	"time"
)

func TestSplitCutsCommandsAtDoubleDashes(t *testing.T) {
	got := split([]string{"--", "a", "x", "--", "b", "--", "--"})
	if len(got) != 2 || !slices.Equal(got[0], []string{"a", "x"}) || !slices.Equal(got[1], []string{"b"}) {
		t.Errorf("split = %q", got)
	}
}

func TestMedianIsTheMiddleRun(t *testing.T) {
	ds := []time.Duration{5, 1, 9, 3, 7}
	if m := median(ds); m != 5 {
		t.Errorf("median = %v, want 5", m)
	}
	if !slices.Equal(ds, []time.Duration{5, 1, 9, 3, 7}) {
		t.Error("median reordered its argument")
	}
	if median(nil) != 0 || minimum(nil) != 0 || minimum(ds) != 1 {
		t.Error("empty or minimum case wrong")
	}
}

func TestASeriesRecordsEachRun(t *testing.T) {
	var s series
	if err := s.run([]string{"true"}); err != nil {
		t.Skip("no true here:", err)
	}
	if err := s.run([]string{"false"}); err != nil {
		t.Errorf("a command exiting 1 is a result, not an error: %v", err)
	}
	if len(s.wall) != 2 {
		t.Errorf("recorded %d runs, want 2", len(s.wall))
	}
	if err := s.run([]string{"/nonexistent/command"}); err == nil {
		t.Error("a command that cannot start was not an error")
	}
}
