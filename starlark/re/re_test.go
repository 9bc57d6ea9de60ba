package re

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	sl "go.starlark.net/starlark"
)

// budget is a Budget with fixed allowances, recording what it was asked.
type budget struct {
	steps, bytes uint64
	spent        uint64
	refused      string
}

func (b *budget) Charge(_ *sl.Thread, n uint64, what func() string) error {
	if b.spent += n; b.spent > b.steps {
		b.refused = what()
		return fmt.Errorf("out of steps: %s", b.refused)
	}
	return nil
}

func (b *budget) Allow(n uint64, what func() string) error {
	if n > b.bytes {
		b.refused = what()
		return fmt.Errorf("out of memory: %s", b.refused)
	}
	return nil
}

func (b *budget) Allowance() uint64 { return b.bytes }

func (b *budget) Refuse(what func() string) error {
	b.refused = what()
	return errors.New("refused: " + b.refused)
}

func run(t *testing.T, b Budget, src string) (sl.Value, error) {
	t.Helper()
	thread := &sl.Thread{Name: "test"}
	if b != nil {
		SetBudget(thread, b)
	}
	return sl.Eval(thread, "test.star", src, sl.StringDict{"re": Module})
}

func TestTheModuleWorksWithoutABudget(t *testing.T) {
	v, err := run(t, nil, `re.split("(,)", "a,b")`)
	if err != nil || v.String() != `["a", ",", "b"]` {
		t.Errorf("re.split = %v, %v", v, err)
	}
}

func TestSplittingWithManyGroupsIsRefusedBeforeTheMatchesAreBuilt(t *testing.T) {
	b := &budget{steps: 1 << 40, bytes: 256 << 20}
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := run(t, b, `re.split("(a?)" * 200, "b" * 200000)`)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(b.refused, "found more than") || !strings.Contains(b.refused, "of 200 groups each") {
		t.Fatalf("re.split = %v, refused %q; want it refused for its matches' groups", err, b.refused)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 128<<20 && !raceEnabled {
		t.Errorf("refusing allocated %d MiB; the matches must not all be collected first", grew>>20)
	}
}

func TestScanningIsChargedByThePatternsSize(t *testing.T) {
	small := &budget{steps: 1 << 40, bytes: 1 << 30}
	if _, err := run(t, small, `re.search("x", "a" * 100000)`); err != nil {
		t.Fatal(err)
	}
	large := &budget{steps: 1 << 40, bytes: 1 << 30}
	if _, err := run(t, large, `re.search("(a|b|c|d|e){1000}", "a" * 100000)`); err != nil {
		t.Fatal(err)
	}
	if large.spent < 100*small.spent {
		t.Errorf("a pattern of thousands of instructions cost %d steps against %d for one of a few; want its size charged", large.spent, small.spent)
	}
	tight := &budget{steps: 100000, bytes: 1 << 30}
	if _, err := run(t, tight, `re.search("(a|b|c|d|e){1000}", "a" * 100000)`); err == nil || !strings.Contains(tight.refused, "instructions") {
		t.Errorf("a scan past the budget = %v, refused %q; want it refused before it runs", err, tight.refused)
	}
}

func TestCompilingIsPaidForBeforeItRuns(t *testing.T) {
	b := &budget{steps: 1 << 40, bytes: 1 << 20}
	if _, err := run(t, b, `re.compile("((a{1000}){1000})")`); err == nil {
		t.Error("a pattern compiling to a million instructions fitted a 1 MiB allowance")
	}
}

func TestSubBuildsNoStringPastItsAllowance(t *testing.T) {
	b := &budget{steps: 1 << 40, bytes: 1 << 20}
	if _, err := run(t, b, `re.sub("a", "b" * 1000, "a" * 2000)`); err == nil || !strings.Contains(b.refused, "building a string") {
		t.Errorf("re.sub = %v, refused %q; want the growing string refused", err, b.refused)
	}
}

func TestOneMatchCannotExpandPastTheAllowance(t *testing.T) {
	b := &budget{steps: 1 << 40, bytes: 64 << 20}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := run(t, b, `re.sub("(?s).+", "\\g<0>" * 2000, "a" * 1000000)`)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(b.refused, "building a string of over") {
		t.Fatalf("re.sub = %v, refused %q; want it refused before writing the match 2000 times", err, b.refused)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<20 && !raceEnabled {
		t.Errorf("refusing allocated %d MiB", grew>>20)
	}
}
