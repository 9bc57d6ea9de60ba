package main

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/the-loop/the-loop/graph"
)

// junitFormat writes JUnit XML, which every CI system can show: a test
// suite per work item and a test case per reached node, failed when the
// node blocks and skipped when it waits on a human. Warnings go to the
// case's output. An item that could not be evaluated is a suite with one
// erroring case.
type junitFormat struct{}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr,omitempty"`
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

func (junitFormat) write(out *Output, reports []*graph.StatusReport, view checkView) error {
	all := junitSuites{Name: "the-loop"}
	for _, r := range reports {
		s := junitSuite{Name: r.WorkItem}
		for _, n := range shown(r) {
			c := junitCaseOf(r, n)
			switch {
			case c.Failure != nil:
				s.Failures++
			case c.Skipped != nil:
				s.Skipped++
			}
			s.Tests++
			s.Cases = append(s.Cases, c)
		}
		all.add(s)
	}
	for _, f := range view.Unevaluated {
		all.add(junitSuite{Name: f.Item, Tests: 1, Errors: 1, Cases: []junitCase{{
			Name: "evaluate", Classname: "the-loop." + f.Item,
			Error: &junitProblem{Message: "could not be evaluated", Type: "error", Text: f.Err.Error()},
		}}})
	}
	b, err := xml.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	_, err = io.WriteString(out.raw, xml.Header+string(b)+"\n")
	return err
}

func (all *junitSuites) add(s junitSuite) {
	all.Tests += s.Tests
	all.Failures += s.Failures
	all.Errors += s.Errors
	all.Skipped += s.Skipped
	all.Suites = append(all.Suites, s)
}

func junitCaseOf(r *graph.StatusReport, n graph.NodeReport) junitCase {
	c := junitCase{Name: n.Node, Classname: "the-loop." + r.WorkItem}
	var problems, warnings []string
	for _, f := range n.Findings {
		line := fmt.Sprintf("%s: %s", f.Hook, f.Text)
		if w := f.Where(); w != "" {
			line += " (" + w + ")"
		}
		if f.Severity == graph.SeverityWarning && n.Satisfied() {
			warnings = append(warnings, "warning: "+line)
			continue
		}
		problems = append(problems, line)
		if p, ok := repoPath(f.Path); ok && c.File == "" {
			c.File = p
		}
	}
	first := ""
	if len(n.Findings) > 0 {
		first = n.Findings[0].Text
	}
	switch graph.Status(n.Status) {
	case graph.StatusBlock:
		c.Failure = &junitProblem{Message: first, Type: "block", Text: strings.Join(problems, "\n")}
	case graph.StatusWait:
		c.Skipped = &junitSkipped{Message: "waiting: " + first}
	case graph.StatusSkip:
		warnings = append(n.Messages, warnings...)
	}
	c.SystemOut = strings.Join(warnings, "\n")
	return c
}
