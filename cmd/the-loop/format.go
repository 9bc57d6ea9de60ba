package main

import (
	"io"
	"slices"

	"github.com/the-loop/the-loop/graph"
)

// checkFormat renders check's reports.
type checkFormat interface {
	write(w io.Writer, reports []*graph.StatusReport, view checkView) error
}

// checkView is how check was asked: All is --all, whose output is a list
// even for one item; FailOn is the rule that decides what counts as failing.
type checkView struct {
	All    bool
	FailOn string
}

// checkFormats is the registry the --format enum is built from, so help
// text and validation never drift from what exists.
var checkFormats = map[string]checkFormat{
	"table": tableFormat{},
	"text":  tableFormat{}, // the name every other verb uses for it
	"json":  jsonFormat{},
}

func checkFormatNames() []string {
	names := make([]string, 0, len(checkFormats))
	for n := range checkFormats {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
