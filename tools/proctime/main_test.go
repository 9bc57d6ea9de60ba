//go:build unix

package main

import (
	"slices"
	"strings"
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

func TestASeriesWarnsOfRunsThatDidNoWork(t *testing.T) {
	cases := []struct {
		codes []int
		want  string
	}{
		{[]int{1, 1, 1}, ""},
		{[]int{0, 1}, "runs exited differently ([0 1])"},
		{[]int{2, 2}, "every run exited 2"},
	}
	for _, c := range cases {
		s := series{codes: c.codes}
		if got := s.warning(); (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("warning for %v = %q, want %q", c.codes, got, c.want)
		}
	}
}

func TestRunRefusesNoCommand(t *testing.T) {
	var out, errs strings.Builder
	if code := run([]string{"-n", "1"}, &out, &errs); code != 2 || !strings.Contains(errs.String(), "usage") {
		t.Errorf("run with no command = %d, %q", code, errs.String())
	}
	if code := run([]string{"-n", "2", "--", "true", "--", "true"}, &out, &errs); code != 0 || strings.Count(out.String(), "wall") != 2 {
		t.Errorf("run of two commands = %d, %q", code, out.String())
	}
}
