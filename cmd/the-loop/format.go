package main

import (
	"io"
	"maps"
	"slices"

	"github.com/the-loop/the-loop/graph"
)

// checkFormat renders check's reports.
type checkFormat interface {
	write(out *Output, reports []*graph.StatusReport, view checkView) error
}

// checkView is how check was asked: All is --all, whose output is a list
// even for one item; FailOn is the rule that decides what counts as
// failing; Unevaluated is how many items could not be evaluated at all
// (they are named on stderr, and have no report).
type checkView struct {
	All         bool
	FailOn      string
	Unevaluated int
}

// checkFormats is the registry the --format enum is built from, so help
// text and validation never drift from what exists.
var checkFormats = map[string]checkFormat{
	"table": tableFormat{},
	"text":  tableFormat{}, // the name every other verb uses for it
	"json":  jsonFormat{},
}

func checkFormatNames() []string { return slices.Sorted(maps.Keys(checkFormats)) }

// TextFormat is the --format flag of every verb other than check: text for
// people, or the answer as JSON.
type TextFormat struct {
	Format string `help:"Output format (${enum})." enum:"${textFormats}" default:"text"`
}

// write prints v as JSON under --format json, else what text renders.
func (f TextFormat) write(out *Output, v any, text func(io.Writer) error) error {
	if f.Format == "json" {
		return writeJSON(out, v)
	}
	return text(out.Stdout)
}
