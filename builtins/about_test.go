package builtins

import "testing"

func TestEveryShippedHookSaysWhatItChecksAndHowToFixIt(t *testing.T) {
	for _, name := range Registry().Names() {
		a, ok := Describe(name)
		if !ok || a.Summary == "" || a.Checks == "" || a.Fix == "" {
			t.Errorf("%s: %+v, want a summary, what it checks and how to fix it", name, a)
		}
	}
	for name := range about {
		if _, ok := Registry().Lookup(name); !ok {
			t.Errorf("%s is described but not shipped", name)
		}
	}
}
