package main

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/internal/corpus"
	"github.com/the-loop/the-loop/policy"
)

// sameAsEncoder fails unless reportEncoder writes v as jsonEncoder with
// prefix does, less Encode's newline, or both fail.
func sameAsEncoder(t testing.TB, e *reportEncoder, v any) {
	t.Helper()
	var want bytes.Buffer
	werr := jsonEncoder(&want, e.prefix).Encode(v)
	got, gerr := e.element([]byte("["), v) // appends: what is before stays
	switch {
	case (werr != nil) != (gerr != nil):
		t.Fatalf("prefix %q: encoding/json says %v, reportEncoder %v", e.prefix, werr, gerr)
	case werr != nil:
		return
	case !bytes.HasPrefix(got, []byte("[")):
		t.Fatalf("prefix %q: what was before the element is lost: %.40q", e.prefix, got)
	}
	w := bytes.TrimSuffix(want.Bytes(), []byte("\n"))
	if g := got[1:]; !bytes.Equal(g, w) {
		i := 0
		for i < len(g) && i < len(w) && g[i] == w[i] {
			i++
		}
		from := max(0, i-120)
		t.Fatalf("prefix %q: first differs at byte %d of %d/%d:\n--- got\n%s\n--- want\n%s", e.prefix, i, len(g), len(w),
			g[from:min(len(g), i+120)], w[from:min(len(w), i+120)])
	}
}

// sameAsEncoderEverywhere is sameAsEncoder under the prefixes check uses:
// none for the answer about one item, two spaces for a list's element.
func sameAsEncoderEverywhere(t testing.TB, v any) {
	t.Helper()
	for _, prefix := range []string{"", "  "} {
		sameAsEncoder(t, newReportEncoder(prefix), v)
	}
}

// checkedReports are the reports check --all makes of the repository at
// root, from the stored states and recomputed.
func checkedReports(t *testing.T, root string) []*graph.StatusReport {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("THE_LOOP_CLI_CONFIG", "")
	e, err := policy.Open(policy.Options{Repo: root})
	if err != nil {
		t.Fatal(err)
	}
	items, err := e.Items()
	if err != nil {
		t.Fatal(err)
	}
	var all []*graph.StatusReport
	for _, recompute := range []bool{false, true} {
		reports, err := e.Check(items, recompute, policy.Selector{})
		var failed policy.ItemsError
		if err != nil && !errors.As(err, &failed) {
			t.Fatal(err)
		}
		all = append(all, reports...)
	}
	if len(all) == 0 {
		t.Fatalf("%s: no reports", root)
	}
	return all
}

// TestReportEncoderWritesWhatTheEncoderWrote holds reportEncoder to
// encoding/json over every report check makes of the demo, the test
// repositories, a generated corpus and the original's own work items.
func TestReportEncoderWritesWhatTheEncoderWrote(t *testing.T) {
	repos := map[string]string{
		"demo":     demo,
		"gate":     filepath.Join("..", "..", "testdata", "repos", "gate"),
		"tutorial": filepath.Join("..", "..", "testdata", "repos", "tutorial"),
	}
	for name, root := range repos {
		t.Run(name, func(t *testing.T) { sameOverReports(t, checkedReports(t, root)) })
	}
	t.Run("generated", func(t *testing.T) { sameOverReports(t, checkedReports(t, corpusRepo(t, 2*109+11))) })
	t.Run("original", func(t *testing.T) {
		root := t.TempDir()
		if err := corpus.Shared(t).WriteOriginal(root); err != nil {
			t.Fatal(err)
		}
		sameOverReports(t, checkedReports(t, root))
	})
	t.Run("many", func(t *testing.T) { sameOverReports(t, manyReports(30)) })
}

// sameOverReports encodes reports with one encoder per prefix, as check
// does, so that what an encoder keeps between elements is tried too.
func sameOverReports(t *testing.T, reports []*graph.StatusReport) {
	t.Helper()
	for _, prefix := range []string{"", "  "} {
		e := newReportEncoder(prefix)
		for _, r := range reports {
			sameAsEncoder(t, e, r)
		}
	}
}

// awkward is a string with everything a JSON encoder escapes, or might.
const awkward = "q\"b\\s/ <tag> & amp \x00\x01\x08\x0c\n\r\t\x1f\x7f é ü 日本 \U0001F600 \u2028\u2029 \u0085 \u202e bad:\xff\xc3( end"

// textOnly is an encoding.TextMarshaler, as encoding/json finds it inside
// an any.
type textOnly struct{ s string }

func (x textOnly) MarshalText() ([]byte, error) { return []byte("text " + x.s), nil }

// awkwardParked holds, under keys that need escaping and sort oddly,
// every kind of value decoded JSON has, empty and nil where that reads
// differently, and values decoding never makes, which go to encoding/json.
func awkwardParked() map[string]any {
	return map[string]any{
		"node": "design", "reason": awkward, "since": "2024-01-02T03:04:05Z",
		awkward: awkward, "": "empty key", "Z": 1.0, "a": math.Copysign(0, -1), "ä": 1e21, "<&>": 1e-7,
		"floats":  []any{0.1, 1e20, 123456789.0, 1.5e-6, 9.999e-7, -2.5e300, math.MaxFloat64, math.SmallestNonzeroFloat64},
		"bools":   []any{true, false, nil},
		"nested":  map[string]any{"list": []any{map[string]any{}, []any{}, map[string]any{"x": []any{[]any{"deep"}}}}},
		"nilList": []any(nil), "nilMap": map[string]any(nil), "emptyList": []any{}, "emptyMap": map[string]any{},
		"int": 42, "int64": int64(-7), "uint8": uint8(3), "float32": float32(0.1),
		"strings": []string{"a", awkward}, "nilStrings": []string(nil), "bytes": []byte("bytes <&>"),
		"number": json.Number("12.50"), "raw": json.RawMessage(`{"b": [1, 2], "a": "<&>"}`),
		"text": textOnly{"<&> \u2028"}, "byText": map[textOnly]int{{"k"}: 1}, "pointer": &graph.HookRun{Hook: "h", Reason: awkward},
		"struct": struct {
			A string `json:"a,omitempty"`
			B []int
		}{B: []int{}},
	}
}

// awkwardReports set every field, to awkward values and to the empty and
// nil values encoding/json tells apart.
func awkwardReports() []any {
	full := graph.NodeReport{Node: awkward, Status: "block", Outcome: awkward, Messages: []string{awkward, "", "plain"},
		Forced: true, Attempts: -3, Reached: true,
		Findings: []graph.Finding{
			{Hook: awkward, Node: awkward, Severity: "error", Text: awkward, Path: awkward, Line: 1 << 40, Column: -1},
			{Hook: "h", Node: "n", Severity: "notice", Text: ""},
			{Hook: "x-h", Node: "n", Severity: "warning", Text: awkward, ReportOnly: true},
			{},
		},
		Hooks: []graph.HookRun{
			{Hook: awkward, Boundary: "exit", Ran: true, Status: awkward, Reason: awkward},
			{Hook: "h", Boundary: "entry"},
			{Hook: "x-h", Boundary: "exit", Ran: true, Status: "block", Reason: awkward, ReportOnly: true},
			{},
		}}
	empty := graph.NodeReport{Messages: []string{}, Findings: []graph.Finding{}, Hooks: []graph.HookRun{}}
	return []any{
		&graph.StatusReport{WorkItem: awkward, CurrentNode: awkward, OK: true, Parked: awkwardParked(),
			Nodes: []graph.NodeReport{full, empty, {}}, Dir: "not written", Loop: "not written"},
		&graph.StatusReport{Parked: map[string]any{}, Nodes: []graph.NodeReport{}},
		&graph.StatusReport{Parked: map[string]any{"deep": deepList(120)}}, // past the depth the encoder follows (100)
		&graph.StatusReport{},
		(*graph.StatusReport)(nil),
		unevaluated{WorkItem: awkward, Error: awkward},
		unevaluated{},
		map[string]any{"error": awkward, "line": 3},
		nil,
	}
}

// deepList is n lists, each the only element of the one before.
func deepList(n int) any {
	var v any = "bottom"
	for range n {
		v = []any{v}
	}
	return v
}

func TestReportEncoderWritesAwkwardValuesAsTheEncoderDid(t *testing.T) {
	for _, v := range awkwardReports() {
		sameAsEncoderEverywhere(t, v)
	}
}

// A value encoding/json refuses is refused, and nothing of it is kept.
func TestReportEncoderRefusesWhatTheEncoderRefused(t *testing.T) {
	cycle := map[string]any{}
	cycle["self"] = cycle
	for _, parked := range []map[string]any{
		{"nan": math.NaN()}, {"inf": []any{math.Inf(-1)}}, {"number": json.Number("1.2.3")},
		{"func": func() {}}, {"cycle": cycle},
	} {
		r := &graph.StatusReport{WorkItem: "issue-1", Parked: parked}
		if _, err := newReportEncoder("  ").element(nil, r); err == nil {
			t.Errorf("parked %v: no error", parked)
		}
		sameAsEncoderEverywhere(t, r)
	}
}

// TestTheJSONEncoderKnowsEveryField fails when a type reportEncoder
// writes by hand gains a field, loses one, or has it renamed, or learns
// to marshal itself: reportEncoder would go on writing the old shape.
func TestTheJSONEncoderKnowsEveryField(t *testing.T) {
	want := map[string]string{
		"StatusReport": "WorkItem:workItem CurrentNode:currentNode OK:ok Parked:parked Nodes:nodes Dir:- Loop:- Artifact:- Elapsed:-",
		"NodeReport":   "Node:node Status:status Outcome:outcome Messages:messages Forced:forced Attempts:attempts Reached:reached Findings:findings Hooks:hooks Elapsed:-",
		"Finding":      "Hook:hook Node:node Severity:severity Text:text Path:path,omitempty Line:line,omitempty Column:column,omitempty ReportOnly:reportOnly,omitempty",
		"HookRun":      "Hook:hook Boundary:boundary Ran:ran Status:status,omitempty Reason:reason,omitempty ReportOnly:reportOnly,omitempty",
		"unevaluated":  "WorkItem:workItem Error:error",
	}
	marshalers := []reflect.Type{reflect.TypeFor[json.Marshaler](), reflect.TypeFor[encoding.TextMarshaler]()}
	for _, typ := range []reflect.Type{reflect.TypeFor[graph.StatusReport](), reflect.TypeFor[graph.NodeReport](),
		reflect.TypeFor[graph.Finding](), reflect.TypeFor[graph.HookRun](), reflect.TypeFor[unevaluated]()} {
		var fields []string
		for f := range typ.Fields() {
			if f.IsExported() {
				fields = append(fields, f.Name+":"+f.Tag.Get("json"))
			}
		}
		if got := strings.Join(fields, " "); got != want[typ.Name()] {
			t.Errorf("%s's fields are\n\t%s\nand reportEncoder writes\n\t%s", typ.Name(), got, want[typ.Name()])
		}
		for _, m := range marshalers {
			if typ.Implements(m) || reflect.PointerTo(typ).Implements(m) {
				t.Errorf("%s implements %s, which reportEncoder does not call", typ.Name(), m)
			}
		}
	}
}

// FuzzReportEncoderIsTheEncoder holds reportEncoder to encoding/json for
// reports made of fuzzed strings and numbers, with a parked value that is
// a fuzzed JSON document decoded.
func FuzzReportEncoderIsTheEncoder(f *testing.F) {
	f.Add("issue-1", "design", awkward, "docs/specs/issue-1/design.md", 3, uint8(0), []byte(`{"node": "x", "n": [1, 2.5e-7, null, {}, []], "s": "\u2028<&>"}`))
	f.Add("", "", "", "", 0, uint8(0xff), []byte(`[]`))
	f.Add("\xff", "\u2029", "\x7f\x1b[31m", "<a>", -1, uint8(0x55), []byte(`{"a": {"b": {"c": [1e21, 1e-7, -0, 0.1]}}}`))
	f.Add("a", "b", "c", "d", 1<<20, uint8(0xaa), []byte(`not json`))
	f.Fuzz(func(t *testing.T, item, node, text, path string, n int, shape uint8, doc []byte) {
		bit := func(i uint) bool { return shape&(1<<i) != 0 }
		var parked map[string]any
		if err := json.Unmarshal(doc, &parked); err != nil || bit(0) {
			var v any
			if json.Unmarshal(doc, &v) != nil {
				v = string(doc)
			}
			parked = map[string]any{text: v, item: float64(n) / 7, path: n, node: []any{text, nil, bit(1)}}
		}
		fs := []graph.Finding{{Hook: item, Node: node, Severity: text, Text: text, Path: path, Line: n, Column: n % 3, ReportOnly: bit(5)}}
		hooks := []graph.HookRun{{Hook: node, Boundary: text, Ran: bit(2), Status: path, Reason: text, ReportOnly: bit(6)}}
		msgs := []string{text, path, item}
		if bit(3) {
			fs, hooks, msgs = nil, nil, nil
		}
		if bit(4) {
			fs, hooks, msgs = fs[:0], hooks[:0], msgs[:0]
		}
		nodes := slices.Repeat([]graph.NodeReport{{Node: node, Status: text, Outcome: path, Messages: msgs,
			Forced: bit(5), Attempts: n, Reached: bit(6), Findings: fs, Hooks: hooks}}, int(shape%3))
		if bit(7) {
			nodes = nil
		}
		sameAsEncoderEverywhere(t, &graph.StatusReport{WorkItem: item, CurrentNode: node, OK: bit(1), Parked: parked, Nodes: nodes})
		sameAsEncoderEverywhere(t, unevaluated{WorkItem: item, Error: text})
	})
}
