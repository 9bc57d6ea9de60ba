package main

import (
	"os"
	"path/filepath"
	"regexp"
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
