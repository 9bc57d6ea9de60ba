package main

import (
	"io"
	"slices"

	"github.com/the-loop/the-loop/graph"
)

// checkFormat renders check's reports. all is set for --all, whose output
// is a list even for one item.
type checkFormat interface {
	write(w io.Writer, reports []*graph.StatusReport, all bool) error
}

// checkFormats is the registry the --format enum is built from, so help
// text and validation never drift from what exists.
var checkFormats = map[string]checkFormat{
	"table": tableFormat{},
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
