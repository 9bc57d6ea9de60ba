package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/internal/reportjson"
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

func (jsonFormat) start(out *Output, view checkView) reportWriter {
	return &jsonWriter{out: out, list: view.All}
}

// jsonWriter writes the list an element at a time, each element encoded
// as the encoder of the whole list would indent it there, so the bytes
// are those of one json.Encoder call on the list (see reportEncoder). A verb asked about one
// item answers with its report alone: the writer keeps that one until it
// knows no other comes.
type jsonWriter struct {
	out  *Output
	list bool                // writing a list
	one  *graph.StatusReport // the first report, while it may be the answer
	n    int                 // elements written
	buf  []byte
	enc  *reportEncoder
}

func (w *jsonWriter) report(r *graph.StatusReport) error {
	if !w.list {
		if w.one == nil {
			w.one = r
			return nil
		}
		// A second report: a list after all.
		w.list = true
		first := w.one
		w.one = nil
		if err := w.element(first); err != nil {
			return err
		}
	}
	return w.element(r)
}

// element writes one element of the list: "[" before the first, ","
// between them.
func (w *jsonWriter) element(v any) error {
	if w.enc == nil {
		w.enc = newReportEncoder("  ")
	}
	b := w.buf[:0]
	if w.n == 0 {
		b = append(b, "[\n  "...)
	} else {
		b = append(b, ",\n  "...)
	}
	b, err := w.enc.element(b, v)
	w.buf = b
	if err != nil {
		return err
	}
	w.n++
	_, err = w.out.raw.Write(jsonSafe(b))
	return err
}

func (w *jsonWriter) finish(view checkView) error {
	if w.one != nil {
		// The answer about one item is that report alone, at the top level.
		b, err := newReportEncoder("").element(nil, w.one)
		if err != nil {
			return err
		}
		_, err = w.out.raw.Write(jsonSafe(append(b, '\n')))
		return err
	}
	for _, f := range view.Unevaluated {
		if err := w.element(unevaluated{WorkItem: f.Item, Error: f.Err.Error()}); err != nil {
			return err
		}
	}
	end := "\n]\n"
	if w.n == 0 {
		end = "[]\n"
	}
	_, err := io.WriteString(w.out.raw, end)
	return err
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
	if err := jsonEncoder(&b, "").Encode(v); err != nil {
		return err
	}
	_, err := out.raw.Write(jsonSafe(b.Bytes()))
	return err
}

// jsonEncoder writes the-loop's JSON to w (see reportjson.NewJSONEncoder).
func jsonEncoder(w io.Writer, prefix string) *json.Encoder {
	return reportjson.NewJSONEncoder(w, prefix)
}

// reportEncoder writes check's reports, a list's elements one at a time
// (see reportjson.Encoder).
type reportEncoder struct {
	*reportjson.Encoder
	prefix string
}

func newReportEncoder(prefix string) *reportEncoder {
	return &reportEncoder{reportjson.NewEncoder(prefix), prefix}
}

// element appends v, one element of check's list, at the top level.
func (e *reportEncoder) element(b []byte, v any) ([]byte, error) { return e.Append(b, v) }
