package main

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/the-loop/the-loop/graph"
)

// jsonFormat is the original tool's shape: one object for a single item, a
// list for --all, so tooling built on it keeps working. An item that
// could not be evaluated is an entry of the list too, {"workItem",
// "error"}, so that a reader of the list does not take it for absent.
type jsonFormat struct{}

// unevaluated is a list entry for an item that has no report.
type unevaluated struct {
	WorkItem string `json:"workItem"`
	Error    string `json:"error"`
}

func (jsonFormat) write(out *Output, reports []*graph.StatusReport, view checkView) error {
	if !view.All && len(reports) == 1 {
		return writeJSON(out, reports[0])
	}
	list := make([]any, 0, len(reports)+len(view.Unevaluated))
	for _, r := range reports {
		list = append(list, r)
	}
	for _, f := range view.Unevaluated {
		list = append(list, unevaluated{WorkItem: f.Item, Error: f.Err.Error()})
	}
	return writeJSON(out, list)
}

// writeFailure is {"error": ...}, with the file, line and key of a
// configuration error, so that a caller parsing stdout always parses JSON.
func (jsonFormat) writeFailure(out *Output, err error, _ checkView) error {
	obj := map[string]any{"error": err.Error()}
	var ce *graph.ConfigError
	if errors.As(err, &ce) {
		if ce.File != "" {
			obj["file"] = ce.File
		}
		if ce.Line > 0 {
			obj["line"] = ce.Line
		}
		if ce.Key != "" {
			obj["key"] = ce.Key
		}
	}
	return writeJSON(out, obj)
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
