package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/the-loop/the-loop/graph"
)

// tableFormat is for people: per item a verdict line, then the unmet nodes
// up to the pointer with their messages. Nodes beyond the pointer are not
// findings, only not done yet, so they are counted rather than listed.
type tableFormat struct{}

func (tableFormat) write(out *Output, reports []*graph.StatusReport, view checkView) error {
	var b strings.Builder
	satisfied := 0
	for _, r := range reports {
		verdict := "UNMET"
		if r.OK {
			verdict = "ok"
		}
		if !r.Fails(view.FailOn) {
			satisfied++
		}
		fmt.Fprintf(&b, "%s: %s (at %s)\n", visible(r.WorkItem), verdict, visible(r.CurrentNode))
		reached, ahead := r.Reached()
		for _, n := range reached {
			if n.Satisfied() {
				continue
			}
			writeNode(&b, n)
		}
		if !view.All {
			writeAhead(&b, ahead)
		}
	}
	if view.All {
		what := "satisfied"
		if view.FailOn == graph.FailOnBlock {
			what = "not blocked"
		}
		fmt.Fprintf(&b, "\n%d/%d work items %s", satisfied, len(reports)+view.Unevaluated, what)
		if view.Unevaluated > 0 {
			fmt.Fprintf(&b, "; %d could not be evaluated", view.Unevaluated)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(out.Stdout, b.String())
	return err
}

func writeNode(b *strings.Builder, n graph.NodeReport) {
	flag := ""
	if n.Forced {
		flag = " (forced)"
	}
	fmt.Fprintf(b, "  %-6s %s%s\n", statusMark(n.Status), visible(n.Node), flag)
	for _, m := range n.Messages {
		fmt.Fprintf(b, "         - %s\n", visible(m))
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
func writeAhead(b *strings.Builder, ahead []graph.NodeReport) {
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
