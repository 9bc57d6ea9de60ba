package policy

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/builtins"
	"github.com/the-loop/the-loop/graph"
)

// openNew opens root, a repository with the files given (relative path to
// text), for NewItem.
func openNew(t *testing.T, files map[string]string) (*Engine, string) {
	t.Helper()
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".git"), 0o755)
	for rel, text := range files {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e, err := Open(Options{Repo: root, Events: discard{}})
	if err != nil {
		t.Fatal(err)
	}
	return e, root
}

func TestNewItemRefusesAnIDThatNamesNoFolder(t *testing.T) {
	for _, id := range []string{"", ".", "..", "a/b", `a\b`, "../issue-1", "a\x00b", "a\nb", "issue 7", "-rf", ".hidden", "issue\x1b[31m"} {
		e, root := openNew(t, nil)
		before := snapshot(t, root)
		_, err := e.NewItem(id, NewItemOptions{})
		if err == nil || !strings.Contains(err.Error(), "want a folder name of letters, digits") {
			t.Errorf("%q: got %v, want a refusal saying what an id looks like", id, err)
		}
		if snapshot(t, root) != before {
			t.Errorf("%q: something was written", id)
		}
		if _, err := os.Stat(filepath.Join(root, "docs")); err == nil {
			t.Errorf("%q: the spec directory was created", id)
		}
	}
}

func TestNewRefusesAnExistingFolder(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		link  string // a link by the item's name, to this target
	}{
		{name: "folder", files: map[string]string{"docs/specs/issue-7/notes.md": "mine\n"}},
		{name: "empty folder", files: map[string]string{"docs/specs/issue-7/.keep": ""}},
		{name: "file", files: map[string]string{"docs/specs/issue-7": "a file\n"}},
		{name: "dangling link", files: map[string]string{"docs/specs/.keep": ""}, link: "nowhere"},
		{name: "link out", files: map[string]string{"docs/specs/.keep": ""}, link: "../../.."},
	}
	for _, c := range cases {
		for _, dry := range []bool{false, true} {
			e, root := openNew(t, c.files)
			if c.link != "" {
				os.Symlink(c.link, filepath.Join(root, "docs/specs/issue-7"))
			}
			before := snapshot(t, root)
			_, err := e.NewItem("issue-7", NewItemOptions{DryRun: dry})
			if !errors.Is(err, ErrItemExists) || !strings.Contains(err.Error(), "docs/specs/issue-7 already exists") {
				t.Errorf("%s (dry run %v): got %v, want ErrItemExists naming the folder", c.name, dry, err)
			}
			if snapshot(t, root) != before {
				t.Errorf("%s (dry run %v): something was written", c.name, dry)
			}
		}
	}
}

func TestNewItemDraftsWhatTheLoopAsksFor(t *testing.T) {
	specs := "workflow:\n  specDir: work/specs\n"
	cases := []struct {
		name    string
		files   map[string]string
		opts    NewItemOptions
		dir     string
		want    []string // drafted, in order
		written bool
	}{
		{name: "default", dir: "docs/specs/issue-7", written: true,
			want: []string{"requirements.md", "design.md", "testing-plan.md", "tasks.md"}},
		{name: "bugfix", opts: NewItemOptions{Bugfix: true}, dir: "docs/specs/issue-7", written: true,
			want: []string{"bugfix.md", "design.md", "testing-plan.md", "tasks.md"}},
		{name: "spec dir from the harness config", files: map[string]string{scaffoldedFile: specs}, dir: "work/specs/issue-7", written: true,
			want: []string{"requirements.md", "design.md", "testing-plan.md", "tasks.md"}},
		{name: "dry run", opts: NewItemOptions{DryRun: true}, dir: "docs/specs/issue-7",
			want: []string{"requirements.md", "design.md", "testing-plan.md", "tasks.md"}},
	}
	for _, c := range cases {
		e, root := openNew(t, c.files)
		before := snapshot(t, root)
		rep, err := e.NewItem("issue-7", c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var names []string
		for _, d := range rep.Drafts {
			names = append(names, d.Name)
		}
		if rep.Dir != c.dir || !slices.Equal(names, c.want) || !rep.SpecDirCreated || rep.DryRun != c.opts.DryRun {
			t.Errorf("%s: got %s %v (spec dir created %v), want %s %v", c.name, rep.Dir, names, rep.SpecDirCreated, c.dir, c.want)
		}
		if len(rep.NotDrafted) != 1 || rep.NotDrafted[0] != (OptionalArtifact{Name: "brainstorm.md", Node: "brainstorming"}) {
			t.Errorf("%s: not drafted %v, want brainstorm.md of the optional brainstorming", c.name, rep.NotDrafted)
		}
		if !c.written {
			if snapshot(t, root) != before {
				t.Errorf("%s: a dry run wrote", c.name)
			}
			continue
		}
		entries, _ := os.ReadDir(filepath.Join(root, c.dir))
		var onDisk []string
		for _, de := range entries {
			onDisk = append(onDisk, de.Name())
		}
		slices.Sort(onDisk)
		slices.Sort(names)
		if !slices.Equal(onDisk, names) {
			t.Errorf("%s: the folder holds %v, want exactly %v", c.name, onDisk, names)
		}
		for _, d := range rep.Drafts {
			text, _ := os.ReadFile(filepath.Join(root, c.dir, d.Name))
			if !strings.HasPrefix(string(text), "---\nstatus: draft\n---\n") {
				t.Errorf("%s: %s does not open with status: draft:\n%s", c.name, d.Name, text)
			}
		}
		// The item is there at once, for every verb.
		if items, err := e.Items(); err != nil || !slices.Contains(items, "issue-7") {
			t.Errorf("%s: items %v, %v; want issue-7 among them", c.name, items, err)
		}
		if _, err := e.NewItem("issue-7", c.opts); !errors.Is(err, ErrItemExists) {
			t.Errorf("%s: a second new: %v, want ErrItemExists", c.name, err)
		}
	}
}

// artifactNodes are the nodes that gate the drafted artifacts.
var artifactNodes = []string{"requirements-definition", "design", "test-planning", "tasks-breakdown", "implementation", "verification"}

// gateOf is node's validate-artifacts verdict and messages in rep.
func gateOf(t *testing.T, rep *graph.StatusReport, node string) (string, []string) {
	t.Helper()
	for _, n := range rep.Nodes {
		if n.Node != node {
			continue
		}
		for _, h := range n.Hooks {
			if h.Hook == builtins.ValidateArtifacts && h.Boundary == "exit" && h.Ran {
				return h.Status, n.Messages
			}
		}
		t.Fatalf("%s: validate-artifacts did not run", node)
	}
	t.Fatalf("no node %s in the report", node)
	return "", nil
}

// draftLine is every placeholder line NewItem writes.
var draftLine = regexp.MustCompile(`(?m)^(- \[ \] |_)Draft: .*$`)

func TestNewItemsDraftsPassTheGatesOnceWrittenAndApproved(t *testing.T) {
	for _, bugfix := range []bool{false, true} {
		e, root := openNew(t, nil)
		rep, err := e.NewItem("issue-7", NewItemOptions{Bugfix: bugfix})
		if err != nil {
			t.Fatal(err)
		}
		check := func() *graph.StatusReport {
			reps, err := e.Check([]string{"issue-7"}, false, Selector{})
			if err != nil {
				t.Fatal(err)
			}
			return reps[0]
		}
		// As drafted, every gate holds: nothing is approved, no box is
		// ticked, no section is written. What it says is only that: every
		// section is there.
		drafted := check()
		for _, node := range artifactNodes {
			status, msgs := gateOf(t, drafted, node)
			if status != string(graph.StatusBlock) {
				t.Errorf("bugfix %v: %s: %s on a fresh draft, want block", bugfix, node, status)
			}
			for _, m := range msgs {
				if !strings.Contains(m, "is not locked") && !strings.Contains(m, "still unticked") && !strings.Contains(m, "still holds the draft's placeholder") {
					t.Errorf("bugfix %v: %s says %q of a fresh draft; want only the lock, the boxes and the placeholders", bugfix, node, m)
				}
			}
		}
		// Written, ticked and approved, in place of the placeholders only:
		// a section the draft lacked would stay missing.
		for _, d := range rep.Drafts {
			p := filepath.Join(root, rep.Dir, d.Name)
			text, _ := os.ReadFile(p)
			done := draftLine.ReplaceAllStringFunc(string(text), func(line string) string {
				if strings.HasPrefix(line, "- [ ]") {
					return "- [x] Done, with its evidence recorded."
				}
				return "Written by the author: what this section has to say."
			})
			done = strings.Replace(done, "status: draft", "status: approved", 1)
			os.WriteFile(p, []byte(done), 0o644)
		}
		written := check()
		for _, node := range artifactNodes {
			if status, msgs := gateOf(t, written, node); status != string(graph.StatusPass) {
				t.Errorf("bugfix %v: %s: %s %v once written, want pass", bugfix, node, status, msgs)
			}
		}
	}
}

// tinyLoop declares what planDrafts reads, each in one place: alternatives,
// an optional node, front matter, a second gate on a drafted artifact,
// checkmarks, and an artifact only validated.
const tinyLoop = `version: 1
name: tiny
start: spec
nodes:
  - id: idea
    actor: agent
    optional: true
    produces: [idea.md]
    exit:
      - hook: validate-artifacts
        with: {locked: true, sections: [Idea]}
  - id: spec
    actor: agent
    produces: ["notes.md|bugfix.md"]
    exit:
      - hook: validate-artifacts
        with:
          locked: true
          sections: [Why, " What "]
          frontMatter: {kind: spec, status: approved}
  - id: extra
    actor: agent
    optIn: true
    produces: [extra.md]
    exit: []
  - id: build
    actor: agent
    produces: ["notes.md|bugfix.md"]
    exit:
      - hook: validate-artifacts
        with: {checkmarks: complete, sections: [Steps, Why]}
  - id: review
    actor: agent
    exit:
      - hook: validate-artifacts
        with: {validates: ["bugfix.md|notes.md", log.md], sections: [Review]}
      - hook: validate-artifacts
        with: {onlyWhenSkipped: notes.md, validates: notes.md, sections: [Never]}
  - id: done
    actor: agent
    terminal: true
edges:
  - {from: idea, to: spec, on: pass}
  - {from: spec, to: extra, on: pass}
  - {from: extra, to: build, on: pass}
  - {from: extra, to: build, on: skipped}
  - {from: build, to: review, on: pass}
  - {from: review, to: done, on: pass}
`

func TestPlanDraftsReadsTheLoopItIsGiven(t *testing.T) {
	g, err := graph.Compile("tiny.yaml", []byte(tinyLoop), builtins.Registry())
	if err != nil {
		t.Fatal(err)
	}
	for _, bugfix := range []bool{false, true} {
		plan, err := planDrafts(g, bugfix)
		if err != nil {
			t.Fatal(err)
		}
		name := "notes.md"
		if bugfix {
			name = "bugfix.md"
		}
		if len(plan.drafts) != 1 {
			t.Fatalf("bugfix %v: drafts %v, want one", bugfix, plan.drafts)
		}
		d := plan.drafts[0]
		got := d.report()
		want := Draft{Name: name, Node: "spec", Sections: []string{"Why", "What", "Steps", "Review"}, LockedAt: "spec"}
		if got.Name != want.Name || got.Node != want.Node || !slices.Equal(got.Sections, want.Sections) || got.LockedAt != want.LockedAt {
			t.Errorf("bugfix %v: got %+v, want %+v", bugfix, got, want)
		}
		if !slices.Equal(plan.optional, []OptionalArtifact{{Name: "idea.md", Node: "idea"}, {Name: "extra.md", Node: "extra"}}) {
			t.Errorf("bugfix %v: optional %v, want idea.md and extra.md", bugfix, plan.optional)
		}
		text, err := d.render()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{
			"---\nstatus: draft\nkind: spec\n---\n",
			"spec holds the item until then",
			"\n## What\n\n_Draft: replace this line",
			"\n## Why\n\n- [ ] Draft: replace this line with the section's items, one box each; build waits until every box is ticked.\n",
			"\n## Steps\n\n- [ ] Draft:",
			"\n## Review\n\n_Draft:",
		} {
			if !strings.Contains(string(text), s) {
				t.Errorf("bugfix %v: the draft lacks %q:\n%s", bugfix, s, text)
			}
		}
		if strings.Contains(string(text), "Never") || strings.Contains(string(text), "\nstatus: approved") {
			t.Errorf("bugfix %v: the draft holds what no fresh item is asked for:\n%s", bugfix, text)
		}
	}
}

func TestBugfixIsRefusedWhereTheLoopAcceptsNone(t *testing.T) {
	src := strings.NewReplacer(`"notes.md|bugfix.md"`, "notes.md", `"bugfix.md|notes.md"`, "notes.md").Replace(tinyLoop)
	g, err := graph.Compile("tiny.yaml", []byte(src), builtins.Registry())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := planDrafts(g, true); err == nil || !strings.Contains(err.Error(), "the tiny loop accepts no bugfix.md: its first spec artifact is notes.md") {
		t.Errorf("got %v, want a refusal naming the loop's first artifact", err)
	}
}

func TestNewWritesNothingInsideDotGit(t *testing.T) {
	e, root := openNew(t, map[string]string{".the-loop/harness-config.yaml": "workflow:\n  specDir: .git\n"})
	before := snapshot(t, root)
	if _, err := e.NewItem("hooks", NewItemOptions{}); err == nil || !strings.Contains(err.Error(), "the spec directory .git is inside .git") {
		t.Errorf("got %v", err)
	}
	if snapshot(t, root) != before {
		t.Error("something was written")
	}
}

func TestAnApprovedDraftWhosePlaceholdersStandDoesNotPass(t *testing.T) {
	e, root := openNew(t, nil)
	if _, err := e.NewItem("issue-7", NewItemOptions{}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "docs/specs/issue-7/design.md")
	data, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(data), "status: draft", "status: approved", 1)), 0o644)
	reps, err := e.Check([]string{"issue-7"}, false, Selector{})
	if err != nil {
		t.Fatal(err)
	}
	status, msgs := gateOf(t, reps[0], "design")
	if status != string(graph.StatusBlock) || len(msgs) != 3 || !strings.Contains(msgs[0], "required section still holds the draft's placeholder: Architecture") {
		t.Errorf("design approved unwritten: %s %q", status, msgs)
	}
}
