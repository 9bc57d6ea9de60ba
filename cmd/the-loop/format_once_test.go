package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

// fourAtImplementation are four work items at implementation, each
// blocked by one repository-wide violation, and the first with one of its
// own.
func fourAtImplementation() []*graph.StatusReport {
	wide := graph.Finding{Hook: "x-licence-header", Severity: graph.SeverityError, Text: "missing SPDX header", Path: "src/main.go", Line: 1, Column: 1}
	var reports []*graph.StatusReport
	for i, item := range []string{"issue-1", "issue-2", "issue-3", "issue-4"} {
		fs := []graph.Finding{wide}
		if i == 0 {
			fs = append(fs, graph.Finding{Hook: "x-licence-header", Severity: graph.SeverityError, Text: "missing SPDX header", Path: "src/other.go", Line: 1, Column: 1})
		}
		reports = append(reports, blockedAt(item, "implementation", fs...))
	}
	return reports
}

func TestAFindingFourItemsShareIsOneAnnotationNamingThem(t *testing.T) {
	summary := filepath.Join(t.TempDir(), "summary.md")
	out, _ := githubOf(t, fourAtImplementation(), checkView{GitHub: githubEnv{Summary: summary}})
	want := "::error file=src/main.go,line=1,col=1,title=the-loop/x-licence-header::issue-1, issue-2, issue-3, issue-4 · implementation: missing SPDX header\n"
	if strings.Count(out, "src/main.go") != 1 || !strings.Contains(out, want) {
		t.Errorf("got:\n%s\nwant the one annotation %q", out, want)
	}
	if !strings.Contains(out, "src/other.go,line=1,col=1,title=the-loop/x-licence-header::issue-1 · implementation:") {
		t.Errorf("the first item's own finding is lost:\n%s", out)
	}
	md, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(md, []byte("src/main.go")); n != 1 || !bytes.Contains(md, []byte("| issue-1, issue-2, issue-3, issue-4 | ❌ unmet | implementation | block |")) {
		t.Errorf("want one summary row listing the four items, got %d rows:\n%s", n, md)
	}
}

func TestAFindingManyItemsShareNamesSomeAndCountsTheRest(t *testing.T) {
	var reports []*graph.StatusReport
	for i := range 25 {
		reports = append(reports, blockedAt("issue-"+strings.Repeat("1", i+1), "implementation",
			graph.Finding{Hook: "x-rule", Severity: graph.SeverityError, Text: "repository-wide"}))
	}
	out, _ := githubOf(t, reports, checkView{})
	if strings.Count(out, "::error ") != 1 || !strings.Contains(out, " and 5 more · implementation: repository-wide\n") {
		t.Errorf("got:\n%s", out)
	}
}

func TestTheSameFindingTwiceOnOneItemStaysTwo(t *testing.T) {
	f := graph.Finding{Hook: "v", Severity: graph.SeverityError, Text: "e", Path: "a.md", Line: 2}
	reports := []*graph.StatusReport{blockedAt("issue-1", "design", f, f), blockedAt("issue-2", "design", f)}
	out, _ := githubOf(t, reports, checkView{})
	if strings.Count(out, "::error ") != 2 || !strings.Contains(out, "::issue-1, issue-2 · design: e\n") || !strings.Contains(out, "::issue-1 · design: e\n") {
		t.Errorf("want the pair on issue-1 kept as two, the first naming issue-2 too:\n%s", out)
	}
}

func TestTheSameWordsAtTwoNodesAreTwoFindings(t *testing.T) {
	f := graph.Finding{Hook: "classify-feedback", Severity: graph.SeverityNotice, Text: "no authorized feedback yet"}
	out, _ := githubOf(t, []*graph.StatusReport{blockedAt("issue-1", "design-approval", f), blockedAt("issue-2", "requirements-approval", f)}, checkView{})
	if strings.Count(out, "::notice ") != 2 {
		t.Errorf("two gates' waits merged:\n%s", out)
	}
}

func TestAFindingFourItemsShareIsOneSARIFResultListingThem(t *testing.T) {
	var b bytes.Buffer
	if err := writeAll(sarifFormat{}, newOutput(&b, &b), fourAtImplementation(), checkView{FailOn: graph.FailOnUnmet}); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				Message    sarifText  `json:"message"`
				Properties sarifWhere `json:"properties"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	rs := log.Runs[0].Results
	if len(rs) != 2 {
		t.Fatalf("%d results, want the shared one and issue-1's own:\n%s", len(rs), b.String())
	}
	got := rs[0]
	if strings.Join(got.Properties.WorkItems, " ") != "issue-1 issue-2 issue-3 issue-4" || got.Properties.WorkItemCount != 4 ||
		got.Message.Text != "issue-1, issue-2, issue-3, issue-4 · implementation: missing SPDX header" {
		t.Errorf("shared result = %+v", got)
	}
	if own := rs[1].Properties; strings.Join(own.WorkItems, " ") != "issue-1" || own.WorkItemCount != 1 {
		t.Errorf("own result = %+v", own)
	}
}

func TestJSONAndTextStayPerItem(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		var b bytes.Buffer
		if err := writeAll(reportFormats[format], newOutput(&b, &b), fourAtImplementation(), checkView{All: true, FailOn: graph.FailOnUnmet}); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(b.String(), "src/main.go"); n != 4 {
			t.Errorf("%s names the shared finding %d times, want once per item:\n%s", format, n, b.String())
		}
	}
}
