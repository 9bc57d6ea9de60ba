package main

import (
	"encoding/xml"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/the-loop/the-loop/graph"
)

func TestTheJUnitFormatOnTheDemo(t *testing.T) {
	golden(t, "demo.junit.xml", junitTimeless(demoReport(t, nil, "junit")))
}

// junitTimes are the time attributes, which are measured: the golden
// file holds them as 0.000.
var junitTimes = regexp.MustCompile(` time="[0-9]+\.[0-9]{3}"`)

func junitTimeless(s string) string { return junitTimes.ReplaceAllString(s, ` time="0.000"`) }

// The common JUnit XML shape CI systems read (Jenkins, GitLab, Azure).
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Time     string `xml:"time,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Time      string `xml:"time,attr"`
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
	for _, c := range []struct {
		failOn            string
		failures, skipped int
	}{
		// The demo has one block, four waits and twelve reached nodes
		// declared skipped or not selected: a wait fails the run only
		// under --fail-on unmet, and JUnit says what the exit code says;
		// a skipped node is never a pass.
		{"unmet", 5, 12},
		{"block", 1, 16},
	} {
		t.Run(c.failOn, func(t *testing.T) {
			checkJUnit(t, demoReport(t, nil, "junit", "--fail-on", c.failOn), c.failures, c.skipped)
		})
	}
}

func checkJUnit(t *testing.T, out string, wantFailures, wantSkipped int) {
	t.Helper()
	var doc junitDoc
	dec := xml.NewDecoder(strings.NewReader(out))
	dec.Strict = true
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("not well-formed XML: %v\n%s", err, out)
	}
	if len(doc.Suites) != 4 {
		t.Fatalf("got %d suites, want one per work item of the demo", len(doc.Suites))
	}
	tests, failures, skipped, suiteSkipped := 0, 0, 0, 0
	for _, s := range doc.Suites {
		suiteSkipped += s.Skipped
		if !measured(s.Time) {
			t.Errorf("suite %q: time %q, want the seconds its evaluation took", s.Name, s.Time)
		}
		if s.Name == "" || s.Tests != len(s.Cases) {
			t.Errorf("suite %q: tests=%d for %d cases", s.Name, s.Tests, len(s.Cases))
		}
		for _, c := range s.Cases {
			if c.Name == "" || c.Classname != "the-loop."+s.Name {
				t.Errorf("case %+v", c)
			}
			if !measured(c.Time) {
				t.Errorf("case %s/%s: time %q, want the seconds its evaluation took", s.Name, c.Name, c.Time)
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
	if doc.Tests != tests || doc.Failures != failures || suiteSkipped != skipped || failures != wantFailures || skipped != wantSkipped {
		t.Errorf("totals %d/%d/%d, counted %d/%d/%d; want %d failures and %d skipped", doc.Tests, doc.Failures, suiteSkipped, tests, failures, skipped, wantFailures, wantSkipped)
	}
	checkJUnitSchema(t, out)
}

// measured is a time attribute: seconds, not negative.
func measured(s string) bool {
	v, err := strconv.ParseFloat(s, 64)
	return err == nil && v >= 0
}

func TestASkippedNodeIsSkippedAndItsTimeIsWhatItsEvaluationTook(t *testing.T) {
	r := &graph.StatusReport{WorkItem: "issue-1", CurrentNode: "design", Elapsed: 1500 * time.Millisecond, Nodes: []graph.NodeReport{
		{Node: "design-critic-review", Status: string(graph.StatusSkip), Messages: []string{"not selected: an opt-in phase"}, Elapsed: 2 * time.Millisecond},
		{Node: "design", Status: string(graph.StatusPass), Elapsed: 250 * time.Millisecond},
	}}
	var b strings.Builder
	if err := writeAll(junitFormat{}, &Output{raw: &b}, []*graph.StatusReport{r}, checkView{}); err != nil {
		t.Fatal(err)
	}
	var doc junitDoc
	if err := xml.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Suites[0]
	if s.Time != "1.500" || s.Skipped != 1 || s.Cases[0].Time != "0.002" || s.Cases[1].Time != "0.250" {
		t.Errorf("got %+v", s)
	}
	if c := s.Cases[0]; c.Skipped == nil || c.Skipped.Message != "not selected: an opt-in phase" {
		t.Errorf("an unselected node is %+v, want skipped with why", c)
	}
	if s.Cases[1].Skipped != nil || s.Cases[1].Failure != nil {
		t.Errorf("a passing node is %+v", s.Cases[1])
	}
}

func TestJUnitEscapesWhatXMLCannotHold(t *testing.T) {
	r := blockedAt("issue-1", "design", graph.Finding{Hook: "x-h", Severity: graph.SeverityError, Text: "a \x00\x1b ]]> <tag> & \"q\""})
	var b strings.Builder
	if err := writeAll(junitFormat{}, &Output{raw: &b}, []*graph.StatusReport{r}, checkView{}); err != nil {
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

// junitSchema is the common JUnit schema (Jenkins' junit-10.xsd): each
// element, the attributes it may carry, and those it must.
var junitSchema = map[string]struct{ may, must []string }{
	"testsuites": {may: []string{"name", "time", "tests", "failures", "disabled", "errors"}},
	"testsuite": {may: []string{"name", "tests", "failures", "errors", "group", "time", "disabled", "skipped",
		"timestamp", "hostname", "id", "package", "file", "log", "url", "version"}, must: []string{"name", "tests"}},
	"testcase":   {may: []string{"name", "assertions", "time", "classname", "status", "group"}, must: []string{"name"}},
	"failure":    {may: []string{"message", "type"}},
	"error":      {may: []string{"message", "type"}},
	"skipped":    {may: []string{"message"}},
	"system-out": {},
	"system-err": {},
	"properties": {},
	"property":   {may: []string{"name", "value"}, must: []string{"name", "value"}},
}

// junitParents says where each element may stand.
var junitParents = map[string][]string{
	"testsuites": {""}, "testsuite": {"testsuites"}, "testcase": {"testsuite"},
	"failure": {"testcase"}, "error": {"testcase"}, "skipped": {"testcase"},
	"system-out": {"testcase", "testsuite"}, "system-err": {"testcase", "testsuite"},
	"properties": {"testsuite"}, "property": {"properties"},
}

// checkJUnitSchema checks every element and attribute of out against the
// common schema's.
func checkJUnitSchema(t *testing.T, out string) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(out))
	var stack []string
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch el := tok.(type) {
		case xml.StartElement:
			name := el.Name.Local
			rule, known := junitSchema[name]
			parent := ""
			if len(stack) > 0 {
				parent = stack[len(stack)-1]
			}
			if !known || !slices.Contains(junitParents[name], parent) {
				t.Errorf("<%s> under <%s> is not in the common JUnit schema", name, parent)
			}
			have := map[string]bool{}
			for _, a := range el.Attr {
				have[a.Name.Local] = true
				if !slices.Contains(rule.may, a.Name.Local) {
					t.Errorf("<%s %s=...> is not in the common JUnit schema", name, a.Name.Local)
				}
			}
			for _, m := range rule.must {
				if !have[m] {
					t.Errorf("<%s> lacks %s, which the common JUnit schema requires", name, m)
				}
			}
			stack = append(stack, name)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
}

func TestARunThatCouldNotAnswerIsAnErroringJUnitCase(t *testing.T) {
	stdout, _, code := runCLI(t, nil, "check", "--all", "--repo", demo, "--base=-x", "--format", "junit")
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	var doc junitDoc
	if err := xml.Unmarshal([]byte(stdout), &doc); err != nil || doc.Errors != 1 {
		t.Fatalf("got %+v (%v) from\n%s", doc, err, stdout)
	}
	checkJUnitSchema(t, stdout)
}
