package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestTheGuideShowsWhatTheCommandsPrint runs each command whose output
// docs/extending.md shows (a block after <!-- output: the-loop ARGS -->)
// on the tutorial repository, and compares: a transcript in the guide is
// what a reader gets.
func TestTheGuideShowsWhatTheCommandsPrint(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "extending.md"))
	if err != nil {
		t.Fatal(err)
	}
	tutorial, err := filepath.Abs(filepath.Join("..", "..", "testdata", "repos", "tutorial"))
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)<!-- output: the-loop ([^>]+) -->\n```[a-z]*\n(.*?)```\n")
	found := block.FindAllStringSubmatch(string(doc), -1)
	if len(found) < 3 {
		t.Fatalf("the guide shows the output of %d commands, want hooks run, check -v and graph status", len(found))
	}
	for _, m := range found {
		args := append(strings.Fields(m[1]), "--repo", tutorial)
		stdout, stderr, _ := runCLI(t, nil, args...)
		if stdout != m[2] {
			t.Errorf("the-loop %s prints\n%s(stderr: %s)\nand the guide shows\n%s", m[1], stdout, stderr, m[2])
		}
	}
}

// TestEveryDepartureInTheCodeIsOnTheCompatibilityPage walks the module's
// Go source and holds every comment that names a departure from the
// original to a section of docs/compatibility.md: a departure the page
// does not describe is a bug (issue 23).
func TestEveryDepartureInTheCodeIsOnTheCompatibilityPage(t *testing.T) {
	root := filepath.Join("..", "..")
	page, err := os.ReadFile(filepath.Join(root, "docs", "compatibility.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := markdownAnchors(page)
	marks := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			if path != root {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		found, problems := checkDepartures(filepath.ToSlash(rel), src, anchors)
		marks += found
		for _, p := range problems {
			t.Error(p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The page lists some thirty departures, each marked where it is
	// implemented; a walk that finds few has stopped looking.
	if marks < 20 {
		t.Errorf("found %d departure comments in the module, want every departure on the page marked (20 at least)", marks)
	}
}

// TestTheDepartureCheckRefusesWhatThePageDoesNotSay holds the checker
// itself to its rules: a link to no heading, a departure without a link,
// and the heading slugs GitHub makes.
func TestTheDepartureCheckRefusesWhatThePageDoesNotSay(t *testing.T) {
	page := []byte("# Title\n\n## By design\n\n### A `--repo` that does not exist is exit 2\n\n" +
		"```\n## not a heading\n```\n\n## Twice\n\n## Twice\n\n## What's new, (really)?\n")
	anchors := markdownAnchors(page)
	for _, want := range []string{"by-design", "a---repo-that-does-not-exist-is-exit-2", "twice", "twice-1", "whats-new-really"} {
		if !anchors[want] {
			t.Errorf("anchor %q missing from %v", want, anchors)
		}
	}
	if anchors["not-a-heading"] || anchors["title"] {
		t.Errorf("a fenced line or a level-1 title made an anchor: %v", anchors)
	}
	cases := []struct {
		name, src string
		marks     int
		problems  []string
	}{
		{"a link to a heading passes",
			"package p\n\n// Departure from the original (docs/compatibility.md#by-design): why.\nvar x int\n",
			1, nil},
		{"a link may wrap to the comment's next line",
			"package p\n\n// Departure from the original\n// (docs/compatibility.md#twice-1): why.\nvar x int\n",
			1, nil},
		{"a bad anchor names the file, the line and the anchor",
			"package p\n\nfunc f() {\n\t/* departure from the original (docs/compatibility.md#no-such-section): why */\n}\n",
			1, []string{"p/f.go:4: the departure links docs/compatibility.md#no-such-section, which is no ## or ### heading on the page"}},
		{"a departure without a link fails",
			"package p\n\n// A departure from the original: it is ours.\nvar x int\n",
			1, []string{"p/f.go:3: the comment names a departure and links no section: add (docs/compatibility.md#anchor)"}},
		{"the word is found in any case",
			"package p\n\nvar x int // DEPARTURE, unexplained\n",
			1, []string{"p/f.go:3: the comment names a departure and links no section: add (docs/compatibility.md#anchor)"}},
		{"a link without the word is still checked",
			"package p\n\n// See docs/compatibility.md#gone.\nvar x int\n",
			0, []string{"p/f.go:3: the departure links docs/compatibility.md#gone, which is no ## or ### heading on the page"}},
		{"the word in a string is not a comment",
			"package p\n\nvar x = \"departure\"\n",
			0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			marks, problems := checkDepartures("p/f.go", []byte(c.src), anchors)
			if marks != c.marks || !slices.Equal(problems, c.problems) {
				t.Errorf("checkDepartures = %d, %q; want %d, %q", marks, problems, c.marks, c.problems)
			}
		})
	}
}

// TestTheReadmeLinksTheCompatibilityPage: someone moving a repository
// from the Python tool starts at the README.
func TestTheReadmeLinksTheCompatibilityPage(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`\]\(docs/compatibility\.md(#[^)]*)?\)`).Match(readme) {
		t.Error("README.md has no link to docs/compatibility.md")
	}
}

var (
	departureWord = regexp.MustCompile(`(?i)\bdeparture`)
	departureLink = regexp.MustCompile(`docs/compatibility\.md#([A-Za-z0-9_-]*)`)
)

// checkDepartures reads the comments of one Go file and returns how many
// name a departure, and a problem (file:line) for each that links no
// section of the page, and for each link to a section the page lacks.
func checkDepartures(name string, src []byte, anchors map[string]bool) (marks int, problems []string) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return 0, []string{fmt.Sprintf("%s: %v", name, err)}
	}
	for _, group := range f.Comments {
		for i, c := range group.List {
			line := fset.Position(c.Slash).Line
			for _, m := range departureLink.FindAllStringSubmatch(c.Text, -1) {
				if !anchors[m[1]] {
					problems = append(problems, fmt.Sprintf("%s:%d: the departure links docs/compatibility.md#%s, which is no ## or ### heading on the page", name, line, m[1]))
				}
			}
			if !departureWord.MatchString(c.Text) {
				continue
			}
			marks++
			// The link may wrap onto the comment's next line or two.
			linked := false
			for _, next := range group.List[i:min(i+3, len(group.List))] {
				linked = linked || departureLink.MatchString(next.Text)
			}
			if !linked {
				problems = append(problems, fmt.Sprintf("%s:%d: the comment names a departure and links no section: add (docs/compatibility.md#anchor)", name, line))
			}
		}
	}
	return marks, problems
}

// markdownAnchors returns the anchors GitHub makes for a page's ## and
// ### headings, outside fenced blocks: anchor's slug (lower case,
// backticks and punctuation but '-' and '_' dropped, spaces to '-'), a
// repeated slug numbered -1, -2, ...
func markdownAnchors(page []byte) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(string(page), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		var text string
		switch {
		case strings.HasPrefix(line, "## "):
			text = line[3:]
		case strings.HasPrefix(line, "### "):
			text = line[4:]
		default:
			continue
		}
		s := anchor(strings.TrimSpace(text)) // hook_docs.go: the slug the hooks page's links use
		if n := seen[s]; n > 0 {
			seen[s]++
			s = fmt.Sprintf("%s-%d", s, n)
		} else {
			seen[s] = 1
		}
		anchors[s] = true
	}
	return anchors
}

// TestTheCompatibilityPageLinksOnlyToItsOwnHeadings: its table of
// contents and its cross-references lead somewhere.
func TestTheCompatibilityPageLinksOnlyToItsOwnHeadings(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "compatibility.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := markdownAnchors(page)
	links := regexp.MustCompile(`\]\(#([^)]+)\)`).FindAllSubmatch(page, -1)
	if len(links) < 10 {
		t.Errorf("the page links %d of its own sections, want a table of contents", len(links))
	}
	for _, m := range links {
		if !anchors[string(m[1])] {
			t.Errorf("docs/compatibility.md links #%s, which is none of its headings", m[1])
		}
	}
}
