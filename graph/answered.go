package graph

import (
	"slices"
	"strings"
	"time"
)

// answeredBy is who answered a human gate whose chain passed: the
// authors of the comments its hooks passed on (data comments, as
// classify-feedback hands them to record-feedback), each once, in the
// order they wrote. "" when no hook said.
func answeredBy(out ChainOutcome) string {
	var by []string
	for _, r := range out.Results {
		comments, _ := r.Data["comments"].([]any)
		for _, c := range comments {
			m, _ := c.(map[string]any)
			a, _ := m["author"].(string)
			if a = strings.TrimPrefix(strings.TrimSpace(a), "@"); a != "" && !slices.Contains(by, a) {
				by = append(by, a)
			}
		}
	}
	return strings.Join(by, ", ")
}

// Recorded is what the graph state says a human gate's last answer was,
// handed to the gate under a read-only evaluation that read no replies:
// the gate may say what the state claims, and must not take it as an
// answer, since the checkout's state is anyone's to edit.
type Recorded struct {
	// Outcome is the outcome the state records the gate left on.
	Outcome string
	// By is who answered, as the state records it; "" when it does not.
	By string
	// At is when the item left the gate; zero when the state's time does
	// not parse.
	At time.Time
}

// recordedAt is what st records of human gate n's answer, for a gate the
// item has left: nil for one it is at (what it records is an earlier
// visit's, which that visit answered) or has not left.
func recordedAt(st *State, n *Node) *Recorded {
	rec := st.Nodes[n.ID]
	if rec == nil || rec.Outcome == "" || rec.ExitedAt == "" || n.ID == st.CurrentNode {
		return nil
	}
	at, _ := parseStamp(rec.ExitedAt)
	return &Recorded{Outcome: rec.Outcome, By: rec.By, At: at.UTC()}
}
