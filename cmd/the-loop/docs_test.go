package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
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

// TestEveryDepartureNamesASectionOfTheCompatibilityPage reads every
// "Departure from the original (docs/compatibility.md#…)" comment in the
// repository's Go files, tests aside, and requires the anchor to be the GitHub slug of
// a heading on that page: a departure marked in code is written down.
func TestEveryDepartureNamesASectionOfTheCompatibilityPage(t *testing.T) {
	root := filepath.Join("..", "..")
	page, err := os.ReadFile(filepath.Join(root, "docs", "compatibility.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, h := range regexp.MustCompile(`(?m)^#{2,3} (.+)$`).FindAllStringSubmatch(string(page), -1) {
		anchors[githubSlug(h[1])] = true
	}
	mark := regexp.MustCompile(`Departure from the original \(docs/compatibility\.md#([^)]*)\)`)
	marks := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range mark.FindAllStringSubmatch(string(src), -1) {
			marks++
			if !anchors[m[1]] {
				t.Errorf("%s: #%s is not a heading of docs/compatibility.md", path, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if marks == 0 {
		t.Fatal("found no Departure comments: the pattern or the walk is wrong")
	}
}

// githubSlug is the anchor GitHub gives a Markdown heading: lower case,
// spaces to '-', and every other character but letters, digits, '-' and '_'
// dropped.
func githubSlug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
