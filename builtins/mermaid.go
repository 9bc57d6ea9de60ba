package builtins

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/the-loop/the-loop/internal/lazyregexp"
)

// A small mermaid syntax checker, enough to catch the faults that stop a
// diagram rendering on a code host without a browser in the loop.
//
// Every diagram must open with a known type. Flowcharts (graph, flowchart)
// are parsed statement by statement: node ids and shapes, labels (a label is
// either one quoted string or plain text free of []{}()|"), links with and
// without text, |edge labels|, &-groups, :::class suffixes, @{shape data},
// subgraph/end balance, direction, classDef, class, style, linkStyle, click
// and the accessibility statements. Sequence diagrams are parsed line by
// line: participant/actor declarations, messages (which need ": text"),
// notes, and the loop/alt/else/opt/par/and/rect/critical/option/break/box
// blocks and their end. Every other known type is held to balanced quotes and
// brackets, up to a "label: free text" colon after which a line is prose;
// entity-relationship crow's feet ({, }) are not brackets, and mindmap
// shapes are deliberately lopsided, so a mindmap is only held to its header.
// The checker errs on the side of silence: a construct it does not know is a
// false alarm waiting to happen, so only constructs mermaid itself rejects
// are reported. The mermaid documentation's own examples and every diagram in
// the reference implementation's specs were used to calibrate it.

// mermaidIssue is one fault in a diagram. Line counts from 1 at the first
// line of the diagram's text.
type mermaidIssue struct {
	Line int
	Msg  string
}

type mermaidKind int

const (
	mermaidFlow mermaidKind = iota
	mermaidSequence
	mermaidBalanced // brackets and quotes must balance
	mermaidER       // balanced, after removing relationship cardinalities
	mermaidFree     // header only: mindmap shapes are deliberately unbalanced
)

// mermaidTypes are the diagram keywords mermaid recognises on the first line.
var mermaidTypes = map[string]mermaidKind{
	"graph": mermaidFlow, "flowchart": mermaidFlow, "flowchart-elk": mermaidFlow, "flowchart-v2": mermaidFlow,
	"sequenceDiagram": mermaidSequence,
	"erDiagram":       mermaidER,
	"mindmap":         mermaidFree,
	// Types too new to have a stable grammar here: the header is checked.
	"eventmodeling": mermaidFree, "ishikawa-beta": mermaidFree, "treeView-beta": mermaidFree,
	"venn-beta": mermaidFree, "wardley-beta": mermaidFree,
	"classDiagram": mermaidBalanced, "classDiagram-v2": mermaidBalanced,
	"stateDiagram": mermaidBalanced, "stateDiagram-v2": mermaidBalanced,
	"gantt": mermaidBalanced, "pie": mermaidBalanced, "journey": mermaidBalanced,
	"gitGraph": mermaidBalanced, "gitGraph:": mermaidBalanced, "timeline": mermaidBalanced,
	"quadrantChart": mermaidBalanced, "requirementDiagram": mermaidBalanced,
	"C4Context": mermaidBalanced, "C4Container": mermaidBalanced, "C4Component": mermaidBalanced,
	"C4Dynamic": mermaidBalanced, "C4Deployment": mermaidBalanced,
	"sankey-beta": mermaidBalanced, "sankey": mermaidBalanced,
	"xychart-beta": mermaidBalanced, "xychart": mermaidBalanced,
	"block-beta": mermaidBalanced, "block": mermaidBalanced,
	"packet-beta": mermaidBalanced, "packet": mermaidBalanced,
	"architecture-beta": mermaidBalanced, "architecture": mermaidBalanced,
	"kanban": mermaidBalanced, "radar-beta": mermaidBalanced, "treemap-beta": mermaidBalanced,
	"info": mermaidBalanced, "zenuml": mermaidBalanced,
}

// flowDirections are the directions a flowchart header accepts.
var flowDirections = map[string]bool{
	"TB": true, "TD": true, "BT": true, "RL": true, "LR": true, "BR": true,
	"<": true, ">": true, "^": true, "v": true,
}

// checkMermaid reports every fault found in one diagram's text.
func checkMermaid(src string) []mermaidIssue {
	c := &mermaidChecker{lines: strings.Split(src, "\n")}
	for i, l := range c.lines {
		c.lines[i] = strings.TrimSuffix(l, "\r")
	}
	c.run()
	return c.issues
}

type mermaidChecker struct {
	lines  []string
	issues []mermaidIssue
}

func (c *mermaidChecker) add(line int, format string, args ...any) {
	c.issues = append(c.issues, mermaidIssue{Line: line, Msg: fmt.Sprintf(format, args...)})
}

// mermaidTrivial reports a blank or comment line (%% comments and %%{…}%%
// directives may stand anywhere a statement can).
func mermaidTrivial(line string) bool {
	t := strings.TrimSpace(line)
	return t == "" || strings.HasPrefix(t, "%%")
}

func (c *mermaidChecker) run() {
	i := 0
	skip := func() {
		for i < len(c.lines) && mermaidTrivial(c.lines[i]) {
			i++
		}
	}
	skip()
	if i < len(c.lines) && strings.TrimSpace(c.lines[i]) == "---" {
		open := i
		for i++; i < len(c.lines) && strings.TrimSpace(c.lines[i]) != "---"; i++ {
		}
		if i == len(c.lines) {
			c.add(open+1, "front matter opened with --- is never closed")
			return
		}
		i++
		skip()
	}
	if i == len(c.lines) {
		c.add(1, "no diagram type is declared")
		return
	}
	header := strings.TrimSpace(c.lines[i])
	keyword, rest := header, ""
	if at := strings.IndexAny(header, " \t;"); at >= 0 {
		keyword, rest = header[:at], header[at:]
	}
	kind, known := mermaidTypes[keyword]
	if !known {
		c.add(i+1, "unknown diagram type %s", mermaidClip(keyword, 40))
		return
	}
	switch kind {
	case mermaidFlow:
		c.flowchart(i, rest)
	case mermaidSequence:
		c.sequence(i + 1)
	case mermaidBalanced, mermaidER:
		c.balanced(i+1, kind == mermaidER)
	}
}

// mermaidClip shortens s for a message.
func mermaidClip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// ---- flowchart ----------------------------------------------------------

func (c *mermaidChecker) flowchart(header int, rest string) {
	rest = strings.TrimSpace(rest)
	var sameLine string
	if rest != "" && rest[0] != ';' {
		dir := rest
		if at := strings.IndexAny(rest, " \t;"); at >= 0 {
			dir, rest = rest[:at], strings.TrimSpace(rest[at:])
		} else {
			rest = ""
		}
		if !flowDirections[dir] {
			c.add(header+1, "unknown flowchart direction %s; want TB, TD, BT, RL or LR", mermaidClip(dir, 20))
			return
		}
		if rest != "" && rest[0] != ';' {
			c.add(header+1, "the header takes only a direction; start statements on the next line")
			return
		}
	}
	if rest != "" {
		sameLine = rest[1:]
	}
	f := &flowState{c: c}
	if strings.TrimSpace(sameLine) != "" {
		f.line(sameLine, header+1)
	}
	for j := header + 1; j < len(c.lines); {
		first := j
		text := c.lines[j]
		j++
		if f.accDescr {
			if strings.Contains(text, "}") {
				f.accDescr = false
			}
			continue
		}
		if mermaidTrivial(text) {
			continue
		}
		cont := flowContinuation{}.feed(text)
		if cont.open() && j < len(c.lines) {
			parts := []string{text}
			for ; cont.open() && j < len(c.lines); j++ {
				parts = append(parts, c.lines[j])
				cont = cont.feed("\n" + c.lines[j])
			}
			text = strings.Join(parts, "\n")
		}
		f.line(text, first+1)
	}
	for _, open := range f.subgraphs {
		c.add(open, "subgraph is never closed with end")
	}
}

// flowContinuation tracks whether a statement runs on past the end of a
// line: a quoted string or @{ shape data } left open.
type flowContinuation struct {
	inQuote   bool
	shapeData bool
}

func (c flowContinuation) open() bool { return c.inQuote || c.shapeData }

// feed advances the state over text.
func (c flowContinuation) feed(text string) flowContinuation {
	for i := 0; i < len(text); i++ {
		switch {
		case text[i] == '"':
			c.inQuote = !c.inQuote
		case c.inQuote:
		case !c.shapeData && strings.HasPrefix(text[i:], "@{"):
			c.shapeData = true
			i++
		case c.shapeData && text[i] == '}':
			c.shapeData = false
		}
	}
	return c
}

type flowState struct {
	c         *mermaidChecker
	subgraphs []int // lines of the open subgraphs
	accDescr  bool
}

// flowScanner walks one logical flowchart line.
type flowScanner struct {
	f      *flowState
	s      string
	pos    int
	line   int
	failed bool // a fault was reported: stop reading this statement
}

func (f *flowState) line(text string, line int) {
	sc := &flowScanner{f: f, s: text, line: line}
	for {
		for !sc.eof() && strings.IndexByte(" \t\n;", sc.s[sc.pos]) >= 0 {
			sc.pos++
		}
		if sc.eof() {
			return
		}
		if !sc.statement() {
			return
		}
	}
}

// fail reports a fault at the scanner's position and returns false.
func (sc *flowScanner) fail(format string, args ...any) bool {
	return sc.failAt(sc.pos, format, args...)
}

// failAt reports a fault on the line holding byte offset at: the line the
// fault is on, not the one the statement began on.
func (sc *flowScanner) failAt(at int, format string, args ...any) bool {
	line := sc.line + strings.Count(sc.s[:min(at, len(sc.s))], "\n")
	sc.f.c.add(line, format, args...)
	sc.failed = true
	return false
}

func (sc *flowScanner) eof() bool { return sc.pos >= len(sc.s) }

// space skips blanks within the line.
func (sc *flowScanner) space() {
	for !sc.eof() && (sc.s[sc.pos] == ' ' || sc.s[sc.pos] == '\t') {
		sc.pos++
	}
}

func (sc *flowScanner) has(prefix string) bool { return strings.HasPrefix(sc.s[sc.pos:], prefix) }

// atEnd reports the end of the statement: end of line or ';'.
func (sc *flowScanner) atEnd() bool {
	return sc.eof() || sc.s[sc.pos] == ';' || sc.s[sc.pos] == '\n'
}

// found describes the text at the scanner for a message.
func (sc *flowScanner) found() string {
	if sc.eof() {
		return "end of line"
	}
	rest := sc.s[sc.pos:]
	if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
		rest = rest[:nl]
	}
	return fmt.Sprintf("%q", mermaidClip(rest, 20))
}

// word is the run of ASCII letters at the scanner and whether it stands
// alone (followed by the end, white space or ';').
func (sc *flowScanner) word() (string, byte) {
	end := sc.pos
	for end < len(sc.s) && (sc.s[end] >= 'a' && sc.s[end] <= 'z' || sc.s[end] >= 'A' && sc.s[end] <= 'Z') {
		end++
	}
	var next byte
	if end < len(sc.s) {
		next = sc.s[end]
	}
	return sc.s[sc.pos:end], next
}

// toLineEnd consumes the rest of the physical line.
func (sc *flowScanner) toLineEnd() {
	for !sc.eof() && sc.s[sc.pos] != '\n' {
		sc.pos++
	}
}

// restOfStatement consumes up to the next ';' or the end and returns it.
func (sc *flowScanner) restOfStatement() string {
	start := sc.pos
	for !sc.atEnd() {
		sc.pos++
	}
	return strings.TrimSpace(sc.s[start:sc.pos])
}

func mermaidWordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

func (sc *flowScanner) statement() bool {
	w, next := sc.word()
	alone := next == 0 || next == ' ' || next == '\t' || next == ';' || next == '\n'
	switch {
	case w == "end" && !mermaidWordByte(next):
		sc.pos += len(w)
		sc.space()
		if !sc.atEnd() {
			return sc.fail("end is a keyword and cannot name a node; write End or END")
		}
		if n := len(sc.f.subgraphs); n > 0 {
			sc.f.subgraphs = sc.f.subgraphs[:n-1]
			return true
		}
		return sc.fail("end without an open subgraph")
	case w == "subgraph" && alone:
		sc.pos += len(w)
		return sc.subgraph()
	case w == "direction" && alone:
		sc.pos += len(w)
		sc.space()
		d, _ := sc.word()
		switch d {
		case "TB", "TD", "BT", "RL", "LR":
			sc.pos += len(d)
			sc.restOfStatement()
			return true
		}
		return sc.fail("direction needs one of TB, BT, RL or LR")
	case (w == "classDef" || w == "class" || w == "style" || w == "linkStyle" || w == "click") && alone:
		sc.pos += len(w)
		return sc.styling(w)
	case (w == "accTitle" || w == "accDescr") && !mermaidWordByte(next):
		save := sc.pos
		sc.pos += len(w)
		sc.space()
		switch {
		case sc.has(":"):
			sc.toLineEnd()
			return true
		case w == "accDescr" && sc.has("{"):
			if !strings.Contains(sc.s[sc.pos:], "}") {
				sc.f.accDescr = true
			}
			sc.pos = len(sc.s)
			return true
		}
		sc.pos = save
	}
	return sc.vertexStatement()
}

func (sc *flowScanner) subgraph() bool {
	sc.f.subgraphs = append(sc.f.subgraphs, sc.line)
	sc.space()
	if sc.atEnd() {
		return true
	}
	if sc.has(`"`) {
		if !sc.quoted() {
			return false
		}
		sc.space()
		if !sc.atEnd() {
			return sc.fail("unexpected %s after the subgraph title", sc.found())
		}
		return true
	}
	for !sc.atEnd() {
		switch b := sc.s[sc.pos]; b {
		case '[':
			sc.pos++
			if !sc.label("[", []string{"]"}, false) {
				return false
			}
			sc.space()
			if !sc.atEnd() {
				return sc.fail("unexpected %s after the subgraph title", sc.found())
			}
			return true
		case ']', '(', ')', '{', '}', '|', '"':
			return sc.fail("subgraph title contains %q; write it as id[\"title\"]", b)
		}
		sc.pos++
	}
	return true
}

func (sc *flowScanner) styling(keyword string) bool {
	rest := sc.restOfStatement()
	fields := strings.Fields(rest)
	if len(fields) < 2 {
		want := map[string]string{
			"classDef":  "a class name and styles",
			"class":     "node ids and a class name",
			"style":     "a node id and styles",
			"linkStyle": "link numbers (or default) and styles",
			"click":     "a node id and a callback or link",
		}[keyword]
		return sc.fail("%s needs %s", keyword, want)
	}
	if keyword == "linkStyle" && fields[0] != "default" {
		for _, n := range strings.Split(fields[0], ",") {
			if n == "" || strings.Trim(n, "0123456789") != "" {
				return sc.fail("linkStyle needs link numbers such as 0,1 or default, found %q", mermaidClip(fields[0], 20))
			}
		}
	}
	return true
}

func (sc *flowScanner) vertexStatement() bool {
	if !sc.nodeGroup() {
		return false
	}
	for {
		sc.space()
		if sc.has("%%") {
			sc.toLineEnd() // a trailing comment
		}
		if sc.atEnd() {
			return true
		}
		if !sc.link() {
			if sc.failed {
				return false
			}
			if sc.has("->") {
				return sc.fail("-> is not a flowchart link; write -->")
			}
			return sc.fail("unexpected %s after a node; expected a link such as --> or the end of the statement", sc.found())
		}
		sc.space()
		if sc.atEnd() {
			return sc.fail("link has no target node")
		}
		if !sc.nodeGroup() {
			return false
		}
	}
}

// nodeGroup is node ( & node )*.
func (sc *flowScanner) nodeGroup() bool {
	if !sc.node() {
		return false
	}
	for {
		save := sc.pos
		sc.space()
		if !sc.has("&") {
			sc.pos = save
			return true
		}
		sc.pos++
		sc.space()
		if !sc.node() {
			return false
		}
	}
}

// id scans a node id: letters, digits and the punctuation mermaid allows,
// stopping before anything that starts a link, a shape or a class suffix.
func (sc *flowScanner) id() string {
	start := sc.pos
	for !sc.eof() {
		r, size := utf8.DecodeRuneInString(sc.s[sc.pos:])
		var next byte
		if sc.pos+size < len(sc.s) {
			next = sc.s[sc.pos+size]
		}
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
		case strings.ContainsRune("!#$%'*+./\\?_`,", r):
		case r == ':' && !sc.has(":::"):
		case r == '-' && next != '-' && next != '>' && next != '.':
		case r == '=' && next != '=':
		default:
			return sc.s[start:sc.pos]
		}
		sc.pos += size
	}
	return sc.s[start:sc.pos]
}

type flowShape struct {
	open    string
	closers []string
	trap    bool // trapezoid text: / and \ are allowed
}

// flowShapes lists every shape opener, longest first so that "((" is never
// read as "(".
var flowShapes = []flowShape{
	{"(((", []string{")))"}, false},
	{"((", []string{"))"}, false},
	{"([", []string{"])"}, false},
	{"(-", []string{"-)"}, false},
	{"(", []string{")"}, false},
	{"[[", []string{"]]"}, false},
	{"[(", []string{")]"}, false},
	{"[/", []string{"/]", `\]`}, true},
	{`[\`, []string{`\]`, "/]"}, true},
	{"[", []string{"]"}, false},
	{"{{", []string{"}}"}, false},
	{"{", []string{"}"}, false},
	{">", []string{"]"}, false},
}

func (sc *flowScanner) node() bool {
	id := sc.id()
	if id == "" {
		return sc.fail("expected a node id, found %s", sc.found())
	}
	if id == "end" {
		return sc.fail("end is a keyword and cannot name a node; write End or END")
	}
	if sc.has("@{") {
		if !sc.shapeData() {
			return false
		}
	} else {
		for _, shape := range flowShapes {
			if sc.has(shape.open) {
				sc.pos += len(shape.open)
				if !sc.label(shape.open, shape.closers, shape.trap) {
					return false
				}
				break
			}
		}
	}
	if sc.has(":::") {
		sc.pos += 3
		if sc.id() == "" {
			return sc.fail("::: needs a class name")
		}
	}
	if sc.has("@{") {
		return sc.shapeData()
	}
	return true
}

// quoted consumes one "…" string.
func (sc *flowScanner) quoted() bool {
	end := strings.IndexByte(sc.s[sc.pos+1:], '"')
	if end < 0 {
		return sc.fail("quote is never closed")
	}

	sc.pos += end + 2
	return true
}

// label consumes a shape's text and its closer. The text is one quoted
// string, or plain text free of the characters mermaid reads as structure.
func (sc *flowScanner) label(open string, closers []string, trap bool) bool {
	start := sc.pos - len(open)
	closes := func() bool {
		for _, cl := range closers {
			if sc.has(cl) {
				sc.pos += len(cl)
				return true
			}
		}
		return false
	}
	if sc.has(`"`) {
		if !sc.quoted() {
			return false
		}
		sc.space()
		if closes() {
			return true
		}
		if sc.atEnd() {
			return sc.failAt(start, "label opened with %s is never closed with %s", open, closers[0])
		}
		return sc.fail("label mixes quoted and unquoted text; put the whole label inside the quotes")
	}
	forbidden := `[](){}|"`
	if trap {
		forbidden = `[](){}"`
	}
	for !sc.eof() {
		if closes() {
			return true
		}
		b := sc.s[sc.pos]
		if b == '\n' {
			break
		}
		if trap && b == ']' {
			return sc.failAt(start, "label opened with %s is never closed with /] or \\]", open)
		}
		if strings.IndexByte(forbidden, b) >= 0 {
			if b == '"' {
				return sc.fail("label mixes quoted and unquoted text; put the whole label inside the quotes")
			}
			return sc.fail("unquoted label contains %q; put the label in double quotes", b)
		}
		sc.pos++
	}
	return sc.failAt(start, "label opened with %s is never closed with %s", open, closers[0])
}

// shapeData consumes @{ … }, whose quoted strings may hold braces.
func (sc *flowScanner) shapeData() bool {
	start := sc.pos
	sc.pos += 2
	for !sc.eof() {
		switch sc.s[sc.pos] {
		case '"':
			if !sc.quoted() {
				return false
			}
			continue
		case '}':
			sc.pos++
			return true
		}
		sc.pos++
	}
	return sc.failAt(start, "shape data opened with @{ is never closed with }")
}

var (
	// flowLink is a complete link token; the x, o and < heads are optional.
	flowLink = lazyregexp.New(`^(?:[xo<]?--+[-xo>]|[xo<]?==+[=xo>]|[xo<]?-?\.+-[xo>]?|~~~+)`)
	// flowTextLink opens a link carrying text: -- text -->, == text ==>,
	// -. text .->.
	flowTextLink = lazyregexp.New(`^[xo<]?(?:--|==|-\.)`)
	// flowTextLinkEnd closes each kind of text link.
	flowTextLinkEnd = map[string]*lazyregexp.Regexp{
		"--": lazyregexp.New(`[xo<]?--+[-xo>]`),
		"==": lazyregexp.New(`[xo<]?==+[=xo>]`),
		"-.": lazyregexp.New(`[xo<]?-?\.+-[xo>]?`),
	}
)

func (sc *flowScanner) link() bool {
	// An edge id: e1@-->.
	save := sc.pos
	if id := sc.id(); id == "" || !sc.has("@") || sc.has("@{") || sc.has(`@"`) {
		sc.pos = save
	} else {
		sc.pos++
	}
	rest := sc.s[sc.pos:]
	if m := flowLink.FindString(rest); m != "" {
		sc.pos += len(m)
		save := sc.pos
		sc.space()
		if sc.has("|") {
			return sc.edgeLabel()
		}
		sc.pos = save
		return true
	}
	m := flowTextLink.FindString(rest)
	if m == "" {
		sc.pos = save
		return false
	}
	kind := strings.TrimLeft(m, "xo<")
	sc.pos += len(m)
	textStart := sc.pos
	sc.space()
	searchFrom := sc.pos
	if sc.has(`"`) {
		if !sc.quoted() {
			return false
		}
		searchFrom = sc.pos
	}
	end := flowTextLinkEnd[kind].FindStringIndex(sc.s[searchFrom:])
	if end == nil {
		return sc.failAt(textStart, "link text opened with %s is never closed with an arrow such as %s>", kind, kind)
	}
	text := strings.TrimSpace(sc.s[textStart : searchFrom+end[0]])
	if text == "" {
		return sc.fail("link text between %s and its arrow is empty", kind)
	}
	if strings.Contains(text, `"`) && !(strings.HasPrefix(text, `"`) && strings.HasSuffix(text, `"`) && strings.Count(text, `"`) == 2) {
		return sc.fail("link text mixes quoted and unquoted text; put the whole text inside the quotes")
	}
	sc.pos = searchFrom + end[1]
	return true
}

// edgeLabel consumes |text| after a link.
func (sc *flowScanner) edgeLabel() bool {
	start := sc.pos
	sc.pos++
	if sc.has(`"`) {
		if !sc.quoted() {
			return false
		}
		sc.space()
		if !sc.has("|") {
			return sc.fail("edge label mixes quoted and unquoted text; put the whole label inside the quotes")
		}
		sc.pos++
		return true
	}
	for !sc.eof() && sc.s[sc.pos] != '\n' {
		b := sc.s[sc.pos]
		if b == '|' {
			sc.pos++
			return true
		}
		if strings.IndexByte(`[](){}"`, b) >= 0 {
			if b == '"' {
				return sc.fail("edge label mixes quoted and unquoted text; put the whole label inside the quotes")
			}
			return sc.fail("unquoted edge label contains %q; put the label in double quotes", b)
		}
		sc.pos++
	}
	return sc.failAt(start, "edge label opened with | is never closed with |")
}

// ---- sequence diagrams ----------------------------------------------------

// sequenceEntity is an entity code such as #9829; which mermaid expands
// before parsing, so its ';' ends nothing.
var sequenceEntity = lazyregexp.New(`#[A-Za-z0-9]+;`)

// sequenceArrows are the message arrows, longest first at each position.
var sequenceArrows = []string{"<<-->>", "<<->>", "-->>", "-->", "--x", "--)", "->>", "->", "-x", "-)"}

// sequenceBlocks maps each block keyword to the keywords that may divide it.
var sequenceBlocks = map[string]string{
	"loop": "", "rect": "", "opt": "", "break": "", "box": "",
	"alt": "else", "par": "and", "par_over": "and", "critical": "option",
}

func (c *mermaidChecker) sequence(start int) {
	type open struct {
		keyword string
		line    int
	}
	var stack []open
	accDescr := false
	for j := start; j < len(c.lines); j++ {
		ln := j + 1
		t := strings.TrimSpace(c.lines[j])
		if accDescr {
			if strings.Contains(t, "}") {
				accDescr = false
			}
			continue
		}
		if mermaidTrivial(t) || strings.HasPrefix(t, "#") {
			continue
		}
		t = sequenceEntity.ReplaceAllString(t, "&")
		word := t
		if at := strings.IndexFunc(t, func(r rune) bool { return !(r == '_' || unicode.IsLetter(r)) }); at >= 0 {
			word = t[:at]
		}
		rest := strings.TrimSpace(t[len(word):])
		keyword := strings.ToLower(word)
		if len(word) < len(t) && !strings.ContainsRune(" \t", rune(t[len(word)])) && keyword != "title" && keyword != "acctitle" && keyword != "accdescr" {
			keyword = "" // a keyword must stand alone: "alternative" is an actor
		}
		switch keyword {
		case "participant", "actor", "destroy", "activate", "deactivate":
			if rest == "" {
				c.add(ln, "%s needs a participant name", keyword)
			}
		case "create":
			f := strings.Fields(strings.ToLower(rest))
			if len(f) < 2 || (f[0] != "participant" && f[0] != "actor") {
				c.add(ln, "create needs participant or actor and a name")
			}
		case "loop", "rect", "opt", "alt", "par", "par_over", "critical", "break", "box":
			stack = append(stack, open{keyword, ln})
		case "else", "and", "option":
			if len(stack) == 0 || sequenceBlocks[stack[len(stack)-1].keyword] != keyword {
				parent := map[string]string{"else": "alt", "and": "par", "option": "critical"}[keyword]
				c.add(ln, "%s is only valid inside %s … end", keyword, parent)
			}
		case "end":
			if rest != "" {
				c.add(ln, "unexpected text after end")
			}
			if len(stack) == 0 {
				c.add(ln, "end without an open block")
			} else {
				stack = stack[:len(stack)-1]
			}
		case "autonumber", "title":
		case "acctitle":
			if !strings.HasPrefix(rest, ":") {
				c.add(ln, "accTitle needs ': text'")
			}
		case "accdescr":
			switch {
			case strings.HasPrefix(rest, ":"):
			case strings.HasPrefix(rest, "{"):
				accDescr = !strings.Contains(rest, "}")
			default:
				c.add(ln, "accDescr needs ': text' or { text }")
			}
		case "note":
			if c.sequenceNote(rest, ln) {
				stack = append(stack, open{"note", ln})
			}
		case "links", "link", "properties", "details":
			if name, _, ok := strings.Cut(rest, ":"); !ok || strings.TrimSpace(name) == "" {
				c.add(ln, "%s needs a participant and ': text'", keyword)
			}
		default:
			if msg := sequenceMessage(t); msg != "" {
				c.add(ln, "%s", msg)
			}
		}
	}
	for _, o := range stack {
		c.add(o.line, "%s block is never closed with end", o.keyword)
	}
}

// sequenceNote checks a note statement and reports whether it opens a
// multi-line note that needs an end.
func (c *mermaidChecker) sequenceNote(rest string, ln int) bool {
	lower := strings.ToLower(rest)
	var after string
	switch {
	case strings.HasPrefix(lower, "left of"), strings.HasPrefix(lower, "right of"):
		after = rest[strings.Index(lower, "of")+2:]
	case strings.HasPrefix(lower, "over"):
		after = rest[4:]
	default:
		c.add(ln, "note needs a placement: left of, right of or over")
		return false
	}
	actor, _, hasText := strings.Cut(after, ":")
	if strings.TrimSpace(actor) == "" {
		c.add(ln, "note needs a participant")
		return false
	}
	return !hasText
}

// sequenceMessage checks sender arrow receiver: text and returns what is
// wrong, or "".
func sequenceMessage(t string) string {
	for i := 0; i < len(t); i++ {
		if t[i] != '-' && t[i] != '<' {
			continue
		}
		for _, arrow := range sequenceArrows {
			if !strings.HasPrefix(t[i:], arrow) {
				continue
			}
			sender := strings.TrimSpace(t[:i])
			if sender == "" {
				return "message has no sender before " + arrow
			}
			if strings.ContainsAny(sender, "+<>:,;") {
				return fmt.Sprintf("unrecognised statement %q", mermaidClip(t, 40))
			}
			rest := strings.TrimLeft(t[i+len(arrow):], " \t")
			rest = strings.TrimPrefix(strings.TrimPrefix(rest, "+"), "-")
			receiver, _, hasText := strings.Cut(rest, ":")
			receiver = strings.TrimSpace(receiver)
			if receiver == "" || strings.ContainsAny(receiver, "+<>,;") {
				break // not this arrow: try further along
			}
			if !hasText {
				return "message needs ': text' after the receiver"
			}
			return ""
		}
	}
	return fmt.Sprintf("unrecognised statement %q", mermaidClip(t, 40))
}

// ---- every other diagram type --------------------------------------------

// erCardinalityBefore and erCardinalityAfter match the ends of an entity
// relationship, whose braces are crow's feet rather than brackets.
var (
	erCardinalityBefore = lazyregexp.New(`(?:\|o|o\||\|\||\}o|o\{|\}\||\|\{)(\s*(?:--|\.\.))`)
	erCardinalityAfter  = lazyregexp.New(`((?:--|\.\.)\s*)(?:\|o|o\||\|\||\}o|o\{|\}\||\|\{)`)
)

// balanced checks that quotes and round and square brackets balance on each
// line, and braces across the diagram (they open multi-line blocks).
func (c *mermaidChecker) balanced(start int, er bool) {
	var braces []int
	for j := start; j < len(c.lines); j++ {
		ln := j + 1
		t := c.lines[j]
		if mermaidTrivial(t) {
			continue
		}
		if er {
			t = erCardinalityBefore.ReplaceAllString(t, "$1")
			t = erCardinalityAfter.ReplaceAllString(t, "$1")
		}
		var stack []byte
		inQuote := false
		bad := false
		lineBraces, odd := 0, 0
	scan:
		for k := 0; k < len(t) && !bad; k++ {
			b := t[k]
			if b == '"' {
				inQuote = !inQuote
				continue
			}
			if inQuote {
				continue
			}
			switch b {
			case ':':
				// "label : free text" — what follows is prose, where a
				// smiley or an aside may leave a bracket open.
				if len(stack) == 0 && lineBraces == 0 && (k+1 == len(t) || t[k+1] == ' ' || t[k+1] == '\t') {
					break scan
				}
			case '>':
				odd++
			case '(', '[':
				stack = append(stack, b)
			case ')', ']':
				want := byte('(')
				if b == ']' {
					want = '['
				}
				if b == ']' && len(stack) == 0 && odd > 0 {
					odd-- // an asymmetric shape: id>text]
					continue
				}
				if len(stack) == 0 || stack[len(stack)-1] != want {
					c.add(ln, "unexpected %q", b)
					bad = true
					continue
				}
				stack = stack[:len(stack)-1]
			case '{':
				braces = append(braces, ln)
				lineBraces++
			case '}':
				if len(braces) == 0 {
					c.add(ln, "unexpected %q", b)
					bad = true
					continue
				}
				braces = braces[:len(braces)-1]
				if lineBraces > 0 {
					lineBraces--
				}
			}
		}
		switch {
		case bad:
		case inQuote:
			c.add(ln, "quote is never closed")
		case len(stack) > 0:
			c.add(ln, "%q is never closed on this line", stack[len(stack)-1])
		}
	}
	for _, open := range braces {
		c.add(open, `"{" is never closed`)
	}
}
