package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/policy"
)

// reportFormat renders what a verb that evaluates work items found: check,
// and graph status. Each lives in its own file (format_*.go) with its own
// golden test.
//
// A format is a stream: start is called before the first report with what
// the verb knows then, the writer it returns is handed each report in item
// order as soon as that item is evaluated, and finish ends the output with
// the whole run's view (the items that could not be evaluated, the notes).
// So check --all holds the report being written, never every report: at
// 10,000 items the reports were most of a half-gigabyte heap. A format
// whose first bytes depend on the whole run (JUnit's totals, SARIF's rule
// table, the notes the GitHub log opens with) keeps its own encoded
// output, which is a fraction of the reports' size, until finish.
type reportFormat interface {
	start(out *Output, view checkView) reportWriter
}

// reportWriter is one format's output in progress.
type reportWriter interface {
	// report writes, or keeps, one item's report.
	report(r *graph.StatusReport) error
	// finish writes what follows the last report; view is start's, with
	// Unevaluated and Notes now known.
	finish(view checkView) error
}

// checkView is how the verb was asked, and what it has to say beside the
// reports. All is --all (or --changed), whose output is a list even for
// one item; FailOn is the rule that decides what counts as failing;
// Unevaluated are the items that could not be evaluated at all (they are
// also named on stderr, and have no report); Notes are notices about the run
// itself, such as a change that edits the gate's own files; Status is set
// by graph status, whose text lists every reached node.
type checkView struct {
	All         bool
	FailOn      string
	Unevaluated []policy.ItemFailure
	Notes       []string
	Status      bool
	// GitHub is the Actions environment the github format links and
	// summarises into; zero outside Actions.
	GitHub githubEnv
	// Version names the tool in formats that record it.
	Version string
	// CheckRun, under check --check-run, sends the github format's
	// annotations and summary as a GitHub check run; nil sends none.
	CheckRun checkRunner
	// Verbose (-v) adds, per item, the repository hooks whose verdict the
	// report does not show, and why.
	Verbose bool
}

// counted is what a format's tally needs of the reports it was handed.
type counted struct {
	reports   int // every report
	satisfied int // those that pass the view's FailOn rule
}

func (c *counted) add(r *graph.StatusReport, failOn string) {
	c.reports++
	if !r.Fails(failOn) {
		c.satisfied++
	}
}

// total is every item the verb was asked about.
func (v checkView) total(c counted) int { return c.reports + len(v.Unevaluated) }

// tally is "N/M work items satisfied", and how many could not be
// evaluated.
func (v checkView) tally(c counted) string {
	what := "satisfied"
	if v.FailOn == graph.FailOnBlock {
		what = "not blocked"
	}
	s := fmt.Sprintf("%d/%d work items %s", c.satisfied, v.total(c), what)
	if len(v.Unevaluated) > 0 {
		s += fmt.Sprintf("; %d could not be evaluated", len(v.Unevaluated))
	}
	return s
}

// reportFormats is the registry the --format enum is built from, so help
// text and validation never drift from what exists.
//
// Departure from the original (docs/compatibility.md#more-report-formats-from-one-run): github, sarif and junit are ours; json and text stay the original's.
var reportFormats = map[string]reportFormat{
	"table":  textFormat{}, // check's name for text, kept for scripts that use it
	"text":   textFormat{},
	"json":   jsonFormat{},
	"github": githubFormat{},
	"sarif":  sarifFormat{},
	"junit":  junitFormat{},
}

func reportFormatNames() []string { return slices.Sorted(maps.Keys(reportFormats)) }

// mermaidFormat is the --format that draws the loop as a Mermaid
// flowchart: graph show's, and graph status's, which colours it by the
// item's verdicts. It is a picture of one item on one loop, not a report
// of many, so check does not take it.
const mermaidFormat = "mermaid"

// statusFormatNames are graph status's formats: the report formats, and
// the picture.
func statusFormatNames() []string {
	return slices.Sorted(slices.Values(append(reportFormatNames(), mermaidFormat)))
}

// failureWriter is a format that can say, in its own terms, that the verb
// could not run at all: a CI system reading a file of that format then
// reads why, rather than an empty file.
type failureWriter interface {
	writeFailure(out *Output, err error, view checkView) error
}

// reportView is how a verb reports on e's items: e's notes taken, so
// that a format that can carry them does, and the Actions environment.
func reportView(e *policy.Engine, failOn string) checkView {
	return checkView{FailOn: failOn, Notes: e.Notes(), GitHub: githubEnvFrom(os.Getenv, e.Root), Version: version()}
}

// writeReports writes reports in format, then says the notes on stderr,
// unless the format has made them annotations in the same log: for a
// verb that has its reports in hand (graph status).
func writeReports(out *Output, format string, reports []*graph.StatusReport, view checkView) error {
	if err := writeAll(reportFormats[format], out, reports, view); err != nil {
		return err
	}
	if format != "github" {
		printNotes(out, view.Notes)
	}
	return nil
}

// writeAll streams reports through f.
func writeAll(f reportFormat, out *Output, reports []*graph.StatusReport, view checkView) error {
	w := f.start(out, view)
	for _, r := range reports {
		if err := w.report(r); err != nil {
			return err
		}
	}
	return w.finish(view)
}

// findingText is a finding as one line of a CI system's: the work item,
// the node, and what the hook said.
func findingText(r *graph.StatusReport, f graph.Finding) string {
	return fmt.Sprintf("%s · %s: %s%s", r.WorkItem, f.Node, f.Text, reportOnlyTag(f))
}

// reportOnlyTag marks a finding of a hook check ran report-only
// (--all-findings): it changed no verdict, and says so wherever it shows.
func reportOnlyTag(f graph.Finding) string {
	if f.ReportOnly {
		return " (report only)"
	}
	return ""
}

// unshownText is a repository hook whose verdict r does not show, and
// why, as one line of a CI system's: the author's answer to "why did my
// rule say nothing?".
func unshownText(r *graph.StatusReport, u graph.UnshownHook) string {
	return fmt.Sprintf("%s · %s: %s (%s) %s", r.WorkItem, u.Node, u.Run.Hook, u.Run.Boundary, u.Why)
}

// itemHeadline is an item's verdict line: "issue-21: UNMET (at design)".
func itemHeadline(r *graph.StatusReport) string {
	verdict := "UNMET"
	if r.OK {
		verdict = "ok"
	}
	return fmt.Sprintf("%s: %s (at %s)", r.WorkItem, verdict, r.CurrentNode)
}

// shown are the nodes the CI formats report: those reached. A node past
// the pointer is not done yet, and its verdict is not a finding.
func shown(r *graph.StatusReport) []graph.NodeReport {
	reached, _ := r.Reached()
	return reached
}

// TextFormat is the --format flag of the verbs that answer with one
// object: text for people, or the answer as JSON.
type TextFormat struct {
	Format string `help:"Output format (${enum})." enum:"${textFormats}" default:"text"`
}

// write prints v as JSON under --format json, else what text renders.
func (f TextFormat) write(out *Output, v any, text func(io.Writer) error) error {
	if f.Format == "json" {
		return writeJSON(out, v)
	}
	return text(out.Stdout)
}

func (f TextFormat) outputFormat() string { return f.Format }

// GraphFormat is graph show's --format flag: TextFormat's two, and the
// loop drawn as a Mermaid flowchart.
type GraphFormat struct {
	Format string `help:"Output format (${enum}); mermaid draws the loop as a flowchart for a Markdown page." enum:"${graphFormats}" default:"text"`
}

func (f GraphFormat) outputFormat() string { return f.Format }

// JSONFormat is the --format flag of a verb whose answer is always JSON:
// accepted, so that every verb takes --format json.
type JSONFormat struct {
	Format string `help:"Output format: json, the only one this verb has." enum:"json" default:"json"`
}

func (f JSONFormat) outputFormat() string { return f.Format }
