package graph

import "slices"

// A chain stops at its first block or wait, so a repository's own rules
// attached after a shipped hook that blocks, or after a gate that waits,
// say nothing until that is fixed, and an author fixes one thing per run.
// Under Runtime.AllFindings, check runs those rules all the same, in
// report-only mode: their findings are shown, marked ReportOnly, and
// change nothing. The node's status, outcome and messages, the report's
// OK and so every exit code are what they are without it.
//
// Only repository (x-) hooks are run so: a shipped hook past the stopper
// may depend on what the stopper checked, and the-loop's own verdicts are
// already complete. A report-only hook runs as any repository hook does,
// with the chain's context, its step and time limits and its read-only
// files; it sees the results of the hooks that ran before it, the
// stopper's and the report-only ones before it included. Each runs
// whatever the others said: a block no more stops the rest than it
// changes the verdict. A hook that fails to run (an error, a panic, a
// step budget spent) is a report-only finding like any other.
//
// They run at reached nodes only, once the pointer is known: a node past
// it is not judged yet, and neither are its rules.

// reportOnly is one stopped chain's repository hooks still to run report
// only, kept with the report until their node counts as reached.
type reportOnly struct {
	node    int          // the node's index in the report
	hook    int          // the first entry's index in the node's Hooks
	ctx     Context      // the node's exit context, as its chain ran under it
	entries []ChainEntry // the chain's entries past the stopper
	ran     []Result     // what the chain ran, the stopper last
}

// stoppedRest is what n's exit chain, stopped in out, leaves to run report
// only; false when it stopped before no repository hook.
//
// Departure from the original (docs/compatibility.md#check---all-findings-runs-the-rules-behind-a-stopped-chain): a stopped chain's repository hooks run report-only under --all-findings.
func stoppedRest(node int, n *Node, ctx *Context, out *ChainOutcome) (reportOnly, bool) {
	done := len(out.Results)
	// A gate answered "changes requested" has one result more than
	// entries (sendsBack's block): its chain ran to the end.
	if out.Blocking == nil || done >= len(n.Exit) {
		return reportOnly{}, false
	}
	rest := n.Exit[done:]
	if !slices.ContainsFunc(rest, func(e ChainEntry) bool { return IsExtension(e.Hook) }) {
		return reportOnly{}, false
	}
	return reportOnly{node: node, hook: len(n.Entry) + done, ctx: *ctx, entries: rest, ran: out.Results}, true
}

// runReportOnly runs the report-only hooks of the nodes now reached, and
// keeps the others' for a Reach that may yet take the pointer there.
//
// The contexts kept read through the evaluation's Files, so a report that
// has pending runs must keep them: they exist only where a graph has
// repository hooks, whose evaluations lend no Arena (see Detach).
func (s *StatusReport) runReportOnly() {
	if len(s.pending) == 0 {
		return
	}
	end := s.pointer()
	kept := s.pending[:0]
	for i := range s.pending {
		p := &s.pending[i]
		if p.node >= end {
			kept = append(kept, *p)
			continue
		}
		p.run(&s.Nodes[p.node])
	}
	clear(s.pending[len(kept):])
	s.pending = kept
}

// run runs p's repository hooks in chain order, recording on n what each
// did and what it found.
func (p *reportOnly) run(n *NodeReport) {
	out := ChainOutcome{Results: slices.Clone(p.ran)}
	for k, e := range p.entries {
		if !IsExtension(e.Hook) {
			continue // the-loop's own: never run past its stopper
		}
		warned := len(out.Warnings)
		r := out.run(e, &p.ctx)
		h := &n.Hooks[p.hook+k]
		h.Ran, h.Status, h.ReportOnly = true, string(r.Status), true
		h.Reason = "report only: " + h.Reason
		if r.Status == StatusPass || r.Status == StatusSkip {
			if own := ownNotices(r); own != "" {
				h.Reason += "; " + own
			}
		}
		fs := reportOnlyFindings(n.Node, r)
		for _, w := range out.Warnings[warned:] {
			w.Node = n.Node
			fs = append(fs, w)
		}
		for i := range fs {
			fs[i].ReportOnly = true
			if fs[i].Severity == SeverityError {
				// It fails nothing, so it is no error.
				fs[i].Severity = SeverityWarning
			}
		}
		n.Findings = append(n.Findings, fs...)
	}
}

// reportOnlyFindings are what r would have been found to say had it been
// the chain's stopper (when it blocks or waits) or one the chain went on
// past (when it passes or skips).
func reportOnlyFindings(node string, r Result) []Finding {
	one := ChainOutcome{Status: r.Status, Results: []Result{r}}
	if r.Status != StatusPass && r.Status != StatusSkip {
		one.Blocking = &one.Results[0]
	}
	return chainFindings(node, one)
}
