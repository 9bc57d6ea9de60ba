package main

import (
	"fmt"
	"strings"

	"github.com/the-loop/the-loop/builtins"
	"github.com/the-loop/the-loop/graph"
)

// projectURL is the-loop's home: SARIF's informationUri, and where the
// rules' help links point.
const projectURL = "https://github.com/the-loop/the-loop"

// hooksDocURL is docs/hooks.md on the default branch: one heading per
// shipped hook, and one for repository hooks and the graph state.
const hooksDocURL = projectURL + "/blob/main/docs/hooks.md"

// Headings of docs/hooks.md that are not a shipped hook's name.
const (
	repositoryHooksHeading = "Repository hooks"
	graphStateHeading      = graph.StateHook
)

var repositoryHookAbout = builtins.About{
	Summary: "A rule of the repository's own: an x- hook written in Starlark.",
	Checks:  "What the repository's .star file says; the hook's finding says what it found. A repository hook runs after the shipped hooks of its chain and can only add to what they require.",
	Fix:     "Do what the finding says. `the-loop hooks run HOOK ITEM` runs the hook alone, and `the-loop hooks test` runs its tests.",
}

var graphStateAbout = builtins.About{
	Summary: "The work item's graph state (graph-state.json).",
	Checks:  "The state declares something the loop refuses, such as a skip on a node that is not skippable: the declaration has no effect. Or its pointer, currentNode, names no node of the loop (one an older loop had, or a typo): where the item stands cannot be told, so every node is reported as reached and the item is not met.",
	Fix:     "Remove the declaration from graph-state.json, or skip only nodes the loop lets be skipped. Move an item whose pointer names no node to one of the loop's nodes with `the-loop graph force ITEM --to NODE --reason WHY`.",
}

// hookAbout is what hook checks and how to fix it, and its heading in
// docs/hooks.md.
func hookAbout(hook string) (about builtins.About, heading string) {
	switch {
	case graph.IsExtension(hook):
		return repositoryHookAbout, repositoryHooksHeading
	case hook == graph.StateHook:
		return graphStateAbout, graphStateHeading
	}
	if a, ok := builtins.Describe(hook); ok {
		return a, hook
	}
	return builtins.About{Summary: "The hook " + hook + ".", Checks: "See its finding.", Fix: "Do what the finding says."}, hook
}

// hookDocURL is hook's place in docs/hooks.md.
func hookDocURL(hook string) string {
	_, heading := hookAbout(hook)
	return hooksDocURL + "#" + anchor(heading)
}

// anchor is the fragment GitHub gives a Markdown heading: lower case,
// spaces as hyphens, other punctuation but hyphens dropped.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-', r == '_', r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// hooksPage is docs/hooks.md, made from the same words the SARIF rules
// carry (TestTheHooksPageIsTheHooksOwnWords keeps the file so).
func hooksPage() string {
	var b strings.Builder
	b.WriteString("# Hooks\n\n<!-- Made by `go test ./cmd/the-loop -run TestTheHooksPageIsTheHooksOwnWords -update` from builtins/about.go and cmd/the-loop/hook_docs.go: edit those. -->\n\n")
	b.WriteString("Every finding names the hook that made it. This page says, for each hook the-loop ships, what it checks and what makes it pass. `the-loop graph hooks` lists them, and the hooks a repository declares.\n\n")
	section := func(heading string, a builtins.About) {
		fmt.Fprintf(&b, "## %s\n\n%s\n\n%s\n\n**To fix:** %s\n\n", heading, a.Summary, a.Checks, a.Fix)
	}
	for _, name := range builtins.Registry().Names() {
		a, _ := builtins.Describe(name)
		section(name, a)
	}
	section(repositoryHooksHeading, repositoryHookAbout)
	section(graphStateHeading, graphStateAbout)
	return strings.TrimSuffix(b.String(), "\n")
}
