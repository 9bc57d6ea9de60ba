package policy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/builtins"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/graphs"
	"github.com/the-loop/the-loop/internal/benchcpu"
	"github.com/the-loop/the-loop/internal/corpus"
)

// writeBenchRepo writes an adopted repository with n work items spread over
// the outer loop: some finished, some blocked, some waiting at a gate.
func writeBenchRepo(tb testing.TB, root string, n int) {
	tb.Helper()
	write := func(rel, body string) { writeFileIn(tb, root, rel, []byte(body)) }
	write(".the-loop/harness-config.yaml", string(graphs.DefaultHarnessConfig()))
	section := func(title string) string {
		return "## " + title + "\n\nWritten for the benchmark; long enough to be a real paragraph of text.\n\n"
	}
	doc := func(status string, titles ...string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "---\nstatus: %s\ntags: [bench]\nriskTier: 2\n---\n# Title\n\n", status)
		for _, t := range titles {
			b.WriteString(section(t))
		}
		b.WriteString("```mermaid\nflowchart LR\n  A[client] --> B[server]\n  B --> C[(store)]\n```\n")
		return b.String()
	}
	nodes := []string{"design", "design-approval", "implementation", "verification", "complete"}
	for i := range n {
		dir := fmt.Sprintf("docs/specs/issue-%d/", i+1)
		write(dir+"requirements.md", doc("approved", "Requirements", "Security considerations")+"\ntrust boundary and abuse case\n")
		status := "approved"
		if i%5 == 0 {
			status = "draft"
		}
		write(dir+"design.md", doc(status, "Architecture", "Security design", "Testing strategy")+"\ntrust boundary and abuse case\n")
		write(dir+"testing-plan.md", doc("approved", "Test matrix", "Verification environment", "Evidence plan", "Verification results"))
		write(dir+"tasks.md", doc("approved", "Task list")+"- [x] one\n- [x] two\n")
		write(dir+"execution-log.md", doc("approved", "Review cycles", "Security review (gate)", "Final validation evidence", "Documentation", "Pull requests"))
		write(dir+"graph-state.json", fmt.Sprintf(`{"version": 1, "workItem": "issue-%d", "currentNode": %q, "decisions": {"phase-selection": {"at": "2026-01-01T00:00:00+00:00"}}, "loop": "pdlc-work-item-loop"}`+"\n", i+1, nodes[i%len(nodes)]))
	}
}

// TestWriteBenchRepo writes the benchmark repository to $THE_LOOP_BENCH_REPO,
// so a whole `the-loop check --all` process can be timed against it.
func TestWriteBenchRepo(t *testing.T) {
	writeInto(t, "THE_LOOP_BENCH_REPO", func(dir string) { writeBenchRepo(t, dir, 200) })
}

// TestWriteCorpusRepo writes a repository of the original project's own
// work items to $THE_LOOP_CORPUS_REPO, $THE_LOOP_CORPUS_ITEMS of them
// (default 1,000), for timing whole processes on realistic items (see
// package corpus); it skips when the original's mirror is not here.
func TestWriteCorpusRepo(t *testing.T) {
	n := 1000
	if s := os.Getenv("THE_LOOP_CORPUS_ITEMS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 0 {
			t.Fatalf("THE_LOOP_CORPUS_ITEMS=%q: want a count of work items", s)
		}
	}
	writeInto(t, "THE_LOOP_CORPUS_REPO", func(dir string) {
		if err := corpus.Shared(t).Write(dir, n); err != nil {
			t.Fatal(err)
		}
	})
}

// writeInto calls write with the directory $env names, for the justfile's
// process benchmarks; the test is skipped when it names none.
func writeInto(t *testing.T, env string, write func(dir string)) {
	dir := os.Getenv(env)
	if dir == "" {
		t.Skipf("set %s to write this benchmark's repository", env)
	}
	write(dir)
}

// BenchmarkCompileShippedLoopsFromYAML is what compiling all four loops
// from their YAML costs, which a process no longer pays: it builds them
// from Go generated from that YAML (loops_compiled.go).
func BenchmarkCompileShippedLoopsFromYAML(b *testing.B) {
	srcs := map[string][]byte{}
	for _, name := range graphs.Names {
		srcs[name], _ = graphs.Loop(name)
	}
	reg := builtins.Registry()
	b.ReportAllocs()
	for b.Loop() {
		for name, src := range srcs {
			if _, err := graph.Compile(name, src, reg); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkCheckAll200(b *testing.B) {
	root := b.TempDir()
	writeBenchRepo(b, root, 200)
	b.ReportAllocs()
	for b.Loop() {
		e, err := Open(Options{Repo: root, CLIConfig: "", Events: discard{}})
		if err != nil {
			b.Fatal(err)
		}
		items, _ := e.Items()
		reps, err := e.Check(items, false, Selector{})
		if err != nil || len(reps) != 200 {
			b.Fatal(err, len(reps))
		}
	}
}

// BenchmarkCheckCorpus1000 is check --all over 1,000 copies of the
// original project's own work items (see package corpus): the engine's
// share of a whole process, with every report handed over.
func BenchmarkCheckCorpus1000(b *testing.B) {
	root := b.TempDir()
	if err := corpus.Shared(b).Write(root, 1000); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		e, err := Open(Options{Repo: root, Events: discard{}})
		if err != nil {
			b.Fatal(err)
		}
		items, _ := e.Items()
		reps, err := e.Check(items, false, Selector{})
		if err != nil || len(reps) != 1000 {
			b.Fatal(err, len(reps))
		}
	}
}

type discard struct{}

func (discard) Emit(string, string, map[string]any) error { return nil }

// writeFileIn writes body to rel under root, making its directories.
func writeFileIn(tb testing.TB, root, rel string, body []byte) {
	tb.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, body, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// tutorialRepo is the fixture repository the rule benchmarks take their
// configuration and work item from.
var tutorialRepo = filepath.Join("..", "testdata", "repos", "tutorial")

// copyFileIn copies the file from to rel under root.
func copyFileIn(tb testing.TB, root, from, rel string) {
	tb.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		tb.Fatal(err)
	}
	writeFileIn(tb, root, rel, data)
}

// writeLicenceRepo writes the licence-header fixture at scale: the
// tutorial's rules over n Go files of about 4 KiB, one in ten without its
// header, and one work item at implementation.
func writeLicenceRepo(tb testing.TB, root string, n int) {
	tb.Helper()
	for _, f := range []string{".the-loop/harness-config.yaml", ".the-loop/hooks/house_rules.star", "docs/specs/issue-1/tasks.md", "docs/specs/issue-1/graph-state.json"} {
		copyFileIn(tb, root, filepath.Join(tutorialRepo, f), f)
	}
	body := strings.Repeat("// a line of ordinary Go source, about sixty bytes long.\n", 70)
	for i := range n {
		head := "// SPDX-License-Identifier: MIT\n\n"
		if i%10 == 0 {
			head = "// no licence here\n\n"
		}
		writeFileIn(tb, root, fmt.Sprintf("src/pkg%03d/file%05d.go", i/100, i), []byte(head+"package pkg\n\n"+body))
	}
}

// TestWriteLicenceRepo writes the licence fixture to
// $THE_LOOP_BENCH_LICENCE_REPO, for timing whole processes against grep.
func TestWriteLicenceRepo(t *testing.T) {
	writeInto(t, "THE_LOOP_BENCH_LICENCE_REPO", func(dir string) { writeLicenceRepo(t, dir, 10_000) })
}

// writeRecordsRepo writes the conftest comparison's fixture: n JSON
// records under records/, one in ten approved without an approver and one
// in twenty-five of a status nobody knows, and the one rule about them
// twice, as a repository hook (.the-loop/hooks/records.star, attached to
// issue-1's node) and as a conftest policy (policy/records.rego).
func writeRecordsRepo(tb testing.TB, root string, n int) {
	tb.Helper()
	fixture := filepath.Join("testdata", "records")
	copyFileIn(tb, root, filepath.Join(fixture, "harness-config.yaml"), ".the-loop/harness-config.yaml")
	copyFileIn(tb, root, filepath.Join(fixture, "records.star"), ".the-loop/hooks/records.star")
	copyFileIn(tb, root, filepath.Join(fixture, "records.rego"), "policy/records.rego")
	for _, f := range []string{"docs/specs/issue-1/tasks.md", "docs/specs/issue-1/graph-state.json"} {
		copyFileIn(tb, root, filepath.Join(tutorialRepo, f), f)
	}
	statuses := []string{"draft", "in-review", "approved", "approved"}
	for i := range n {
		status, approvers := statuses[i%len(statuses)], `["@owner"]`
		switch {
		case i%25 == 0:
			status = "done"
		case i%10 == 0:
			status, approvers = "approved", "[]"
		}
		writeFileIn(tb, root, fmt.Sprintf("records/d%03d/item-%05d.json", i/100, i), fmt.Appendf(nil,
			`{"type": "design", "phase": "design", "workItem": "issue-%d", "status": %q, "approvedBy": %s, "collaborators": ["architect", "engineer"], "riskTier": %d}`+"\n",
			i, status, approvers, 1+i%5))
	}
}

// TestWriteRecordsRepo writes the conftest comparison's fixture to
// $THE_LOOP_BENCH_RECORDS_REPO.
func TestWriteRecordsRepo(t *testing.T) {
	writeInto(t, "THE_LOOP_BENCH_RECORDS_REPO", func(dir string) { writeRecordsRepo(t, dir, 10_000) })
}

// TestTheRecordsRuleFindsEveryBadRecord holds the conftest comparison to
// a rule that reads every record: it blocks on exactly the records the
// fixture spoiled.
func TestTheRecordsRuleFindsEveryBadRecord(t *testing.T) {
	root := t.TempDir()
	writeRecordsRepo(t, root, 200)
	e, err := Open(Options{Repo: root, Events: discard{}})
	if err != nil {
		t.Fatal(err)
	}
	reps, err := e.Check([]string{"issue-1"}, false, Selector{})
	if err != nil {
		t.Fatal(err)
	}
	unknown, unapproved := 0, 0
	for _, n := range reps[0].Nodes {
		for _, f := range n.Findings {
			switch {
			case strings.HasPrefix(f.Text, "unknown status done"):
				unknown++
			case f.Text == "approved without an approver":
				unapproved++
			}
		}
	}
	// Of 200: every 25th is unknown (8), every other 10th unapproved (20 - 4).
	if unknown != 8 || unapproved != 16 {
		t.Errorf("%d unknown and %d unapproved findings; want 8 and 16", unknown, unapproved)
	}
}

func BenchmarkLicenceHeader10k(b *testing.B) {
	root := b.TempDir()
	writeLicenceRepo(b, root, 10_000)
	b.ReportAllocs()
	stop := benchcpu.Start(b)
	for b.Loop() {
		e, err := Open(Options{Repo: root, Events: discard{}})
		if err != nil {
			b.Fatal(err)
		}
		reps, err := e.Check([]string{"issue-1"}, false, Selector{})
		if err != nil || reps[0].OK {
			b.Fatal(err, "the missing headers were not found")
		}
	}
	stop()
}

// writeChangedRepo writes the n-item benchmark repository as a git
// repository on a branch that changes three items: one committed, one
// edited and one given a new, untracked file.
func writeChangedRepo(tb testing.TB, root string, n int) {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("needs git")
	}
	writeBenchRepo(tb, root, n)
	git := gitIn(tb, root)
	git("init", "-q", "-b", "main")
	git("add", ".")
	git("commit", "-q", "-m", "base")
	git("checkout", "-q", "-b", "change")
	edit := func(rel string) {
		if err := os.WriteFile(filepath.Join(root, rel), []byte("# edited by the change\n"), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	edit("docs/specs/issue-7/design.md")
	git("commit", "-q", "-am", "issue-7")
	// Packed, as a clone is: loose objects would time the writer, not git.
	git("gc", "-q")
	edit("docs/specs/issue-1000/tasks.md")
	edit("docs/specs/issue-1999/notes.md")
}

// TestWriteChangedBenchRepo writes the changed-only benchmark repository
// to $THE_LOOP_BENCH_CHANGED_REPO, for timing a whole
// `the-loop check --changed --base main` process.
func TestWriteChangedBenchRepo(t *testing.T) {
	writeInto(t, "THE_LOOP_BENCH_CHANGED_REPO", func(dir string) { writeChangedRepo(t, dir, 2000) })
}

// BenchmarkCheckChanged2000 is check --changed on a 2,000-item repository
// whose change touches three: the git processes, the selection and three
// evaluations.
func BenchmarkCheckChanged2000(b *testing.B) {
	root := b.TempDir()
	writeChangedRepo(b, root, 2000)
	b.ReportAllocs()
	for b.Loop() {
		// As the CLI does: git starts while the configs load.
		e, err := Open(Options{Repo: root, Base: "main", Events: discard{}})
		if err != nil {
			b.Fatal(err)
		}
		s, err := e.ChangedItems()
		if err != nil || len(s.Items) != 3 {
			b.Fatal(err, s)
		}
		if _, err := e.Check(s.Items, false, Selector{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckAllRulesFrom2000 is check --all --rules-from on the same
// repository: every item's state in the revision is read, and must not
// cost a git process an item.
func BenchmarkCheckAllRulesFrom2000(b *testing.B) {
	root := b.TempDir()
	writeChangedRepo(b, root, 2000)
	b.ReportAllocs()
	for b.Loop() {
		e, err := Open(Options{Repo: root, RulesFrom: "main", Events: discard{}})
		if err != nil {
			b.Fatal(err)
		}
		items, _ := e.Items()
		if _, err := e.Check(items, false, Selector{}); err != nil {
			b.Fatal(err)
		}
	}
}
