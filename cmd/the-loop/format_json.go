package main

import (
	"bytes"
	"encoding/json"

	"github.com/the-loop/the-loop/graph"
)

// jsonFormat is the original tool's shape: one object for a single item, a
// list for --all, so tooling built on it keeps working.
type jsonFormat struct{}

func (jsonFormat) write(out *Output, reports []*graph.StatusReport, view checkView) error {
	var v any = reports
	if !view.All && len(reports) == 1 {
		v = reports[0]
	}
	return writeJSON(out, v)
}

// writeJSON prints v as indented JSON, terminal-safe (see jsonSafe).
func writeJSON(out *Output, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := out.raw.Write(jsonSafe(b.Bytes()))
	return err
}
