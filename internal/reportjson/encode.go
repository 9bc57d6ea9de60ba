package reportjson

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/the-loop/the-loop/graph"
)

// Encoder writes a check report as NewJSONEncoder(w, prefix).Encode
// would, byte for byte, less the newline Encode ends with. encoding/json
// marshals a value compact and then indents it with a second pass of its
// scanner; over the tens of kilobytes a report takes that is most of
// what writing check's JSON costs, so the report's types are written
// here directly, indented as they go. A value of a type this file does
// not know (inside Parked, say) is handed to encoding/json on its own,
// indented for the depth it stands at, so its bytes are still the
// Encoder's.
//
// The report's types have no MarshalJSON or MarshalText of their own
// and no field this file does not write: TestTheJSONEncoderKnowsEveryField
// (in cmd/the-loop)
// says when one appears. An Encoder is not safe for concurrent use.
type Encoder struct {
	prefix string
	// lines[d] is a newline and the indentation of depth d.
	lines []string
	// spill receives what encoding/json writes for a value this file
	// does not know.
	spill bytes.Buffer
}

const jsonIndent = "  " // NewJSONEncoder's indent

// maxDepth is how deep into nested maps and lists this file follows a
// value before handing the rest to encoding/json, whose cycle check then
// stops one that contains itself, with the error it gave before.
const maxDepth = 100

// NewEncoder is an Encoder whose every line after a value's first is
// prefixed, as NewJSONEncoder(w, prefix)'s are.
func NewEncoder(prefix string) *Encoder {
	return &Encoder{prefix: prefix}
}

// newline is a newline and the indentation of depth d.
func (e *Encoder) newline(d int) string {
	for len(e.lines) <= d {
		e.lines = append(e.lines, "\n"+e.prefix+strings.Repeat(jsonIndent, len(e.lines)))
	}
	return e.lines[d]
}

// line appends a newline and the indentation of depth d.
func (e *Encoder) line(b []byte, d int) []byte {
	return append(b, e.newline(d)...)
}

// member appends the line of an object's member and its name, quoted
// and followed by ": ", up to its value.
func (e *Encoder) member(b []byte, d int, name string) []byte {
	return append(e.line(b, d), name...)
}

// Append appends v at the top level: a check report written here, any
// other value as encoding/json writes it.
func (e *Encoder) Append(b []byte, v any) ([]byte, error) {
	if r, ok := v.(*graph.StatusReport); ok {
		if r == nil {
			return append(b, "null"...), nil
		}
		return e.report(b, r, 0)
	}
	return e.fallback(b, v, 0)
}

// NewJSONEncoder is the-loop's JSON encoder on w: indented by two
// spaces, each line after the first prefixed (a value encoded where
// another document nests it), HTML left as it is.
func NewJSONEncoder(w io.Writer, prefix string) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetIndent(prefix, jsonIndent)
	enc.SetEscapeHTML(false)
	return enc
}

// Marshal is v as the-loop's --format json writes it, ending in a
// newline: byte for byte NewJSONEncoder(w, "").Encode(v), written here
// when v is a check report.
func Marshal(v any) ([]byte, error) {
	b, err := NewEncoder("").Append(nil, v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// report, node, finding and hook append their types' fields in the
// order, and under the names, of their json tags.

func (e *Encoder) report(b []byte, r *graph.StatusReport, d int) ([]byte, error) {
	b = append(b, '{')
	b = AppendStringKeepHTML(e.member(b, d+1, `"workItem": `), r.WorkItem)
	b = AppendStringKeepHTML(e.member(append(b, ','), d+1, `"currentNode": `), r.CurrentNode)
	b = strconv.AppendBool(e.member(append(b, ','), d+1, `"ok": `), r.OK)
	b, err := e.object(e.member(append(b, ','), d+1, `"parked": `), r.Parked, d+1)
	if err != nil {
		return b, err
	}
	b = appendList(e, e.member(append(b, ','), d+1, `"nodes": `), r.Nodes, d+1, (*Encoder).node)
	return append(e.line(b, d), '}'), nil
}

func (e *Encoder) node(b []byte, n *graph.NodeReport, d int) []byte {
	b = append(b, '{')
	b = AppendStringKeepHTML(e.member(b, d+1, `"node": `), n.Node)
	b = AppendStringKeepHTML(e.member(append(b, ','), d+1, `"status": `), n.Status)
	b = AppendStringKeepHTML(e.member(append(b, ','), d+1, `"outcome": `), n.Outcome)
	b = appendList(e, e.member(append(b, ','), d+1, `"messages": `), n.Messages, d+1, (*Encoder).message)
	b = strconv.AppendBool(e.member(append(b, ','), d+1, `"forced": `), n.Forced)
	b = strconv.AppendInt(e.member(append(b, ','), d+1, `"attempts": `), int64(n.Attempts), 10)
	b = strconv.AppendBool(e.member(append(b, ','), d+1, `"reached": `), n.Reached)
	b = appendList(e, e.member(append(b, ','), d+1, `"findings": `), n.Findings, d+1, (*Encoder).finding)
	b = appendList(e, e.member(append(b, ','), d+1, `"hooks": `), n.Hooks, d+1, (*Encoder).hook)
	return append(e.line(b, d), '}')
}

func (e *Encoder) message(b []byte, m *string, _ int) []byte {
	return AppendStringKeepHTML(b, *m)
}

// finding and hook leave out the omitempty fields that are empty.

func (e *Encoder) finding(b []byte, f *graph.Finding, d int) []byte {
	b = append(b, '{')
	b = AppendStringKeepHTML(e.member(b, d+1, `"hook": `), f.Hook)
	b = AppendStringKeepHTML(e.member(append(b, ','), d+1, `"node": `), f.Node)
	b = AppendStringKeepHTML(e.member(append(b, ','), d+1, `"severity": `), f.Severity)
	b = AppendStringKeepHTML(e.member(append(b, ','), d+1, `"text": `), f.Text)
	if f.Path != "" {
		b = AppendStringKeepHTML(e.member(append(b, ','), d+1, `"path": `), f.Path)
	}
	if f.Line != 0 {
		b = strconv.AppendInt(e.member(append(b, ','), d+1, `"line": `), int64(f.Line), 10)
	}
	if f.Column != 0 {
		b = strconv.AppendInt(e.member(append(b, ','), d+1, `"column": `), int64(f.Column), 10)
	}
	if f.ReportOnly {
		b = append(e.member(append(b, ','), d+1, `"reportOnly": `), "true"...)
	}
	return append(e.line(b, d), '}')
}

func (e *Encoder) hook(b []byte, h *graph.HookRun, d int) []byte {
	b = append(b, '{')
	b = AppendStringKeepHTML(e.member(b, d+1, `"hook": `), h.Hook)
	b = AppendStringKeepHTML(e.member(append(b, ','), d+1, `"boundary": `), h.Boundary)
	b = strconv.AppendBool(e.member(append(b, ','), d+1, `"ran": `), h.Ran)
	if h.Status != "" {
		b = AppendStringKeepHTML(e.member(append(b, ','), d+1, `"status": `), h.Status)
	}
	if h.Reason != "" {
		b = AppendStringKeepHTML(e.member(append(b, ','), d+1, `"reason": `), h.Reason)
	}
	if h.ReportOnly {
		b = append(e.member(append(b, ','), d+1, `"reportOnly": `), "true"...)
	}
	return append(e.line(b, d), '}')
}

// appendList appends l at depth d, each element by each: null for a nil
// slice, [] for an empty one, as encoding/json tells them apart.
func appendList[T any](e *Encoder, b []byte, l []T, d int, each func(*Encoder, []byte, *T, int) []byte) []byte {
	switch {
	case l == nil:
		return append(b, "null"...)
	case len(l) == 0:
		return append(b, "[]"...)
	}
	b = append(b, '[')
	for i := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = each(e, e.line(b, d+1), &l[i], d+1)
	}
	return append(e.line(b, d), ']')
}

// value appends v, a value of decoded JSON (what Parked holds), at depth
// d; what decoding JSON does not make goes to encoding/json.
func (e *Encoder) value(b []byte, v any, d int) ([]byte, error) {
	if d > maxDepth {
		return e.fallback(b, v, d)
	}
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return AppendStringKeepHTML(b, v), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case float64:
		if out, ok := AppendFloat(b, v); ok {
			return out, nil
		}
		// NaN or an infinity: encoding/json's error
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case map[string]any:
		return e.object(b, v, d)
	case []any:
		return e.list(b, v, d)
	}
	return e.fallback(b, v, d)
}

// object appends m with its keys sorted, as encoding/json sorts them.
func (e *Encoder) object(b []byte, m map[string]any, d int) ([]byte, error) {
	switch {
	case m == nil:
		return append(b, "null"...), nil
	case len(m) == 0:
		return append(b, "{}"...), nil
	}
	b = append(b, '{')
	var err error
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(AppendStringKeepHTML(e.line(b, d+1), k), ':', ' ')
		if b, err = e.value(b, m[k], d+1); err != nil {
			return b, err
		}
	}
	b = e.line(b, d)
	return append(b, '}'), nil
}

func (e *Encoder) list(b []byte, l []any, d int) ([]byte, error) {
	switch {
	case l == nil:
		return append(b, "null"...), nil
	case len(l) == 0:
		return append(b, "[]"...), nil
	}
	b = append(b, '[')
	var err error
	for i, v := range l {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = e.value(e.line(b, d+1), v, d+1); err != nil {
			return b, err
		}
	}
	b = e.line(b, d)
	return append(b, ']'), nil
}

// fallback appends v as encoding/json writes it at depth d: an Encoder
// whose prefix is the indentation of that depth indents every line after
// the value's first as the whole document's Encoder would.
func (e *Encoder) fallback(b []byte, v any, d int) ([]byte, error) {
	e.spill.Reset()
	if err := NewJSONEncoder(&e.spill, e.newline(d)[1:]).Encode(v); err != nil {
		return b, err
	}
	out := e.spill.Bytes()
	return append(b, out[:len(out)-1]...), nil // Encode's newline
}
