package main

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/the-loop/the-loop/starlark"
)

// HooksTestCmd is `the-loop hooks test`.
type HooksTestCmd struct {
	Paths  []string `arg:"" optional:"" help:"Test files, or directories to search (default: the directories of the declared path: modules)." placeholder:"PATH"`
	Filter string   `name:"run" help:"Run only the tests whose name matches this regular expression." placeholder:"REGEX"`
	Format string   `help:"Output format (${enum})." enum:"text,json,junit" default:"text"`
}

func (c *HooksTestCmd) Help() string {
	return `hooks test runs the repository's rule tests: every *_test.star file beside
the declared modules (or at or under PATH). Each top-level test_* function is
called with t:

  r = t.repo(files = {"src/a.go": "package a\n"})     an in-memory repository
  item = r.item("issue-1", node = "implementation",   a work item in it
                artifacts = {"design.md": "..."}, state = {...})
  res = t.run("x-licence-header", item)               the hook, as check runs it
  t.status(res, "block")
  t.finding(res, contains = "SPDX", path = "src/a.go", line = 1)
  t.eq(got, want)  t.true(x)  t.fails(fn, "regex")

A failed assertion is reported at its line and the test goes on. With -v,
what each test printed is shown too.

Exit codes: 0 every test passed, 1 a test failed, 2 the tests could not run
(a file that does not load, a hook module that does not load).`
}

func (c *HooksTestCmd) Run(g *Globals, out *Output) error {
	var run *regexp.Regexp
	if c.Filter != "" {
		var err error
		if run, err = regexp.Compile(c.Filter); err != nil {
			return fmt.Errorf("--run: %w", err)
		}
	}
	e, err := g.open(out)
	if err != nil {
		return err
	}
	rep, err := e.RuleTests(c.Paths, run)
	if err != nil {
		return err
	}
	if rep.Passed+rep.Failed+rep.Broken == 0 {
		// A gate that ran no test must not pass: a --run that matches
		// nothing is a typo, and a file without tests a mistake.
		if run != nil {
			return fmt.Errorf("--run %s matched no test_* function in %s", c.Filter, ruleTestFiles(rep))
		}
		return fmt.Errorf("no test ran: %s define no test_* function", ruleTestFiles(rep))
	}
	switch c.Format {
	case "json":
		err = writeJSON(out, rep)
	case "junit":
		err = writeXML(out, ruleTestSuites(rep))
	default:
		err = writeRuleTests(out.Stdout, rep, g.Verbose)
	}
	switch {
	case err != nil:
		return err
	case rep.Broken > 0:
		return exitCode(2)
	case rep.Failed > 0:
		return exitCode(1)
	}
	return nil
}

func (c *HooksTestCmd) outputFormat() string { return c.Format }

func writeRuleTests(w io.Writer, rep *starlark.TestReport, verbose bool) error {
	var b strings.Builder
	for _, f := range rep.Files {
		if f.Err != "" {
			fmt.Fprintf(&b, "ERROR %s: could not run: %s\n", visible(f.Path), visible(f.Err))
			continue
		}
		if f.Found == 0 {
			fmt.Fprintf(&b, "      %s: no test_* function\n", visible(f.Path))
		}
		for _, t := range f.Tests {
			verdict := "ok   "
			if !t.Passed {
				verdict = "FAIL "
			}
			fmt.Fprintf(&b, "%s %s %s (%d steps)\n", verdict, visible(f.Path), t.Name, t.Steps)
			for _, fl := range t.Failures {
				// A failure's message may carry a traceback, laid out a
				// frame a line; each line is the checkout's text.
				msg := lines(fl.Msg)
				if len(msg) == 0 {
					msg = []string{""}
				}
				fmt.Fprintf(&b, "        %s: %s\n", visible(fl.Pos), visible(msg[0]))
				for _, line := range msg[1:] {
					fmt.Fprintf(&b, "          %s\n", visible(line))
				}
			}
			if verbose || !t.Passed {
				for _, p := range t.Prints {
					fmt.Fprintf(&b, "        print: %s\n", visible(p))
				}
			}
		}
	}
	fmt.Fprintf(&b, "\n%d passed, %d failed", rep.Passed, rep.Failed)
	if rep.Broken > 0 {
		fmt.Fprintf(&b, ", %d file(s) could not run", rep.Broken)
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func ruleTestFiles(rep *starlark.TestReport) string {
	paths := make([]string, len(rep.Files))
	for i, f := range rep.Files {
		paths[i] = f.Path
	}
	return strings.Join(paths, ", ")
}

// ruleTestSuites is the report as JUnit: a suite per file, a case per
// test; a file that could not run is a suite with one erring case.
func ruleTestSuites(rep *starlark.TestReport) junitSuites {
	all := junitSuites{Name: "the-loop hooks test"}
	for _, f := range rep.Files {
		s := junitSuite{Name: f.Path}
		if f.Err != "" {
			s.Tests, s.Errors = 1, 1
			s.Cases = []junitCase{{Name: "load", Classname: f.Path,
				Error: &junitProblem{Message: "could not run", Type: "error", Text: f.Err}}}
		}
		for _, t := range f.Tests {
			c := junitCase{Name: t.Name, Classname: f.Path, SystemOut: strings.Join(t.Prints, "\n")}
			if !t.Passed {
				var lines []string
				for _, fl := range t.Failures {
					lines = append(lines, fl.Pos+": "+fl.Msg)
				}
				first, _, _ := strings.Cut(t.Failures[0].Msg, "\n")
				c.Failure = &junitProblem{Message: first, Type: "failure", Text: strings.Join(lines, "\n")}
				s.Failures++
			}
			s.Tests++
			s.Cases = append(s.Cases, c)
		}
		all.add(s)
	}
	return all
}
