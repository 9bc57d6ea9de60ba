package builtins

import (
	"math"
	"reflect"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

func TestFrontMatterSplitsALeadingBlock(t *testing.T) {
	cases := []struct {
		name  string
		text  string
		front map[string]any
		body  string
	}{
		{"none", "# D\n", map[string]any{}, "# D\n"},
		{"mapping", "---\nstatus: approved\n---\n# D\n", map[string]any{"status": "approved"}, "# D\n"},
		{"closing line with spaces", "---\nstatus: approved\n---  \n# D", map[string]any{"status": "approved"}, "# D"},
		{"unterminated", "---\nstatus: approved\n", map[string]any{}, "---\nstatus: approved\n"},
		{"invalid YAML keeps the whole text", "---\na: [\n---\nbody", map[string]any{}, "---\na: [\n---\nbody"},
		{"a list is no front matter but still a header", "---\n- a\n---\nbody", map[string]any{}, "body"},
		{"empty block", "---\n---\nbody", map[string]any{}, "body"},
		{"not at the start", "\n---\nstatus: x\n---\n", map[string]any{}, "\n---\nstatus: x\n---\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			front, body := graph.SplitFrontMatter(tc.text)
			if !reflect.DeepEqual(front, tc.front) || body != tc.body {
				t.Errorf("got %v %q, want %v %q", front, body, tc.front, tc.body)
			}
		})
	}
}

func TestFrontMatterResolvesScalarsAsYAML11(t *testing.T) {
	front, _ := graph.SplitFrontMatter("---\n" +
		"a: yes\nb: Off\nc: ~\nd: 0x1F\ne: 1_000\nf: 1.5\ng: .inf\nh: 1e3\ni: '1.5'\n" +
		"j: 2024-01-02\nk: 1:30\nl: [x, 2]\nm: {n: true}\n" +
		"base: &b {q: 1}\nmerged:\n  <<: *b\n  r: 2\n---\n")
	want := map[string]any{
		"a": true, "b": false, "c": nil, "d": int64(31), "e": int64(1000), "f": 1.5,
		"g": math.Inf(1), "h": "1e3", "i": "1.5", "j": "2024-01-02", "k": int64(90),
		"l": []any{"x", int64(2)}, "m": map[string]any{"n": true},
		"base": map[string]any{"q": int64(1)}, "merged": map[string]any{"q": int64(1), "r": int64(2)},
	}
	if !reflect.DeepEqual(front, want) {
		t.Errorf("got  %#v\nwant %#v", front, want)
	}
}

func TestPyStrPrintsValuesAsPython(t *testing.T) {
	cases := []struct {
		v    any
		want string
	}{
		{nil, "None"}, {true, "True"}, {false, "False"}, {int64(3), "3"}, {"x", "x"},
		{1.0, "1.0"}, {0.1, "0.1"}, {1e16, "1e+16"}, {1e15, "1000000000000000.0"},
		{0.0001, "0.0001"}, {0.00001, "1e-05"}, {-2.5, "-2.5"}, {math.Inf(-1), "-inf"},
		{[]any{"a", int64(1)}, "['a', 1]"}, {map[string]any{"k": "it's"}, `{'k': "it's"}`},
	}
	for _, tc := range cases {
		if got := pythonStr(tc.v); got != tc.want {
			t.Errorf("pythonStr(%#v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestSectionsKeepFirstPositionAndLastContentAndItsLine(t *testing.T) {
	got := fmSections("# T\n\n## A\n\none\n\n## B\n\n## A\n\ntwo\n")
	want := []mdSection{{"T", "## A\n\none\n\n## B\n\n## A\n\ntwo", 1}, {"A", "two", 9}, {"B", "", 7}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v", got)
	}
}

func TestMermaidBlocksAreFoundWithTheirFenceLines(t *testing.T) {
	text := "```mermaid\nflowchart LR\n```\ntext\n  ```mermaid\ngraph TD\n```\n```mermaid\nopen to the end"
	got := fmMermaidBlocks(text)
	want := []mermaidBlock{{1, "flowchart LR"}, {5, "graph TD"}, {8, "open to the end"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v", got)
	}
}
