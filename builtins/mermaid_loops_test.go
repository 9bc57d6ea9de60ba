package builtins

import (
	"fmt"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/graphs"
)

// graph.Mermaid draws the loops for graph show and graph status; this
// package holds the checker lint-artifacts holds diagrams to, and graph
// cannot import it. So the pictures are held to it here.

// TestMermaidOfEveryShippedLoopPassesTheChecker draws each shipped loop
// plain, then with an item at every node in turn, its verdicts cycling
// through pass, skip, block and wait and every third one forced.
func TestMermaidOfEveryShippedLoopPassesTheChecker(t *testing.T) {
	for _, name := range graphs.Names {
		src, err := graphs.Loop(name)
		if err != nil {
			t.Fatal(err)
		}
		g, err := graph.Compile(graphs.FileName(name), src, Registry())
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) {
			requireCleanMermaid(t, "plain", graph.Mermaid(g, nil))
			for _, at := range g.Nodes {
				rep := cyclingReport(g, at.ID)
				requireCleanMermaid(t, "at "+at.ID, graph.Mermaid(g, rep))
			}
		})
	}
}

// TestMermaidOfAwkwardNodeIDsPassesTheChecker draws a loop whose ids are
// a keyword, link syntax, brackets, quotes and markup.
func TestMermaidOfAwkwardNodeIDsPassesTheChecker(t *testing.T) {
	ids := []string{"end", "a-->b", `say "hi"`, "[x] (y) {z}", "a|b", "<b>&amp;</b>", "x", "o", "#quot;", "`md`", "graph", "subgraph", "a; b", "%% c", "désign"}
	var b strings.Builder
	b.WriteString("version: 1\nname: awkward\nstart: 'end'\nnodes:\n")
	for i, id := range ids {
		fmt.Fprintf(&b, "  - {id: %q, actor: %s, optional: %v, terminal: %v}\n", id, []string{"agent", "human", "code"}[i%3], i%4 == 1, i == len(ids)-1)
	}
	b.WriteString("edges:\n")
	for i := range ids[:len(ids)-1] {
		fmt.Fprintf(&b, "  - {from: %q, to: %q, on: pass}\n", ids[i], ids[i+1])
		fmt.Fprintf(&b, "  - {from: %q, to: %q, on: %q}\n", ids[i+1], ids[i], `changes "requested" | [now]`)
	}
	g, err := graph.Compile("awkward.yaml", []byte(b.String()), Registry())
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	requireCleanMermaid(t, "plain", graph.Mermaid(g, nil))
	for _, at := range g.Nodes {
		requireCleanMermaid(t, "at "+at.ID, graph.Mermaid(g, cyclingReport(g, at.ID)))
	}
}

// cyclingReport is a report of an item at node current on g, whose nodes
// take every verdict in turn.
func cyclingReport(g *graph.Graph, current string) *graph.StatusReport {
	statuses := []graph.Status{graph.StatusPass, graph.StatusSkip, graph.StatusBlock, graph.StatusWait}
	rep := &graph.StatusReport{WorkItem: "issue-1", CurrentNode: current, Loop: g.Name}
	for i, n := range g.Nodes {
		rep.Nodes = append(rep.Nodes, graph.NodeReport{Node: n.ID, Status: string(statuses[i%len(statuses)]), Forced: i%3 == 0})
	}
	return rep
}

func requireCleanMermaid(t *testing.T, what, src string) {
	t.Helper()
	if !strings.HasPrefix(src, "flowchart TD\n") {
		t.Errorf("%s: does not open with flowchart TD:\n%s", what, src)
	}
	for _, is := range checkMermaid(src) {
		t.Errorf("%s: line %d: %s\n%s", what, is.Line, is.Msg, strings.Split(src, "\n")[is.Line-1])
	}
}
