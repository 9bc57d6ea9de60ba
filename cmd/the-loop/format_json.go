package main

import (
	"encoding/json"
	"io"

	"github.com/the-loop/the-loop/graph"
)

// jsonFormat is the original tool's shape: one object for a single item, a
// list for --all, so tooling built on it keeps working.
type jsonFormat struct{}

func (jsonFormat) write(w io.Writer, reports []*graph.StatusReport, view checkView) error {
	var v any = reports
	if !view.All && len(reports) == 1 {
		v = reports[0]
	}
	return writeJSON(w, v)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
