package main

import (
	"io"
	"slices"
	"strings"
	"unicode"
)

// Help is the same text on every run: kong renders it from the command
// tree's tags, which do not change after the build, at the width of the
// terminal. Building kong's model of the whole tree and rendering it was
// most of what `the-loop --help` cost (about a millisecond of a process
// that otherwise starts in three), so help_text.go holds each command's
// help as kong renders it at 80 columns, and run prints that when the
// width kong would use is 80: stdout is not a terminal, or is one 80
// columns wide, and $COLUMNS does not say otherwise. Any other width, or
// any other way of asking (help beside other flags or arguments, help
// before the command), goes to kong as before.
// TestHelpTextIsKongs fails when help_text.go differs from what kong
// renders now, and rewrites it under -update (which is what go generate
// runs), so the two cannot drift.

//go:generate go test -run ^TestHelpTextIsKongs$ -update .

// renderedWidth is the width help_text.go was rendered at: kong's default.
const renderedWidth = 80

// answerHelp prints the pre-rendered help args ask for, when they ask for
// nothing else and kong would render it at renderedWidth; ok is false when
// kong must answer.
func answerHelp(args []string, stdout io.Writer) (ok bool) {
	words, ok := helpAsked(args)
	if !ok {
		return false
	}
	text, ok := helpText(words)
	if !ok || helpWidth(stdout) != renderedWidth {
		return false
	}
	_, err := io.WriteString(stdout, text)
	return err == nil
}

// helpAsked is the command args ask help for, as its words ("graph
// show"), when they are those words and then --help or -h, and nothing
// else.
func helpAsked(args []string) (words string, ok bool) {
	n := len(args) - 1
	if n < 0 || (args[n] != "--help" && args[n] != "-h") {
		return "", false
	}
	// Each word is one argument: "graph show" as one is no command kong
	// knows, and it must say so.
	if slices.ContainsFunc(args[:n], func(a string) bool {
		return a == "" || strings.HasPrefix(a, "-") || strings.ContainsFunc(a, unicode.IsSpace)
	}) {
		return "", false
	}
	return strings.Join(args[:n], " "), true
}
