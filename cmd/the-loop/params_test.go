package main

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// marshalText is what formatParams showed a non-string value as when it
// called json.Marshal: its JSON, or nothing when json.Marshal refuses it.
func marshalText(v any) string {
	out, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(out)
}

// checkIsMarshal fails t when appendMarshal encodes v other than
// json.Marshal, appending to a buffer that holds something already.
func checkIsMarshal(t *testing.T, v any) {
	t.Helper()
	got := appendMarshal([]byte("prefix"), v)
	if want := "prefix" + marshalText(v); string(got) != want {
		t.Errorf("appendMarshal(%#v) = %q, want json.Marshal's %q", v, got, want)
	}
}

func TestAppendJSONIsMarshal(t *testing.T) {
	for _, v := range []any{
		nil, true, false,
		"", "plain", `quote " backslash \ slash /`, "a<b>&c", "tab\tnew\nline\rcr\bbs\fff",
		"\x00\x01\x1f\x7f", "é 日本 😀", "\u2028\u2029", "\u0085\u202e\u200e", "\ufffd",
		"broken \xff byte", "\xc3", "\xed\xa0\x80 surrogate", "\xf4\x90\x80\x80 too big",
		0, 1, -12, math.MaxInt64, math.MinInt64, int64(-7), uint64(math.MaxUint64),
		0.0, math.Copysign(0, -1), 1.5, 3.0, -1.5e-10, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, -1e21,
		123456789012345678901234567890.0, 1e+300, math.SmallestNonzeroFloat64, math.MaxFloat64,
		math.NaN(), math.Inf(1), math.Inf(-1), []any{1.0, math.NaN()}, map[string]any{"x": math.Inf(-1)},
		[]any(nil), []any{}, []any{nil, "s", 1, 2.5, []any{true}},
		map[string]any(nil), map[string]any{}, map[string]any{"z": 1, "a": []any{"<"}, "é": nil, "k\u2028<": map[string]any{"b": "c", "a": "d"}},
		// Types it leaves to json.Marshal, alone and inside what it encodes.
		time.Date(2001, 12, 14, 21, 59, 43, 100e6, time.FixedZone("", -5*3600)), []byte("hello"), float32(0.1), int32(3),
		map[any]any{"a": 1}, map[string]string{"b": "<"}, []string{"x"}, []any{int8(1)}, map[string]any{"t": []byte{1}},
		json.Number("12"),
	} {
		checkIsMarshal(t, v)
	}
}

func TestFormatParams(t *testing.T) {
	for _, tc := range []struct {
		params map[string]any
		want   string
	}{
		{nil, ""},
		{map[string]any{}, ""},
		{map[string]any{"into": "design.md"}, "{into: design.md}"},
		{map[string]any{"sections": []any{"A", "B <c>"}, "locked": true}, `{locked: true, sections: ["A","B \u003cc\u003e"]}`},
		{map[string]any{"n": 3.0, "m": nil, "x": math.NaN(), "s": "raw <&>\n"}, "{m: null, n: 3, s: raw <&>\n, x: }"},
	} {
		if got := formatParams(tc.params); got != tc.want {
			t.Errorf("formatParams(%v) = %q, want %q", tc.params, got, tc.want)
		}
	}
}

// FuzzAppendJSONIsMarshal holds appendMarshal to json.Marshal for every
// value a YAML or a JSON document decodes to, and for any string, float
// and int.
func FuzzAppendJSONIsMarshal(f *testing.F) {
	for _, doc := range []string{
		`{teams: ["@payments", "a<b>&c", "é\u2028\u2029\x01\t\"\\"], n: {z: 1, a: [1.5, -0.0, 1e21, 1e-7, 0.000001]}}`,
		`[.nan, .inf, -.inf, null, ~, yes, no, on, 0o17, 0x1F, 18446744073709551615, 123456789012345678901234567890]`,
		`{t: !!timestamp 2001-12-14t21:59:43.10-05:00, b: !!binary aGVsbG8=, d: 2001-12-14, 1: one, [a]: b}`,
		`{"a": [1, 2.5e-8, "\ud800", "\u0000"], "b": {"c": null}}`,
		"s: \"\\xff\\x80 \\u2028\"", "plain text", "1e400", "-0", "",
	} {
		f.Add(doc, "a<b>&\u2028\xff", 1e21, int64(-1))
	}
	f.Fuzz(func(t *testing.T, doc, s string, x float64, i int64) {
		var fromYAML any
		if yaml.Unmarshal([]byte(doc), &fromYAML) == nil {
			checkIsMarshal(t, fromYAML)
		}
		var fromJSON any
		if json.Unmarshal([]byte(doc), &fromJSON) == nil {
			checkIsMarshal(t, fromJSON)
		}
		checkIsMarshal(t, s)
		checkIsMarshal(t, x)
		checkIsMarshal(t, i)
		checkIsMarshal(t, int(i))
		checkIsMarshal(t, uint64(i))
		checkIsMarshal(t, []any{s, x, i, doc})
		checkIsMarshal(t, map[string]any{s: x, doc: []any{i}})
	})
}
