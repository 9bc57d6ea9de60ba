package main

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/the-loop/the-loop/graph"
)

// textFormat is for people: per item a verdict line, then the unmet nodes
// up to the pointer with their findings, and the warnings of those that
// are met. Nodes beyond the pointer are not findings, only not done yet,
// so they are counted rather than listed. graph status lists every reached
// node instead.
type textFormat struct{}

func (textFormat) start(out *Output, view checkView) reportWriter {
	return &textWriter{out: out, view: view}
}

// textWriter writes each item's lines as its report comes.
type textWriter struct {
	out   *Output
	view  checkView
	count counted
	b     bytes.Buffer // one item's lines, reused
}

func (w *textWriter) report(r *graph.StatusReport) error {
	w.count.add(r, w.view.FailOn)
	b := &w.b
	b.Reset()
	if w.view.Status {
		writeStatus(b, r)
	} else {
		fmt.Fprintf(b, "%s\n", visible(itemHeadline(r)))
		reached, ahead := r.Reached()
		for _, n := range reached {
			if !n.Satisfied() || hasWarnings(n) {
				writeNode(b, n)
			}
		}
		if !w.view.All {
			writeAhead(b, ahead)
		}
		if w.view.Verbose {
			writeUnshown(b, r)
		}
	}
	_, err := w.out.Stdout.Write(b.Bytes())
	return err
}

func (w *textWriter) finish(view checkView) error {
	if !view.All {
		return nil
	}
	_, err := fmt.Fprintf(w.out.Stdout, "\n%s\n", view.tally(w.count))
	return err
}

// writeUnshown says, for -v, which of the repository's hooks the report
// does not show, and why.
func writeUnshown(b *bytes.Buffer, r *graph.StatusReport) {
	for _, u := range r.Unshown() {
		fmt.Fprintf(b, "  note   %s at %s %s %s\n", visible(u.Run.Hook), visible(u.Node), u.Run.Boundary, visible(u.Why))
	}
}

// writeStatus lists every node up to the pointer, met or not, where
// check's text lists only the unmet ones.
func writeStatus(b *bytes.Buffer, r *graph.StatusReport) {
	fmt.Fprintf(b, "%s: at %s\n", visible(r.WorkItem), visible(r.CurrentNode))
	if r.Parked != nil {
		fmt.Fprintf(b, "  parked since %s\n", visible(fmt.Sprint(r.Parked["since"])))
	}
	reached, ahead := r.Reached()
	for _, n := range reached {
		writeNode(b, n)
	}
	writeAhead(b, ahead)
}

func hasWarnings(n graph.NodeReport) bool {
	for _, f := range n.Findings {
		if f.Severity == graph.SeverityWarning {
			return true
		}
	}
	return false
}

// writeNode is a node's status line and its findings, each with its place:
// the findings of a met node are only warnings, and say so.
func writeNode(b *bytes.Buffer, n graph.NodeReport) {
	// Departure from the original (docs/compatibility.md#check-lists-every-unmet-node-it-reached-with-its-findings): graph status's marks, every finding with its place, in ASCII.
	flag := ""
	if n.Forced {
		flag = " (forced)"
	}
	fmt.Fprintf(b, "  %-6s %s%s\n", statusMark(n.Status), visible(n.Node), flag)
	if n.Status == string(graph.StatusSkip) && len(n.Findings) == 0 {
		// A declared skip: its provenance is the one thing to say.
		for _, m := range n.Messages {
			fmt.Fprintf(b, "         - %s\n", visible(m))
		}
		return
	}
	for _, f := range n.Findings {
		prefix := ""
		if f.Severity == graph.SeverityWarning {
			prefix = "warning: "
		}
		if graph.IsExtension(f.Hook) {
			// A repository's own rule says whose finding it is: its
			// author looks for it by name.
			prefix += f.Hook + ": "
		}
		text := f.Text
		if w := f.Where(); w != "" {
			text += " (" + w + ")"
		}
		text += reportOnlyTag(f)
		fmt.Fprintf(b, "         - %s%s\n", prefix, visible(text))
	}
}

func statusMark(s string) string {
	switch s {
	case "pass":
		return "ok"
	case "skip":
		return "--"
	case "wait":
		return "wait"
	}
	return strings.ToUpper(s)
}

// writeAhead counts the unmet nodes beyond the pointer, when there are any.
func writeAhead(b *bytes.Buffer, ahead []graph.NodeReport) {
	pending := 0
	for _, n := range ahead {
		if !n.Satisfied() {
			pending++
		}
	}
	if pending > 0 {
		fmt.Fprintf(b, "  ....   %d node(s) ahead not met yet\n", pending)
	}
}
