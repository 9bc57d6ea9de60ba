package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEveryDepartureCommentLinksToASectionOfTheCompatibilityPage holds
// each "Departure from the original" comment in the Go code to the form
// the house rules give it, and its link to a ## or ### heading of
// docs/compatibility.md, by GitHub's slug of the heading (anchor).
func TestEveryDepartureCommentLinksToASectionOfTheCompatibilityPage(t *testing.T) {
	root := filepath.Join("..", "..")
	page, err := os.ReadFile(filepath.Join(root, "docs", "compatibility.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#{2,3} (.+)$`).FindAllStringSubmatch(string(page), -1) {
		anchors[anchor(m[1])] = true
	}
	form := regexp.MustCompile(`// Departure from the original \(docs/compatibility\.md#([a-z0-9_-]+)\): \S`)
	found := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if !strings.Contains(line, "Departure from the original") {
				continue
			}
			found++
			m := form.FindStringSubmatch(line)
			switch {
			case m == nil:
				t.Errorf("%s:%d: %q is not in the form // Departure from the original (docs/compatibility.md#anchor): why.", p, i+1, strings.TrimSpace(line))
			case !anchors[m[1]]:
				t.Errorf("%s:%d: #%s is no heading of docs/compatibility.md", p, i+1, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Fatal("no Departure comment found: the walk is looking in the wrong place")
	}
}

func TestAnchorIsGitHubsSlug(t *testing.T) {
	for _, c := range []struct{ heading, want string }{
		{"Unknown pointers and new work items", "unknown-pointers-and-new-work-items"},
		{"What `routing.workspace.defaultHost` means", "what-routingworkspacedefaulthost-means"},
		{"Repository names: one reader, OWNER/NAME only", "repository-names-one-reader-ownername-only"},
		{"graph_skip on an unknown pointer", "graph_skip-on-an-unknown-pointer"},
	} {
		if got := anchor(c.heading); got != c.want {
			t.Errorf("anchor(%q) = %q, want %q", c.heading, got, c.want)
		}
	}
}
