package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/the-loop/the-loop/graph"
)

// junitFormat writes JUnit XML, which every CI system can show: a test
// suite per work item and a test case per reached node, failed when the
// node blocks, and when it waits on a human either skipped or, under
// --fail-on unmet, failed, as the exit code says. Warnings go to the
// case's output. An item that could not be evaluated is a suite with one
// erroring case. Elements and attributes are those of the common JUnit
// schema (Jenkins' junit-10.xsd).
type junitFormat struct{}

// junitSuites counts no skipped cases: the common schema has no such
// attribute on testsuites, only on each testsuite.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
	// SystemOut says which repository hooks of nodes past the pointer,
	// which have no case, the report does not show, and why.
	SystemOut string `xml:"system-out,omitempty"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure"`
	Error     *junitProblem `xml:"error"`
	Skipped   *junitSkipped `xml:"skipped"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

func (junitFormat) start(out *Output, view checkView) reportWriter {
	w := &junitWriter{out: out, failOn: view.FailOn, all: junitSuites{Name: "the-loop"}}
	w.enc = xml.NewEncoder(&w.suites)
	w.enc.Indent("  ", "  ")
	return w
}

// junitWriter encodes each suite as its report comes, indented as it
// stands inside <testsuites>, and keeps the encoded suites until finish:
// the totals are attributes of the element that opens the document.
type junitWriter struct {
	out    *Output
	failOn string
	all    junitSuites // the totals; its Suites stay empty
	suites bytes.Buffer
	enc    *xml.Encoder
}

func (w *junitWriter) report(r *graph.StatusReport) error {
	s := junitSuite{Name: r.WorkItem, Time: junitTime(r.Elapsed)}
	unshown := r.Unshown()
	for _, n := range shown(r) {
		c := junitCaseOf(r, n, w.failOn)
		c.SystemOut = joinLines(c.SystemOut, unshownAt(unshown, n.Node))
		switch {
		case c.Failure != nil:
			s.Failures++
		case c.Skipped != nil:
			s.Skipped++
		}
		s.Tests++
		s.Cases = append(s.Cases, c)
	}
	_, ahead := r.Reached()
	for _, n := range ahead {
		s.SystemOut = joinLines(s.SystemOut, unshownAt(unshown, n.Node))
	}
	return w.add(s)
}

// unshownAt are the lines saying which of node's repository hooks the
// report does not show, and why.
func unshownAt(unshown []graph.UnshownHook, node string) string {
	var lines []string
	for _, u := range unshown {
		if u.Node == node {
			lines = append(lines, fmt.Sprintf("note: %s (%s) %s", u.Run.Hook, u.Run.Boundary, u.Why))
		}
	}
	return strings.Join(lines, "\n")
}

func joinLines(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "\n" + b
}

// add counts s in the totals and encodes it on a line of its own (the
// encoder starts every element after its first on a new line).
func (w *junitWriter) add(s junitSuite) error {
	w.all.count(s)
	if w.suites.Len() == 0 {
		w.suites.WriteByte('\n')
	}
	if err := w.enc.EncodeElement(s, xml.StartElement{Name: xml.Name{Local: "testsuite"}}); err != nil {
		return err
	}
	return w.enc.Flush()
}

func (w *junitWriter) finish(view checkView) error {
	for _, f := range view.Unevaluated {
		err := w.add(junitSuite{Name: f.Item, Tests: 1, Errors: 1, Time: junitTime(0), Cases: []junitCase{{
			Name: "evaluate", Classname: "the-loop." + f.Item, Time: junitTime(0),
			Error: &junitProblem{Message: "could not be evaluated", Type: "error", Text: f.Err.Error()},
		}}})
		if err != nil {
			return err
		}
	}
	// The opening element is the totals' own encoding, its (empty) body
	// and end tag replaced by the suites.
	head, err := xml.Marshal(w.all)
	if err != nil {
		return err
	}
	const end = "</testsuites>"
	head = bytes.TrimSuffix(head, []byte(end))
	var b bytes.Buffer
	b.WriteString(xml.Header)
	b.Write(head)
	b.Write(w.suites.Bytes())
	if w.suites.Len() > 0 {
		b.WriteByte('\n')
	}
	b.WriteString(end + "\n")
	_, err = w.out.raw.Write(b.Bytes())
	return err
}

// writeFailure is a run that could not answer: one suite whose one case
// errs, saying why.
func (junitFormat) writeFailure(out *Output, err error, view checkView) error {
	all := junitSuites{Name: "the-loop"}
	all.add(junitSuite{Name: "the-loop", Tests: 1, Errors: 1, Time: junitTime(0), Cases: []junitCase{{
		Name: "run", Classname: "the-loop", Time: junitTime(0),
		Error: &junitProblem{Message: "could not run", Type: "error", Text: err.Error()},
	}}})
	return writeXML(out, all)
}

func writeXML(out *Output, v any) error {
	b, err := xml.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = io.WriteString(out.raw, xml.Header+string(b)+"\n")
	return err
}

// add counts s in the totals, and keeps it.
func (all *junitSuites) add(s junitSuite) {
	all.count(s)
	all.Suites = append(all.Suites, s)
}

// count counts s in the totals.
func (all *junitSuites) count(s junitSuite) {
	all.Tests += s.Tests
	all.Failures += s.Failures
	all.Errors += s.Errors
}

// junitTime is d in seconds, as the schema's time attribute is: what the
// evaluation measured, to the millisecond.
func junitTime(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// junitCaseOf is node n of r as a test case: the findings of the hook that
// stopped it are its failure, or its reason to be skipped; the others are
// warnings, in its output.
func junitCaseOf(r *graph.StatusReport, n graph.NodeReport, failOn string) junitCase {
	c := junitCase{Name: n.Node, Classname: "the-loop." + r.WorkItem, Time: junitTime(n.Elapsed)}
	stopper := n.Stopper()
	var problems, notes []string
	first := ""
	for _, f := range n.Findings {
		line := fmt.Sprintf("%s: %s", f.Hook, f.Text)
		if w := f.Where(); w != "" {
			line += " (" + w + ")"
		}
		line += reportOnlyTag(f)
		if stopper == "" || f.Hook != stopper {
			notes = append(notes, f.Severity+": "+line)
			continue
		}
		if first == "" {
			first = f.Text
		}
		problems = append(problems, line)
	}
	switch {
	case n.Status == string(graph.StatusBlock), n.Status == string(graph.StatusWait) && failOn != graph.FailOnBlock:
		c.Failure = &junitProblem{Message: first, Type: n.Status, Text: strings.Join(problems, "\n")}
	case n.Status == string(graph.StatusWait):
		c.Skipped = &junitSkipped{Message: "waiting: " + first}
	case n.Status == string(graph.StatusSkip):
		// A node declared skipped, or an opt-in phase not selected, was
		// not tested: it is not a pass.
		c.Skipped = &junitSkipped{Message: strings.Join(n.Messages, "; ")}
		notes = append(slices.Clone(n.Messages), notes...)
	}
	c.SystemOut = strings.Join(notes, "\n")
	return c
}
