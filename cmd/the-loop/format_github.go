package main

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/the-loop/the-loop/channels/github"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/repo"
)

// githubFormat writes GitHub Actions workflow commands: an annotation per
// finding of every reached node, grouped per work item, and, when the step
// has a summary file, a Markdown table of the unmet nodes appended to it.
//
// Everything a finding holds comes from the checkout under review, so every
// value is escaped as the runner requires: a message cannot end its line
// and start a command of its own, and a file name cannot add a property.
type githubFormat struct{}

// githubEnv is what the github format reads from the Actions environment.
type githubEnv struct {
	// Summary is $GITHUB_STEP_SUMMARY, the file a step appends Markdown to.
	Summary string
	// Blob is the URL files link to, ending in the commit:
	// $GITHUB_SERVER_URL/$GITHUB_REPOSITORY/blob/$GITHUB_SHA; "" links
	// nothing.
	Blob string
	// Prefix is the repository's place in the workspace, slash-separated
	// ("" at its root): annotations and links name files from the
	// workspace root, the checkout GitHub knows.
	Prefix string
}

// githubEnvFrom reads the Actions environment for a repository rooted at
// root.
func githubEnvFrom(getenv func(string) string, root string) githubEnv {
	env := githubEnv{Summary: getenv("GITHUB_STEP_SUMMARY")}
	server, slug, sha := getenv("GITHUB_SERVER_URL"), getenv("GITHUB_REPOSITORY"), getenv("GITHUB_SHA")
	if server != "" && slug != "" && sha != "" {
		env.Blob = strings.TrimSuffix(server, "/") + "/" + slug + "/blob/" + sha
	}
	if ws := getenv("GITHUB_WORKSPACE"); ws != "" {
		if real, err := filepath.EvalSymlinks(ws); err == nil {
			ws = real
		}
		// GitHub names a file by its path in the repository: from the
		// git toplevel holding root, which is the workspace only when
		// the repository was checked out at the workspace's root.
		top := gitToplevel(root)
		if top == "" {
			top = ws
		}
		rel, err := filepath.Rel(top, root)
		if err == nil && rel != "." && filepath.IsLocal(rel) {
			env.Prefix = filepath.ToSlash(rel)
		}
	}
	return env
}

// gitToplevel is the nearest directory at or above root that holds .git
// (a directory, or a worktree's file), "" when none does.
func gitToplevel(root string) string {
	if root == "" {
		return ""
	}
	dir, err := filepath.Abs(root)
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Annotation limits GitHub displays: past them, commands still reach the
// log but are not shown on the pull request.
const githubShownPerType = 10

// maxStepSummary keeps what this step appends under GitHub's 1 MiB limit
// for a step's summary, with room to spare.
const maxStepSummary = 1000 << 10

func (githubFormat) start(out *Output, view checkView) reportWriter {
	return &githubWriter{out: out, view: view, counts: map[string]int{}, index: map[findingKey]int{}, summary: newSummaryRows(view)}
}

// githubWriter keeps the log until finish, because the notes the log
// opens with are only all known once every item is evaluated (a state the
// base revision overrides is noted as its item is), and because a finding
// several items share is one annotation naming them all. What it keeps
// grows with the distinct findings, not with the items that share them:
// an annotation lists at most maxListedItems items and counts the rest.
// The step summary keeps its rows, up to the summary's own limit.
type githubWriter struct {
	out     *Output
	view    checkView
	count   counted
	waiting bool           // a report that is not OK though it does not fail
	counts  map[string]int // annotations by severity
	groups  []ghGroup
	anns    []*ghAnnotation
	index   map[findingKey]int
	summary *summaryRows
}

// ghGroup is one item's part of the log: its headline, and the
// annotations first found on it.
type ghGroup struct {
	headline string
	anns     []int
	notices  []string
}

func (w *githubWriter) report(r *graph.StatusReport) error {
	w.count.add(r, w.view.FailOn)
	w.waiting = w.waiting || !r.OK
	g := ghGroup{headline: itemHeadline(r)}
	// The k-th of a finding an item has twice is one with another item's
	// k-th: identical findings of one item stay as many.
	seen := map[findingKey]int{}
	for _, n := range shown(r) {
		for _, f := range n.Findings {
			k := keyOf(f)
			k.nth = seen[k]
			seen[keyOf(f)]++
			if i, ok := w.index[k]; ok {
				w.anns[i].add(r.WorkItem, n.Node)
				continue
			}
			w.counts[f.Severity]++
			w.index[k] = len(w.anns)
			g.anns = append(g.anns, len(w.anns))
			w.anns = append(w.anns, newAnnotation(r, f, w.view.GitHub.Prefix))
		}
	}
	// The repository hooks the report does not show, and why: notices of
	// the item's group, never merged, as they are about the item.
	for _, u := range r.Unshown() {
		w.counts[graph.SeverityNotice]++
		g.notices = append(g.notices, fmt.Sprintf("::notice title=%s::%s\n", ghProp("the-loop/"+u.Run.Hook), ghData(unshownText(r, u))))
	}
	w.groups = append(w.groups, g)
	w.summary.add(r)
	return nil
}

func (w *githubWriter) finish(view checkView) error {
	var b strings.Builder
	for _, n := range view.Notes {
		fmt.Fprintf(&b, "::notice title=the-loop::%s\n", ghData(n))
	}
	// With a check run made, the annotations are on it, and the log holds
	// them as plain lines: as workflow commands too, each would show twice.
	onRun, ranNote := w.checkRun(view)
	if ranNote != "" {
		b.WriteString(ranNote)
	}
	for _, g := range w.groups {
		fmt.Fprintf(&b, "::group::%s\n", ghData(g.headline))
		for _, i := range g.anns {
			if onRun {
				b.WriteString(w.anns[i].logLine())
			} else {
				b.WriteString(w.anns[i].workflowCommand())
			}
		}
		for _, n := range g.notices {
			b.WriteString(n)
		}
		b.WriteString("::endgroup::\n")
	}
	for _, f := range view.Unevaluated {
		fmt.Fprintf(&b, "::error title=the-loop::%s\n", ghData(f.Item+" could not be evaluated: "+f.Err.Error()))
	}
	fmt.Fprintf(&b, "the-loop: %s\n", view.tally(w.count))
	for _, sev := range []string{graph.SeverityError, graph.SeverityWarning, graph.SeverityNotice} {
		if !onRun && w.counts[sev] > githubShownPerType {
			fmt.Fprintf(&b, "the-loop: %d %ss; GitHub shows the first %d as annotations, the log and the step summary hold them all\n", w.counts[sev], sev, githubShownPerType)
		}
	}
	if _, err := io.WriteString(w.out.Stdout, b.String()); err != nil {
		return err
	}
	summarise(w.out, view, func() string { return w.summary.markdown(view, w.count, maxStepSummary) })
	return nil
}

// conclusion is the check run's: failure when the run fails under
// --fail-on or could not evaluate an item, neutral when something waits
// that --fail-on block lets pass, else success.
func (w *githubWriter) conclusion(view checkView) string {
	switch {
	case w.count.satisfied < w.count.reports || len(view.Unevaluated) > 0:
		return github.ConclusionFailure
	case w.waiting:
		return github.ConclusionNeutral
	}
	return github.ConclusionSuccess
}

// checkRun sends the annotations and the summary as a check run, when
// the verb was asked to: whether it was made, and what the log says
// about it. A check run GitHub refuses is said in one notice, and the
// annotations are then workflow commands, as without one.
func (w *githubWriter) checkRun(view checkView) (bool, string) {
	if view.CheckRun == nil {
		return false, ""
	}
	run := checkRunReport{
		Title:      view.tally(w.count),
		Summary:    w.summary.markdown(view, w.count, github.MaxCheckRunSummary),
		Conclusion: w.conclusion(view),
	}
	for _, a := range w.anns {
		if ca, ok := a.checkRun(); ok {
			run.Annotations = append(run.Annotations, ca)
		} else {
			run.Unplaced++
		}
	}
	url, err := view.CheckRun(run)
	switch {
	case errors.Is(err, github.ErrCheckRunForbidden):
		return false, fmt.Sprintf("::notice title=the-loop::%s\n", ghData("no check run: the job's token may not create one (grant it checks: write); the findings are workflow commands instead, of which GitHub shows 10 errors and 10 warnings a step"))
	case err != nil:
		return false, fmt.Sprintf("::warning title=the-loop::%s\n", ghData("no check run: "+err.Error()+"; the findings are workflow commands instead"))
	}
	note := fmt.Sprintf("the-loop: %d annotation(s) on the check run %s\n", len(run.Annotations), url)
	if run.Unplaced > 0 {
		note += fmt.Sprintf("the-loop: %d finding(s) name no file in the repository: they are in the check run's summary, and below\n", run.Unplaced)
	}
	return true, note
}

// checkRunReport is what the github format hands a check run: the
// annotations of the findings that name a file (the Checks API needs a
// path), how many do not, and the summary, title and conclusion.
type checkRunReport struct {
	Title, Summary, Conclusion string
	Annotations                []github.Annotation
	Unplaced                   int
}

// checkRunner makes a check run of a report, answering its page.
type checkRunner func(checkRunReport) (string, error)

// writeFailure is a run that could not answer: an error annotation, and
// the reason in the step summary.
func (githubFormat) writeFailure(out *Output, err error, view checkView) error {
	if _, werr := fmt.Fprintf(out.Stdout, "::error title=the-loop::%s\n", ghData("could not run: "+err.Error())); werr != nil {
		return werr
	}
	summarise(out, view, func() string {
		return "## the-loop check\n\n❌ could not run: " + mdText(graph.Cut(err.Error(), maxSummaryLine)) + "\n"
	})
	return nil
}

// summarise appends the step summary md makes, when the step has one.
func summarise(out *Output, view checkView, md func() string) {
	if view.GitHub.Summary == "" {
		return
	}
	if err := appendFile(view.GitHub.Summary, md()); err != nil {
		// The annotations and the exit code are the gate; a summary that
		// cannot be written is said, not fatal.
		fmt.Fprintf(out.Stderr, "the-loop: warning: could not write the step summary: %v\n", err)
	}
}

// findingKey is a finding's identity across work items: the same hook
// saying the same thing at the same place of the same node is one
// finding, however many items it is reported on. The node is part of it
// because a gate's words ("no authorized feedback yet") need not name the
// gate; nth tells apart the copies of one finding an item has.
type findingKey struct {
	node, hook, path, text string
	line, column, nth      int
	reportOnly             bool
}

func keyOf(f graph.Finding) findingKey {
	return findingKey{node: f.Node, hook: f.Hook, path: f.Path, text: f.Text, line: f.Line, column: f.Column, reportOnly: f.ReportOnly}
}

// maxListedItems bounds the work items a finding names; the others are
// counted.
const maxListedItems = 20

// itemList is the work items (and their nodes) a finding was reported on,
// in report order: at most maxListedItems of them, and how many more.
type itemList struct {
	items, nodes []string
	more         int
}

func (l *itemList) add(item, node string) {
	if len(l.items) == maxListedItems {
		l.more++
	} else {
		l.items = append(l.items, item)
	}
	if !slices.Contains(l.nodes, node) && len(l.nodes) < maxListedItems {
		l.nodes = append(l.nodes, node)
	}
}

// String is "issue-1, issue-2 and 3 more".
func (l itemList) String() string {
	s := strings.Join(l.items, ", ")
	if l.more > 0 {
		s += fmt.Sprintf(" and %d more", l.more)
	}
	return s
}

// count is how many items the list stands for.
func (l itemList) count() int { return len(l.items) + l.more }

// ghAnnotation is one finding as the github format reports it, once
// whatever the number of work items that share it: the one model the
// workflow commands and the check run's annotations are both made from,
// so that the two never say different things.
type ghAnnotation struct {
	itemList
	severity, hook, text string
	// file is the workspace-relative path, "" for a finding about no file
	// in the repository; other is the path such a finding named.
	file, other  string
	line, column int
}

func newAnnotation(r *graph.StatusReport, f graph.Finding, prefix string) *ghAnnotation {
	a := &ghAnnotation{severity: f.Severity, hook: f.Hook, text: f.Text + reportOnlyTag(f)}
	if p, ok := repoPath(f.Path); ok {
		a.file = path.Join(prefix, p)
		if f.Line > 0 {
			a.line, a.column = f.Line, f.Column
		}
	} else {
		a.other = f.Path
	}
	a.add(r.WorkItem, f.Node)
	return a
}

// message is findingText's line for every item the finding is on:
// "issue-1, issue-2 · implementation: what the hook said".
func (a *ghAnnotation) message() string {
	s := fmt.Sprintf("%s · %s: %s", a.itemList, strings.Join(a.nodes, ", "), a.text)
	if a.other != "" {
		s += " (" + a.other + ")"
	}
	return s
}

// command is the workflow command's name: error, warning or notice.
func (a *ghAnnotation) command() string {
	if a.severity == graph.SeverityError || a.severity == graph.SeverityWarning {
		return a.severity
	}
	return graph.SeverityNotice
}

func (a *ghAnnotation) title() string { return "the-loop/" + a.hook }

// workflowCommand is the annotation as a workflow command. A finding about
// no file, or about a path that is not one inside the repository, is
// annotated on the run rather than on a file.
func (a *ghAnnotation) workflowCommand() string {
	var props []string
	if a.file != "" {
		props = append(props, "file="+ghProp(a.file))
		if a.line > 0 {
			props = append(props, fmt.Sprintf("line=%d", a.line))
			if a.column > 0 {
				props = append(props, fmt.Sprintf("col=%d", a.column))
			}
		}
	}
	props = append(props, "title="+ghProp(a.title()))
	return fmt.Sprintf("::%s %s::%s\n", a.command(), strings.Join(props, ","), ghData(a.message()))
}

// logLine is the annotation as a plain line of the log, for a run whose
// annotations are on a check run. It starts with no "::", so the runner
// reads no command in it.
func (a *ghAnnotation) logLine() string {
	where := a.file
	if where != "" && a.line > 0 {
		where += fmt.Sprintf(":%d", a.line)
		if a.column > 0 {
			where += fmt.Sprintf(":%d", a.column)
		}
	}
	if where != "" {
		where += ": "
	}
	return ghData(fmt.Sprintf("%s: %s%s [%s]", a.command(), where, a.message(), a.title())) + "\n"
}

// checkLevels are the Checks API's levels for the workflow commands'.
var checkLevels = map[string]string{graph.SeverityError: github.LevelFailure, graph.SeverityWarning: github.LevelWarning, graph.SeverityNotice: github.LevelNotice}

// checkRun is the annotation as the Checks API takes it; false for a
// finding about no file, which the API cannot place.
func (a *ghAnnotation) checkRun() (github.Annotation, bool) {
	if a.file == "" {
		return github.Annotation{}, false
	}
	line := max(a.line, 1)
	ca := github.Annotation{Path: a.file, StartLine: line, EndLine: line, Level: checkLevels[a.command()],
		Message: a.message(), Title: a.title()}
	if a.line > 0 && a.column > 0 {
		ca.StartColumn, ca.EndColumn = a.column, a.column
	}
	if n := a.count(); n > 1 {
		ca.RawDetails = fmt.Sprintf("Reported on %d work items: %s.", n, a.itemList)
	}
	return ca, true
}

// repoPath is p cleaned when it names a file inside the repository.
func repoPath(p string) (string, bool) {
	if p == "" {
		return "", false
	}
	c, err := repo.Clean(p)
	if err != nil || c == "." {
		return "", false
	}
	return c, true
}

// ghData escapes a workflow command's message.
var ghData = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace

// ghProp escapes a workflow command's property value.
var ghProp = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace

// summaryRows are the step summary's table rows, kept as the reports
// come: a row per finding of a reached node that is unmet or warns (one
// for such a node with no finding, and one for an item with none of
// them), linking the finding to its file. Rows that are the same but for
// the work item are one row listing the items: a finding four items share
// is one row. Rows past what the summary can hold are only counted.
type summaryRows struct {
	view    checkView
	rows    []*summaryRow
	index   map[string]int
	size    int // of rows
	dropped int // rows that cannot fit, whatever comes before them
}

// summaryRow is one row: the items, and the rest of the row.
type summaryRow struct {
	items itemList
	rest  string
}

func newSummaryRows(view checkView) *summaryRows {
	return &summaryRows{view: view, index: map[string]int{}}
}

// add keeps r's rows while they fit in the summary with nothing before
// them: one that does not would not fit after the tally and notes either,
// and from the first that does not, none is written.
func (s *summaryRows) add(r *graph.StatusReport) {
	verdict := "✅ ok"
	if r.Fails(s.view.FailOn) {
		verdict = "❌ unmet"
	} else if !r.OK {
		verdict = "⏳ waiting"
	}
	seen := map[string]int{}
	keep := func(rest string) {
		// As annotations do, an item's copies of one row stay as many.
		key := rest + "\x00" + strconv.Itoa(seen[rest])
		seen[rest]++
		if i, ok := s.index[key]; ok {
			row := s.rows[i]
			if row.items.count() < maxListedItems {
				s.size += len(r.WorkItem) + 2
			}
			row.items.add(r.WorkItem, "")
			return
		}
		size := len("| ") + len(r.WorkItem) + len(rest)
		if s.dropped > 0 || s.size+size > maxStepSummary-256 {
			s.dropped++
			return
		}
		row := &summaryRow{rest: rest}
		row.items.add(r.WorkItem, "")
		s.index[key] = len(s.rows)
		s.rows = append(s.rows, row)
		s.size += size
	}
	rows := 0
	for _, n := range shown(r) {
		if n.Satisfied() && !hasWarnings(n) {
			continue
		}
		rows++
		if len(n.Findings) == 0 {
			keep(fmt.Sprintf(" | %s | %s | %s | |\n", verdict, mdText(n.Node), n.Status))
		}
		for _, f := range n.Findings {
			keep(fmt.Sprintf(" | %s | %s | %s | %s |\n", verdict, mdText(n.Node), n.Status, summaryFinding(f, s.view.GitHub)))
		}
	}
	if rows == 0 {
		keep(fmt.Sprintf(" | %s | %s | | |\n", verdict, mdText(r.CurrentNode)))
	}
}

// markdown is the Markdown of the summary, at most limit bytes: the
// tally, the items that could not be evaluated and the notes, then the
// rows. Whatever would take it past limit is counted, not written. The
// step summary takes maxStepSummary, a check run's summary
// github.MaxCheckRunSummary.
func (s *summaryRows) markdown(view checkView, count counted, limit int) string {
	var b strings.Builder
	left := 0
	// add writes line unless it would leave no room for saying how many
	// lines were left out.
	add := func(line string) {
		if left > 0 || b.Len()+len(line) > limit-256 {
			left++
			return
		}
		b.WriteString(line)
	}
	add("## the-loop check\n\n")
	add(mdText(view.tally(count)) + "\n")
	for _, f := range view.Unevaluated {
		add(fmt.Sprintf("- ❌ %s could not be evaluated: %s\n", mdText(f.Item), mdText(graph.Cut(f.Err.Error(), maxSummaryLine))))
	}
	for _, n := range view.Notes {
		add(fmt.Sprintf("\n> %s\n", mdText(graph.Cut(n, maxSummaryLine))))
	}
	if count.reports > 0 {
		add("\n| work items | verdict | node | status | finding |\n|---|---|---|---|---|\n")
	}
	for _, row := range s.rows {
		add("| " + mdText(row.items.String()) + row.rest)
	}
	left += s.dropped
	if left > 0 {
		what := "a step summary is limited to 1 MiB"
		if limit < maxStepSummary {
			what = fmt.Sprintf("a check run's summary is limited to %d characters", limit)
		}
		fmt.Fprintf(&b, "\n%d more line(s) not shown: %s. The log holds every finding.\n", left, what)
	}
	return b.String()
}

// maxSummaryLine bounds one note or error in the step summary.
const maxSummaryLine = 4 << 10

// summaryFinding is one finding as a table cell, linked to its file.
func summaryFinding(f graph.Finding, env githubEnv) string {
	s := fmt.Sprintf("`%s` %s", mdCode(f.Hook), mdText(f.Text+reportOnlyTag(f)))
	if f.Severity == graph.SeverityWarning {
		s = "⚠️ " + s
	}
	if p, ok := repoPath(f.Path); ok {
		where := f.Where()
		if env.Blob != "" {
			link := env.Blob + "/" + escapePath(path.Join(env.Prefix, p))
			if f.Line > 0 {
				link += fmt.Sprintf("#L%d", f.Line)
			}
			s += fmt.Sprintf(" ([%s](%s))", mdText(where), link)
		} else {
			s += " (" + mdText(where) + ")"
		}
	}
	return s
}

// mdText is s as inert Markdown table text: shown as plain text, on one
// line, whatever it holds. Nothing in it can close the cell, start a link,
// markup or HTML, or become one by GitHub's own linking of URLs, @users
// and #issues; what would act on a terminal is shown escaped.
func mdText(s string) string { return mdEscapes.Replace(visible(s)) }

var mdEscapes = strings.NewReplacer(
	"\\", "\\\\", "|", "\\|", "<", "&lt;", ">", "&gt;", "&", "&amp;",
	"[", "\\[", "]", "\\]", "*", "\\*", "_", "\\_", "`", "\\`", "!", "\\!", "~", "\\~",
	"@", "&#64;", "#", "&#35;", "://", "&#58;//", "www.", "www&#46;",
)

// mdCode is s inside a code span: backticks and cell ends removed.
var mdCode = strings.NewReplacer("`", "'", "|", "/", "\r", " ", "\n", " ").Replace

func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		// A colon left as it is would make "a:b" a URI of scheme a.
		segs[i] = strings.ReplaceAll(url.PathEscape(s), ":", "%3A")
	}
	return strings.Join(segs, "/")
}

// appendFile appends s to the file at name, as GitHub expects a step to.
func appendFile(name, s string) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(f, s); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
