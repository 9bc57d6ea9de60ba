package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/the-loop/the-loop/graph"
)

// The report formats as they were before reports streamed, kept so that a
// test can compare every byte they wrote with what the streaming writers
// write: each took the whole list of reports at once.

// legacyTally is checkView.tally over a list of reports, as it was.
func legacyTally(v checkView, reports []*graph.StatusReport) string {
	what := "satisfied"
	if v.FailOn == graph.FailOnBlock {
		what = "not blocked"
	}
	s := fmt.Sprintf("%d/%d work items %s", legacySatisfied(v, reports), len(reports)+len(v.Unevaluated), what)
	if len(v.Unevaluated) > 0 {
		s += fmt.Sprintf("; %d could not be evaluated", len(v.Unevaluated))
	}
	return s
}

func legacySatisfied(v checkView, reports []*graph.StatusReport) int {
	n := 0
	for _, r := range reports {
		if !r.Fails(v.FailOn) {
			n++
		}
	}
	return n
}

// legacyFormats are the formats as they were: each given every report
// at once.
var legacyFormats = map[string]func(*Output, []*graph.StatusReport, checkView) error{
	"table": legacyText, "text": legacyText, "json": legacyJSON, "github": legacyGitHub, "sarif": legacySARIF, "junit": legacyJUnit,
}

// legacyWriteReports is writeReports as it was.
func legacyWriteReports(out *Output, format string, reports []*graph.StatusReport, view checkView) error {
	if err := legacyFormats[format](out, reports, view); err != nil {
		return err
	}
	if format != "github" {
		printNotes(out, view.Notes)
	}
	return nil
}

func legacyText(out *Output, reports []*graph.StatusReport, view checkView) error {
	var b bytes.Buffer
	for _, r := range reports {
		if view.Status {
			writeStatus(&b, r)
			continue
		}
		fmt.Fprintf(&b, "%s\n", visible(itemHeadline(r)))
		reached, ahead := r.Reached()
		for _, n := range reached {
			if !n.Satisfied() || hasWarnings(n) {
				writeNode(&b, n)
			}
		}
		if !view.All {
			writeAhead(&b, ahead)
		}
		if view.Verbose {
			writeUnshown(&b, r)
		}
	}
	if view.All {
		fmt.Fprintf(&b, "\n%s\n", legacyTally(view, reports))
	}
	_, err := io.WriteString(out.Stdout, b.String())
	return err
}

func legacyJSON(out *Output, reports []*graph.StatusReport, view checkView) error {
	if !view.All && len(reports) == 1 {
		return writeJSON(out, reports[0])
	}
	list := make([]any, 0, len(reports)+len(view.Unevaluated))
	for _, r := range reports {
		list = append(list, r)
	}
	for _, f := range view.Unevaluated {
		list = append(list, unevaluated{WorkItem: f.Item, Error: f.Err.Error()})
	}
	return writeJSON(out, list)
}

func legacyGitHub(out *Output, reports []*graph.StatusReport, view checkView) error {
	var b strings.Builder
	counts := map[string]int{}
	for _, n := range view.Notes {
		fmt.Fprintf(&b, "::notice title=the-loop::%s\n", ghData(n))
	}
	// Every finding of every report first, each once with the items it is
	// on; then the groups, each holding the findings first seen on it.
	type occurrence struct {
		key   findingKey
		first string
	}
	var order []occurrence
	anns := map[findingKey]*ghAnnotation{}
	for _, r := range reports {
		seen := map[findingKey]int{}
		for _, n := range shown(r) {
			for _, f := range n.Findings {
				k := keyOf(f)
				k.nth = seen[k]
				seen[keyOf(f)]++
				if a, ok := anns[k]; ok {
					a.add(r.WorkItem, n.Node)
					continue
				}
				counts[f.Severity]++
				anns[k] = newAnnotation(r, f, view.GitHub.Prefix)
				order = append(order, occurrence{k, r.WorkItem})
			}
		}
	}
	for _, r := range reports {
		fmt.Fprintf(&b, "::group::%s\n", ghData(itemHeadline(r)))
		for _, o := range order {
			if o.first == r.WorkItem {
				b.WriteString(anns[o.key].workflowCommand())
			}
		}
		for _, u := range r.Unshown() {
			counts[graph.SeverityNotice]++
			fmt.Fprintf(&b, "::notice title=%s::%s\n", ghProp("the-loop/"+u.Run.Hook), ghData(unshownText(r, u)))
		}
		b.WriteString("::endgroup::\n")
	}
	for _, f := range view.Unevaluated {
		fmt.Fprintf(&b, "::error title=the-loop::%s\n", ghData(f.Item+" could not be evaluated: "+f.Err.Error()))
	}
	fmt.Fprintf(&b, "the-loop: %s\n", legacyTally(view, reports))
	for _, sev := range []string{graph.SeverityError, graph.SeverityWarning, graph.SeverityNotice} {
		if counts[sev] > githubShownPerType {
			fmt.Fprintf(&b, "the-loop: %d %ss; GitHub shows the first %d as annotations, the log and the step summary hold them all\n", counts[sev], sev, githubShownPerType)
		}
	}
	if _, err := io.WriteString(out.Stdout, b.String()); err != nil {
		return err
	}
	summarise(out, view, func() string { return legacyStepSummary(reports, view) })
	return nil
}

// legacyStepSummary is the Markdown appended to the step summary: the tally,
// the items that could not be evaluated and the notes, then a row per
// finding of a reached node that is unmet or warns (a row for such a node
// with none, and for an item with no such node), rows that differ only in
// their item being one row listing the items. Whatever would take it past
// maxStepSummary is counted, not written.
func legacyStepSummary(reports []*graph.StatusReport, view checkView) string {
	type row struct {
		rest  string
		items []string
	}
	var rows []*row
	byKey := map[string]*row{}
	for _, r := range reports {
		verdict := "✅ ok"
		if r.Fails(view.FailOn) {
			verdict = "❌ unmet"
		} else if !r.OK {
			verdict = "⏳ waiting"
		}
		var rests []string
		for _, n := range shown(r) {
			if n.Satisfied() && !hasWarnings(n) {
				continue
			}
			if len(n.Findings) == 0 {
				rests = append(rests, fmt.Sprintf(" | %s | %s | %s | |\n", verdict, mdText(n.Node), n.Status))
			}
			for _, f := range n.Findings {
				rests = append(rests, fmt.Sprintf(" | %s | %s | %s | %s |\n", verdict, mdText(n.Node), n.Status, summaryFinding(f, view.GitHub)))
			}
		}
		if len(rests) == 0 {
			rests = append(rests, fmt.Sprintf(" | %s | %s | | |\n", verdict, mdText(r.CurrentNode)))
		}
		seen := map[string]int{}
		for _, rest := range rests {
			key := fmt.Sprintf("%s\x00%d", rest, seen[rest])
			seen[rest]++
			if x, ok := byKey[key]; ok {
				x.items = append(x.items, r.WorkItem)
				continue
			}
			byKey[key] = &row{rest: rest, items: []string{r.WorkItem}}
			rows = append(rows, byKey[key])
		}
	}
	var b strings.Builder
	left := 0
	// add writes line unless it would leave no room for saying how many
	// lines were left out.
	add := func(line string) {
		if left > 0 || b.Len()+len(line) > maxStepSummary-256 {
			left++
			return
		}
		b.WriteString(line)
	}
	add("## the-loop check\n\n")
	add(mdText(legacyTally(view, reports)) + "\n")
	for _, f := range view.Unevaluated {
		add(fmt.Sprintf("- ❌ %s could not be evaluated: %s\n", mdText(f.Item), mdText(graph.Cut(f.Err.Error(), maxSummaryLine))))
	}
	for _, n := range view.Notes {
		add(fmt.Sprintf("\n> %s\n", mdText(graph.Cut(n, maxSummaryLine))))
	}
	if len(reports) > 0 {
		add("\n| work items | verdict | node | status | finding |\n|---|---|---|---|---|\n")
	}
	for _, x := range rows {
		items := x.items
		more := ""
		if len(items) > maxListedItems {
			items, more = items[:maxListedItems], fmt.Sprintf(" and %d more", len(items)-maxListedItems)
		}
		add("| " + mdText(strings.Join(items, ", ")+more) + x.rest)
	}
	if left > 0 {
		fmt.Fprintf(&b, "\n%d more line(s) not shown: a step summary is limited to 1 MiB. The log holds every finding.\n", left)
	}
	return b.String()
}

func legacySARIF(out *Output, reports []*graph.StatusReport, view checkView) error {
	rules, index := legacySARIFRules(reports)
	inv := sarifInvocation{ExecutionSuccessful: len(view.Unevaluated) == 0}
	for _, n := range view.Notes {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{Level: "note", Message: sarifText{n}})
	}
	for _, f := range view.Unevaluated {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications,
			sarifNotification{Level: "error", Message: sarifText{f.Item + " could not be evaluated: " + f.Err.Error()}})
	}
	for _, r := range reports {
		for _, u := range r.Unshown() {
			inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{Level: "note", Message: sarifText{unshownText(r, u)}})
		}
	}
	// Each finding once, with every item it is on.
	var findings []*sarifFinding
	byKey := map[findingKey]*sarifFinding{}
	left := 0
	for _, r := range reports {
		seen := map[findingKey]int{}
		for _, n := range shown(r) {
			for _, f := range n.Findings {
				k := keyOf(f)
				k.nth = seen[k]
				seen[keyOf(f)]++
				if sf, ok := byKey[k]; ok {
					sf.items.add(r.WorkItem, n.Node)
					continue
				}
				if len(findings) == maxSARIFResults {
					left++
					continue
				}
				sf := sarifFindingOf(r, n, f, view.GitHub.Prefix)
				byKey[k] = &sf
				findings = append(findings, &sf)
			}
		}
	}
	results := []sarifResult{}
	for _, sf := range findings {
		results = append(results, sf.result(index[sf.hook]))
	}
	if left > 0 {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{Level: "warning",
			Message: sarifText{fmt.Sprintf("%d more finding(s) not written: code scanning takes at most %d results a run", left, maxSARIFResults)}})
	}
	return writeJSON(out, sarifLogOf(view, rules, inv, results))
}

// legacySARIFRules lists, sorted, every hook of the evaluated chains and every
// hook a finding names, and where each is in the list.
func legacySARIFRules(reports []*graph.StatusReport) ([]sarifRule, map[string]int) {
	seen := map[string]bool{}
	for _, r := range reports {
		for _, n := range r.Nodes {
			for _, h := range n.Hooks {
				seen[h.Hook] = true
			}
			for _, f := range n.Findings {
				seen[f.Hook] = true
			}
		}
	}
	return sarifRules(seen)
}

func legacyJUnit(out *Output, reports []*graph.StatusReport, view checkView) error {
	all := junitSuites{Name: "the-loop"}
	for _, r := range reports {
		s := junitSuite{Name: r.WorkItem, Time: junitTime(r.Elapsed)}
		unshown := r.Unshown()
		for _, n := range shown(r) {
			c := junitCaseOf(r, n, view.FailOn)
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
		all.add(s)
	}
	for _, f := range view.Unevaluated {
		all.add(junitSuite{Name: f.Item, Tests: 1, Errors: 1, Time: junitTime(0), Cases: []junitCase{{
			Name: "evaluate", Classname: "the-loop." + f.Item, Time: junitTime(0),
			Error: &junitProblem{Message: "could not be evaluated", Type: "error", Text: f.Err.Error()},
		}}})
	}
	return writeXML(out, all)
}
