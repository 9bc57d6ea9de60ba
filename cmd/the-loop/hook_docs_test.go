package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTheHooksPageIsTheHooksOwnWords(t *testing.T) {
	file := filepath.Join("..", "..", "docs", "hooks.md")
	got := hooksPage()
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil || string(want) != got {
		t.Errorf("docs/hooks.md is not what builtins/about.go says (go test ./cmd/the-loop -run %s -update rewrites it)", t.Name())
	}
}

func TestEveryHookLinksToAHeadingOfTheHooksPage(t *testing.T) {
	page := hooksPage()
	for _, hook := range []string{"validate-artifacts", "await-inner-loops", "x-tests-beside", "graph-state"} {
		url := hookDocURL(hook)
		frag := url[strings.Index(url, "#")+1:]
		found := false
		for line := range strings.SplitSeq(page, "\n") {
			if h, ok := strings.CutPrefix(line, "## "); ok && anchor(h) == frag {
				found = true
			}
		}
		if !found {
			t.Errorf("%s links to #%s, which no heading of docs/hooks.md is", hook, frag)
		}
	}
}
