package graph

import "testing"

func TestARunOrAStepFailsOnlyShortOfAGateOrTheEnd(t *testing.T) {
	for stopped, fails := range map[string]bool{
		"wait": false, StoppedTerminal: false,
		"block": true, "escalated": true, StoppedLooping: true, StoppedMaxNodes: true,
	} {
		if got := (&RunReport{Stopped: stopped}).Fails(); got != fails {
			t.Errorf("a run stopped %q: Fails = %v, want %v", stopped, got, fails)
		}
	}
	for status, fails := range map[Status]bool{StatusPass: false, StatusWait: false, StatusBlock: true, "escalated": true} {
		if got := (&Step{Status: string(status)}).Fails(); got != fails {
			t.Errorf("a step %q: Fails = %v, want %v", status, got, fails)
		}
	}
}
