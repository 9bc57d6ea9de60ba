package graph

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// Mermaid draws g as a Mermaid flowchart, top to bottom: one node per graph
// node in declaration order, one link per pair of nodes an edge joins,
// labelled with the outcomes that take it. A human gate is a hexagon, a
// terminal node a stadium, a code step a subroutine box, an agent step a
// rectangle; an optional or opt-in node has a dashed border and says so.
// An edge back to a node declared earlier (changes requested, more work)
// is dotted.
//
// With rep, the same loop is coloured by rep's verdicts: each node reached
// by its status, the nodes past the pointer greyed out as not reached yet,
// and the current node drawn with a thick border and "◉" before its id.
// rep nil draws the plain loop.
//
// The text is the same for the same inputs, byte for byte: a diagram
// checked into a repository changes only when the loop or the verdicts do.
func Mermaid(g *Graph, rep *StatusReport) string {
	d := mermaidDiagram{g: g, rep: rep, ids: make(map[string]string, len(g.Nodes)), classes: map[string][]string{}}
	return d.render()
}

// Mermaid class names. They say what a node is, not how it looks, and
// none is a word the flowchart grammar reserves.
const (
	mermaidPassed     = "passed"
	mermaidSkipped    = "skipped"
	mermaidBlocked    = "blocked"
	mermaidWaiting    = "waiting"
	mermaidNotReached = "notReached"
	mermaidCurrent    = "current"
	mermaidOptional   = "optional"
)

// mermaidClasses are the classes in the order their definitions and
// assignments are written, with their styles: colours that read on a
// light and a dark page alike, since the text colour is set with the fill.
var mermaidClasses = []struct{ name, style string }{
	{mermaidPassed, "fill:#dafbe1,stroke:#1a7f37,color:#0f3d1f"},
	{mermaidSkipped, "fill:#f6f8fa,stroke:#8c959f,color:#57606a"},
	{mermaidBlocked, "fill:#ffebe9,stroke:#cf222e,color:#82071e"},
	{mermaidWaiting, "fill:#fff8c5,stroke:#9a6700,color:#4d2d00"},
	{mermaidNotReached, "fill:#ffffff,stroke:#d0d7de,color:#8c959f"},
	{mermaidCurrent, "stroke-width:4px"},
	{mermaidOptional, "stroke-dasharray:5 5"},
}

// mermaidVerdict is the class of a node's status, "" for none. A switch
// rather than a map: a package-level map is built at initialisation, in
// every process, and few processes draw a diagram.
func mermaidVerdict(status string) string {
	switch Status(status) {
	case StatusPass:
		return mermaidPassed
	case StatusSkip:
		return mermaidSkipped
	case StatusBlock:
		return mermaidBlocked
	case StatusWait:
		return mermaidWaiting
	}
	return ""
}

// mermaidHere marks the current node's label.
const mermaidHere = "◉ "

type mermaidDiagram struct {
	g   *Graph
	rep *StatusReport
	b   strings.Builder
	// ids are the diagram ids of the graph's nodes.
	ids map[string]string
	// classes lists, per class, the diagram ids of its nodes in
	// declaration order.
	classes map[string][]string
}

func (d *mermaidDiagram) line(format string, args ...any) {
	d.b.WriteString("  ")
	fmt.Fprintf(&d.b, format, args...)
	d.b.WriteByte('\n')
}

func (d *mermaidDiagram) render() string {
	d.b.WriteString("flowchart TD\n")
	d.line("accTitle: %s", mermaidPlain(fmt.Sprintf("%s v%d", d.g.Name, d.g.Version)))
	if d.rep != nil {
		verdict := "unmet"
		if d.rep.OK {
			verdict = "ok"
		}
		d.line("accDescr: %s", mermaidPlain(fmt.Sprintf("%s at %s: %s", d.rep.WorkItem, d.rep.CurrentNode, verdict)))
	}
	for i, n := range d.g.Nodes {
		d.ids[n.ID] = mermaidID(i, n.ID)
	}
	verdicts, reached := d.verdicts()
	for _, n := range d.g.Nodes {
		d.node(n, verdicts, reached)
	}
	d.edges()
	for _, c := range mermaidClasses {
		if len(d.classes[c.name]) > 0 {
			d.line("classDef %s %s", c.name, c.style)
		}
	}
	for _, c := range mermaidClasses {
		if ids := d.classes[c.name]; len(ids) > 0 {
			d.line("class %s %s", strings.Join(ids, ","), c.name)
		}
	}
	return d.b.String()
}

// verdicts indexes the report's nodes by id, and which of them are reached.
func (d *mermaidDiagram) verdicts() (map[string]NodeReport, map[string]bool) {
	if d.rep == nil {
		return nil, nil
	}
	verdicts := make(map[string]NodeReport, len(d.rep.Nodes))
	for _, n := range d.rep.Nodes {
		verdicts[n.Node] = n
	}
	reached := map[string]bool{}
	in, _ := d.rep.Reached()
	for _, n := range in {
		reached[n.Node] = true
	}
	return verdicts, reached
}

func (d *mermaidDiagram) node(n *Node, verdicts map[string]NodeReport, reached map[string]bool) {
	id := d.ids[n.ID]
	title := n.ID
	// The second line: what kind of node, then its verdict.
	var notes []string
	switch {
	case n.OptIn:
		notes = append(notes, "opt-in")
	case n.Optional:
		notes = append(notes, "optional")
	}
	if n.OptIn || n.Optional {
		d.classes[mermaidOptional] = append(d.classes[mermaidOptional], id)
	}
	if d.rep != nil {
		v, ok := verdicts[n.ID]
		class := mermaidVerdict(v.Status)
		if ok && reached[n.ID] {
			notes = append(notes, v.Status)
			if v.Forced {
				notes = append(notes, "forced")
			}
		} else {
			class = mermaidNotReached
		}
		if class != "" {
			d.classes[class] = append(d.classes[class], id)
		}
		if n.ID == d.rep.CurrentNode {
			title = mermaidHere + title
			d.classes[mermaidCurrent] = append(d.classes[mermaidCurrent], id)
		}
	}
	label := mermaidText(title)
	if len(notes) > 0 {
		label += "<br>" + mermaidText(strings.Join(notes, ", "))
	}
	open, closer := mermaidShape(n)
	d.line(`%s%s"%s"%s`, id, open, label, closer)
}

// mermaidShape is the brackets that give a node its shape.
func mermaidShape(n *Node) (open, closer string) {
	switch {
	case n.Terminal:
		return "([", "])"
	case n.Actor == ActorHuman:
		return "{{", "}}"
	case n.Actor == ActorCode:
		return "[[", "]]"
	}
	return "[", "]"
}

// edges writes one link per pair of nodes, in the order of the first edge
// between them (nodes in declaration order, each node's edges in theirs):
// most loops route a skip along the same link as a pass, and two arrows
// drawn over each other read as one.
func (d *mermaidDiagram) edges() {
	type link struct {
		from, to string
		on       []string
	}
	var links []*link
	at := map[[2]string]*link{}
	for _, n := range d.g.Nodes {
		for _, e := range d.g.EdgesFrom(n.ID) {
			if _, ok := d.ids[e.To]; !ok {
				continue // compiled graphs have none; nothing to point at
			}
			key := [2]string{e.From, e.To}
			if l, ok := at[key]; ok {
				l.on = append(l.on, e.On)
				continue
			}
			l := &link{from: e.From, to: e.To, on: []string{e.On}}
			at[key] = l
			links = append(links, l)
		}
	}
	for _, l := range links {
		// A skip rides along the links a pass takes: it reads last.
		if i := slices.Index(l.on, OutcomeSkipped); i >= 0 {
			l.on = append(slices.Delete(l.on, i, i+1), OutcomeSkipped)
		}
		arrow := "-->"
		if d.g.Index(l.to) <= d.g.Index(l.from) {
			arrow = "-.->"
		}
		d.line(`%s %s|"%s"| %s`, d.ids[l.from], arrow, mermaidText(strings.Join(l.on, ", ")), d.ids[l.to])
	}
}

// mermaidID is the diagram id of the i-th node: its position, so that no
// two nodes share one, then its id reduced to letters, digits and
// underscores, so that the source stays readable and no id is a keyword
// (end) or reads as part of a link (a-->b, o, x).
func mermaidID(i int, id string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "n%d", i)
	if id != "" {
		b.WriteByte('_')
	}
	for _, r := range id {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// mermaidText escapes s for a quoted label: what would end the quote, start
// markup or an entity is written as a Mermaid entity (#quot;, #35;), and
// line breaks and other control characters become spaces.
func mermaidText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString("#quot;")
		case r == '#':
			b.WriteString("#35;")
		case r == '&':
			b.WriteString("#amp;")
		case r == '<':
			b.WriteString("#lt;")
		case r == '>':
			b.WriteString("#gt;")
		case r == '`':
			b.WriteString("#96;")
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mermaidPlain is s for a statement that runs to the end of its line
// (accTitle, accDescr), where entities are not read: one line, nothing
// that could end it or start a comment.
func mermaidPlain(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == ';' || r == '%' {
			return ' '
		}
		return r
	}, s)
}
