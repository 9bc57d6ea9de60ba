package main

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"

	"github.com/the-loop/the-loop/internal/reportjson"
)

// A chain entry's with: is shown compactly, keys sorted, each value a
// string as it is and anything else as JSON, so that two entries of one
// hook read apart: record-feedback{into: design.md}. graph show prints a
// dozen of them, and encoding/json, whose reflective encoder is code and
// data a process touches just for them, was a noticeable part of its
// start; the values a with: holds (what YAML or JSON decode to, or a
// shipped loop's literals) are encoded by appendJSON instead (strings by
// reportjson's escaper), byte for byte as json.Marshal encodes them
// (FuzzAppendJSONIsMarshal), and anything else still by json.Marshal.

// formatParams renders a chain entry's with: compactly, keys sorted.
func formatParams(params map[string]any) string {
	return string(appendParams(nil, params))
}

// appendParams appends formatParams' text to b.
func appendParams(b []byte, params map[string]any) []byte {
	if len(params) == 0 {
		return b
	}
	b = append(b, '{')
	for i, k := range slices.Sorted(maps.Keys(params)) {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, k...)
		b = append(b, ": "...)
		if s, ok := params[k].(string); ok {
			b = append(b, s...)
			continue
		}
		b = appendMarshal(b, params[k])
	}
	return append(b, '}')
}

// appendMarshal appends json.Marshal(v) to b, and nothing when it fails.
func appendMarshal(b []byte, v any) []byte {
	if out, ok := appendJSON(b, v); ok {
		return out
	}
	out, err := json.Marshal(v)
	if err != nil {
		return b
	}
	return append(b, out...)
}

// appendJSON appends v as json.Marshal encodes it; ok is false, and b
// whatever it became, when v holds a value of a type it leaves to
// json.Marshal (or one json.Marshal refuses: NaN, an infinity).
func appendJSON(b []byte, v any) (_ []byte, ok bool) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, v), true
	case string:
		return reportjson.AppendString(b, v), true
	case int:
		return strconv.AppendInt(b, int64(v), 10), true
	case int64:
		return strconv.AppendInt(b, v, 10), true
	case uint64:
		return strconv.AppendUint(b, v, 10), true
	case float64:
		return reportjson.AppendFloat(b, v)
	case []any:
		if v == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendJSON(b, e); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		if v == nil {
			return append(b, "null"...), true
		}
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(v)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = reportjson.AppendString(b, k)
			b = append(b, ':')
			if b, ok = appendJSON(b, v[k]); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
	return b, false
}
