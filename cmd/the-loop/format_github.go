package main

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

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
	return &githubWriter{out: out, view: view, counts: map[string]int{}, summary: newSummaryRows(view)}
}

// githubWriter keeps the log's groups until finish, because the notes
// the log opens with are only all known once every item is evaluated (a
// state the base revision overrides is noted as its item is); the step
// summary keeps its rows, up to the summary's own limit.
type githubWriter struct {
	out     *Output
	view    checkView
	count   counted
	counts  map[string]int // findings by severity
	groups  strings.Builder
	summary *summaryRows
}

func (w *githubWriter) report(r *graph.StatusReport) error {
	w.count.add(r, w.view.FailOn)
	b := &w.groups
	fmt.Fprintf(b, "::group::%s\n", ghData(itemHeadline(r)))
	for _, n := range shown(r) {
		for _, f := range n.Findings {
			w.counts[f.Severity]++
			writeAnnotation(b, r, f, w.view.GitHub.Prefix)
		}
	}
	b.WriteString("::endgroup::\n")
	w.summary.add(r)
	return nil
}

func (w *githubWriter) finish(view checkView) error {
	var b strings.Builder
	for _, n := range view.Notes {
		fmt.Fprintf(&b, "::notice title=the-loop::%s\n", ghData(n))
	}
	b.WriteString(w.groups.String())
	for _, f := range view.Unevaluated {
		fmt.Fprintf(&b, "::error title=the-loop::%s\n", ghData(f.Item+" could not be evaluated: "+f.Err.Error()))
	}
	fmt.Fprintf(&b, "the-loop: %s\n", view.tally(w.count))
	for _, sev := range []string{graph.SeverityError, graph.SeverityWarning, graph.SeverityNotice} {
		if w.counts[sev] > githubShownPerType {
			fmt.Fprintf(&b, "the-loop: %d %ss; GitHub shows the first %d as annotations, the log and the step summary hold them all\n", w.counts[sev], sev, githubShownPerType)
		}
	}
	if _, err := io.WriteString(w.out.Stdout, b.String()); err != nil {
		return err
	}
	summarise(w.out, view, func() string { return w.summary.markdown(view, w.count) })
	return nil
}

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

// writeAnnotation is one finding as a workflow command. A finding about no
// file, or about a path that is not one inside the repository, is
// annotated on the run rather than on a file.
func writeAnnotation(b *strings.Builder, r *graph.StatusReport, f graph.Finding, prefix string) {
	cmd := f.Severity
	if cmd != graph.SeverityError && cmd != graph.SeverityWarning {
		cmd = graph.SeverityNotice
	}
	var props []string
	text := findingText(r, f)
	if p, ok := repoPath(f.Path); ok {
		props = append(props, "file="+ghProp(path.Join(prefix, p)))
		if f.Line > 0 {
			props = append(props, fmt.Sprintf("line=%d", f.Line))
			if f.Column > 0 {
				props = append(props, fmt.Sprintf("col=%d", f.Column))
			}
		}
	} else if f.Path != "" {
		text += " (" + f.Path + ")"
	}
	props = append(props, "title="+ghProp("the-loop/"+f.Hook))
	fmt.Fprintf(b, "::%s %s::%s\n", cmd, strings.Join(props, ","), ghData(text))
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
// come: a row per work item and reached node that is unmet or warns (one
// row for an item with none), linking each finding to its file. Rows past
// what the summary can hold are only counted.
type summaryRows struct {
	view    checkView
	rows    []string
	size    int // of rows
	dropped int // rows that cannot fit, whatever comes before them
}

func newSummaryRows(view checkView) *summaryRows { return &summaryRows{view: view} }

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
	keep := func(row string) {
		if s.dropped > 0 || s.size+len(row) > maxStepSummary-256 {
			s.dropped++
			return
		}
		s.rows = append(s.rows, row)
		s.size += len(row)
	}
	rows := 0
	for _, n := range shown(r) {
		if n.Satisfied() && !hasWarnings(n) {
			continue
		}
		keep(fmt.Sprintf("| %s | %s | %s | %s | %s |\n", mdText(r.WorkItem), verdict, mdText(n.Node), n.Status, summaryFindings(n, s.view.GitHub)))
		rows++
	}
	if rows == 0 {
		keep(fmt.Sprintf("| %s | %s | %s | | |\n", mdText(r.WorkItem), verdict, mdText(r.CurrentNode)))
	}
}

// markdown is the Markdown appended to the step summary: the tally, the
// items that could not be evaluated and the notes, then the rows.
// Whatever would take it past maxStepSummary is counted, not written.
func (s *summaryRows) markdown(view checkView, count counted) string {
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
	add(mdText(view.tally(count)) + "\n")
	for _, f := range view.Unevaluated {
		add(fmt.Sprintf("- ❌ %s could not be evaluated: %s\n", mdText(f.Item), mdText(graph.Cut(f.Err.Error(), maxSummaryLine))))
	}
	for _, n := range view.Notes {
		add(fmt.Sprintf("\n> %s\n", mdText(graph.Cut(n, maxSummaryLine))))
	}
	if count.reports > 0 {
		add("\n| work item | verdict | node | status | findings |\n|---|---|---|---|---|\n")
	}
	for _, row := range s.rows {
		add(row)
	}
	left += s.dropped
	if left > 0 {
		fmt.Fprintf(&b, "\n%d more line(s) not shown: a step summary is limited to 1 MiB. The log holds every finding.\n", left)
	}
	return b.String()
}

// maxSummaryLine bounds one note or error in the step summary.
const maxSummaryLine = 4 << 10

// summaryFindings is a node's findings as one table cell.
func summaryFindings(n graph.NodeReport, env githubEnv) string {
	parts := make([]string, 0, len(n.Findings))
	for _, f := range n.Findings {
		s := fmt.Sprintf("`%s` %s", mdCode(f.Hook), mdText(f.Text))
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
		parts = append(parts, s)
	}
	return strings.Join(parts, "<br>")
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
