package main

import (
	"encoding/xml"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

func TestTheJUnitFormatOnTheDemo(t *testing.T) {
	golden(t, "demo.junit.xml", demoReport(t, nil, "junit"))
}

// The common JUnit XML shape CI systems read (Jenkins, GitLab, Azure).
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestTheJUnitOutputIsReadByAnXMLDecoder(t *testing.T) {
	out := demoReport(t, nil, "junit")
	var doc junitDoc
	dec := xml.NewDecoder(strings.NewReader(out))
	dec.Strict = true
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("not well-formed XML: %v\n%s", err, out)
	}
	if len(doc.Suites) != 4 {
		t.Fatalf("got %d suites, want one per work item of the demo", len(doc.Suites))
	}
	tests, failures, skipped := 0, 0, 0
	for _, s := range doc.Suites {
		if s.Name == "" || s.Tests != len(s.Cases) {
			t.Errorf("suite %q: tests=%d for %d cases", s.Name, s.Tests, len(s.Cases))
		}
		for _, c := range s.Cases {
			if c.Name == "" || c.Classname != "the-loop."+s.Name {
				t.Errorf("case %+v", c)
			}
			if c.Failure != nil {
				failures++
				if c.Failure.Message == "" || c.Failure.Text == "" {
					t.Errorf("a failure says nothing: %+v", c)
				}
			}
			if c.Skipped != nil {
				skipped++
			}
		}
		tests += len(s.Cases)
	}
	if doc.Tests != tests || doc.Failures != failures || doc.Skipped != skipped || failures != 1 || skipped != 4 {
		t.Errorf("totals %d/%d/%d, counted %d/%d/%d; the demo has one block and four waits", doc.Tests, doc.Failures, doc.Skipped, tests, failures, skipped)
	}
}

func TestJUnitEscapesWhatXMLCannotHold(t *testing.T) {
	r := blockedAt("issue-1", "design", graph.Finding{Hook: "x-h", Severity: graph.SeverityError, Text: "a \x00\x1b ]]> <tag> & \"q\""})
	var b strings.Builder
	if err := (junitFormat{}).write(&Output{raw: &b}, []*graph.StatusReport{r}, checkView{}); err != nil {
		t.Fatal(err)
	}
	var doc junitDoc
	if err := xml.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if got := doc.Suites[0].Cases[0].Failure.Message; !strings.Contains(got, "]]> <tag> & \"q\"") {
		t.Errorf("the message did not survive: %q", got)
	}
}
