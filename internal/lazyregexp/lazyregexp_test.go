package lazyregexp

import (
	"sync"
	"testing"
)

func TestCompiledOnceOnFirstUse(t *testing.T) {
	r := &Regexp{str: `^issue-(\d+)$`} // as New makes it outside a test binary
	if r.rx != nil {
		t.Fatal("compiled before use")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if m := r.FindStringSubmatch("issue-12"); len(m) != 2 || m[1] != "12" {
				t.Errorf("FindStringSubmatch = %q", m)
			}
		})
	}
	wg.Wait()
	if r.String() != `^issue-(\d+)$` || !r.MatchString("issue-1") || r.MatchString("issue-") {
		t.Errorf("the expression is not %q", `^issue-(\d+)$`)
	}
}

func TestNewCompilesInATestBinary(t *testing.T) {
	if !inTest {
		t.Fatal("a test binary is not told apart")
	}
	defer func() {
		if recover() == nil {
			t.Error("a bad expression did not panic in New")
		}
	}()
	New(`(`)
}

func TestExpandedOnFirstUse(t *testing.T) {
	calls := 0
	expand := func(s string) string { calls++; return "^" + s + "$" }
	r := &Regexp{str: `a+`, expand: expand} // as NewExpanded makes it outside a test binary
	if calls != 0 || r.rx != nil {
		t.Fatal("expanded or compiled before use")
	}
	for _, tc := range []struct {
		in   string
		want bool
	}{{"aaa", true}, {"baa", false}, {"aab", false}} {
		if got := r.MatchString(tc.in); got != tc.want {
			t.Errorf("MatchString(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if calls != 1 || r.String() != `^a+$` {
		t.Errorf("expand called %d times, expression %q; want once, ^a+$", calls, r.String())
	}
	if NewExpanded(`b`, nil).String() != `b` {
		t.Error("a nil expand changed the expression")
	}
}
