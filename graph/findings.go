package graph

import "fmt"

// Finding is one thing a node's evaluation has to say to whoever reads a
// report: a message a hook returned, with the hook that returned it (its
// rule id), the node, a severity a CI system knows and, where known, the
// place in a file it is about.
//
// Every message of the hook that stopped a chain is a finding, at the
// severity it was given. A hook that passed or skipped may still warn; its
// warnings are findings, and never fail anything. Its notices say why it
// passed or skipped and are kept on its HookRun instead, so that a report
// is not a wall of "nothing to do here".
//
// A ReportOnly finding is one a repository hook made that check ran past
// a stopped chain (Runtime.AllFindings): it changes no verdict, and its
// severity is never error.
type Finding struct {
	Hook     string `json:"hook"`
	Node     string `json:"node"`
	Severity string `json:"severity"`
	Text     string `json:"text"`
	Path     string `json:"path,omitempty"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	// ReportOnly is set on the findings of a hook run report-only.
	ReportOnly bool `json:"reportOnly,omitempty"`
}

// StateHook is the rule id of findings about the item's graph state
// rather than about a hook's verdict (a skip declaration that is refused).
const StateHook = "graph-state"

// Stopper is the hook that stopped the node's exit chain (a block or a
// wait), "" when the chain passed or did not run.
func (n NodeReport) Stopper() string {
	for _, h := range n.Hooks {
		if h.Boundary == string(Exit) && h.Ran && !h.ReportOnly && (h.Status == string(StatusBlock) || h.Status == string(StatusWait)) {
			return h.Hook
		}
	}
	return ""
}

// Where is the finding's place as path:line:column, as much as is known;
// "" when it is about no file.
func (f Finding) Where() string {
	switch {
	case f.Path == "":
		return ""
	case f.Line > 0 && f.Column > 0:
		return fmt.Sprintf("%s:%d:%d", f.Path, f.Line, f.Column)
	case f.Line > 0:
		return fmt.Sprintf("%s:%d", f.Path, f.Line)
	}
	return f.Path
}

// HookRun is what one hook of a node's chains did under an evaluation: its
// status when it ran, and otherwise why it did not (the chain stopped
// before it, check does not evaluate entry chains, the node is declared
// skipped). Reason also carries what a hook that skipped or passed said
// about itself. ReportOnly is a hook that ran past its stopped chain
// (Runtime.AllFindings), whose status decided nothing; its Reason says
// why the chain would not have run it.
type HookRun struct {
	Hook       string `json:"hook"`
	Boundary   string `json:"boundary"`
	Ran        bool   `json:"ran"`
	Status     string `json:"status,omitempty"`
	Reason     string `json:"reason,omitempty"`
	ReportOnly bool   `json:"reportOnly,omitempty"`
}

// Reasons a hook did not run under check.
const (
	// NotRunEntry: check evaluates exit chains, the node's gate; an entry
	// chain runs as an item moves into a node.
	NotRunEntry = "check does not evaluate entry chains: they run as the item enters the node"
	// NotRunSkipped: a declared skip satisfies the node without a verdict.
	NotRunSkipped = "the node is declared skipped"
)

// chainFindings are the findings of one evaluated chain on node.
func chainFindings(node string, out ChainOutcome) []Finding {
	fs := []Finding{}
	for i := range out.Results {
		r := &out.Results[i]
		stopped := r == out.Blocking
		fallback := SeverityNotice
		if r.Status == StatusBlock {
			fallback = SeverityError
		}
		for _, m := range r.Messages {
			sev := NormalSeverity(m.Severity, fallback)
			if stopped && r.Status == StatusWait && sev == SeverityError {
				// A wait is for a person, not a fault in the files: it
				// fails only a gate that fails on anything unmet.
				sev = SeverityWarning
			}
			if !stopped {
				// A hook that let the chain go on failed nothing: an error
				// it reports is a warning, and its notices are its own.
				if sev == SeverityNotice {
					continue
				}
				sev = SeverityWarning
			}
			fs = append(fs, Finding{Hook: r.Hook, Node: node, Severity: sev, Text: m.Text,
				Path: m.Path, Line: max(m.Line, 0), Column: max(m.Column, 0)})
		}
		if stopped && len(r.Messages) == 0 {
			// An unmet node always says something, if only who stopped it.
			fs = append(fs, Finding{Hook: r.Hook, Node: node, Severity: fallback, Text: silentStop(r)})
		}
	}
	for _, w := range out.Warnings {
		w.Node = node
		fs = append(fs, w)
	}
	return fs
}

func silentStop(r *Result) string {
	if r.Status == StatusWait {
		return fmt.Sprintf("%s is waiting, and gave no reason", r.Hook)
	}
	return fmt.Sprintf("%s blocked, and gave no reason", r.Hook)
}

// chainRuns lists what each hook of the exit chain entries did in out,
// and the entry chain as not run by check. They are appended to *all,
// which holds every node's of one report in one array, and the node's own
// come back clipped.
func chainRuns(all *[]HookRun, n *Node, out *ChainOutcome, skipped string) []HookRun {
	from := len(*all)
	runs := *all
	for _, e := range n.Entry {
		runs = append(runs, HookRun{Hook: e.Hook, Boundary: string(Entry), Reason: NotRunEntry})
	}
	stopped := "" // why the hooks after a blocking one did not run
	for i, e := range n.Exit {
		run := HookRun{Hook: e.Hook, Boundary: string(Exit)}
		switch {
		case out == nil:
			run.Reason = skipped
		case i < len(out.Results):
			r := out.Results[i]
			run.Ran, run.Status = true, string(r.Status)
			if r.Status == StatusPass || r.Status == StatusSkip {
				run.Reason = ownNotices(r)
			}
		case out.Blocking != nil:
			if stopped == "" {
				stopped = "the chain stopped at " + out.Blocking.Hook + ", which " + verbed(out.Blocking.Status)
			}
			run.Reason = stopped
		}
		runs = append(runs, run)
	}
	*all = runs
	return runs[from:len(runs):len(runs)]
}

func verbed(s Status) string {
	if s == StatusWait {
		return "waits"
	}
	return "blocked"
}

// ownNotices joins what a hook that passed or skipped said at notice
// severity: why it had nothing to object to.
func ownNotices(r Result) string {
	s := ""
	for _, m := range r.Messages {
		if NormalSeverity(m.Severity, SeverityNotice) != SeverityNotice {
			continue
		}
		if s != "" {
			s += "; "
		}
		s += m.Render()
	}
	return s
}

// UnshownHook is a repository hook whose verdict a report does not show,
// and why: an author's first question when a rule seems to do nothing.
type UnshownHook struct {
	Node string
	Run  HookRun
	Why  string
}

// Unshown lists the repository (x-) hooks of the report's nodes that did
// not run at a reached node, with the reason, and those that ran at a node
// past the pointer, whose findings are not reported yet.
func (s *StatusReport) Unshown() []UnshownHook {
	var out []UnshownHook
	end := s.pointer()
	for i, n := range s.Nodes {
		for _, h := range n.Hooks {
			switch {
			case !IsExtension(h.Hook):
			case i < end && !h.Ran:
				out = append(out, UnshownHook{Node: n.Node, Run: h, Why: "did not run: " + h.Reason})
			case i >= end && h.Ran:
				out = append(out, UnshownHook{Node: n.Node, Run: h, Why: fmt.Sprintf("ran (%s), but %s is past the item's current node %s: its findings are reported once the item gets there", h.Status, n.Node, s.CurrentNode)})
			case i >= end:
				out = append(out, UnshownHook{Node: n.Node, Run: h, Why: fmt.Sprintf("did not run (%s), and %s is past the item's current node %s", h.Reason, n.Node, s.CurrentNode)})
			}
		}
	}
	return out
}
