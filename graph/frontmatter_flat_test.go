package graph

import (
	"fmt"
	"strings"
	"testing"
)

// splitFrontMatterJoined is the splitter SplitFrontMatterLines replaced,
// kept as the reference it must agree with: the whole document split into
// lines, the block and the body joined again, and every block decoded as
// YAML.
func splitFrontMatterJoined(text string) (map[string]any, string, FrontMatterLines) {
	if !strings.HasPrefix(text, "---") {
		return map[string]any{}, text, FrontMatterLines{}
	}
	lines := strings.Split(text, "\n")
	for i := 1; i < len(lines); i++ {
		if TrimPySpace(lines[i]) != "---" {
			continue
		}
		block := strings.Join(lines[1:i], "\n")
		if len(block) > maxFrontMatterBytes {
			return map[string]any{}, text, FrontMatterLines{}
		}
		front, keys, ok := fmDecodeYAML(block)
		if !ok {
			return map[string]any{}, text, FrontMatterLines{}
		}
		for k := range keys {
			keys[k]++
		}
		return front, strings.Join(lines[i+1:], "\n"), FrontMatterLines{Open: 1, Close: i + 1, Keys: keys}
	}
	return map[string]any{}, text, FrontMatterLines{}
}

// same is whether two decodings are one answer: the values with their Go
// types (an int64 is not a string), the key lines, and ok. It compares
// printed forms so that a NaN equals itself.
func same(a, b any) bool { return fmt.Sprintf("%#v", a) == fmt.Sprintf("%#v", b) }

// flatBlocks are blocks at the edges of what fmFlat reads or declines:
// each must decode as the YAML decoder decodes it, by either path.
var flatBlocks = []string{
	"",
	"\n\n",
	"# only a comment\n  # and an indented one",
	"status: approved",
	"status: approved\ntype: design\nphase: design\napprovedBy: []\noverrides: {}\n",
	"status: in-review             # draft | in-review | approved",
	"riskTier: 4\nseverity: high\nscore: 1.5\nneg: -3\nhex: 0x1F\noct: 012\nsexa: 1:30\nexp: 1e3\nf: 1.0e+3",
	"yes: no\non: off\nnull: ~\nTrue: y\n1: one\n01: two",
	`workItem: "github:MadaraUchiha-314/the-loop#247"`,
	`approvedBy: ["@MadaraUchiha-314 (issue author intent)"]`,
	"collaborators: [product-manager, architect, engineer]",
	"collaborators: [a,b , c ]   # roles",
	"list: [1, 2.5, ~, true, 'x', \"y\", 0o7]",
	"list: [a, b,]",
	"list: [[a]]",
	"list: [a # b]",
	"list: [@a]",
	"list: [- a]",
	"list: [-a, .5, +1, (x), $y, ~z, a@b, a=b]",
	"map: {a: 1}",
	"map: { }",
	"map: {}x",
	"q: 'it''s'",
	"q: 'single' # c",
	`q: "with \" escape"`,
	`q: "back \\ slash" # c`,
	`q: "\\"`,
	`q: "abc\`,
	`q: "\"`,
	`q: "\"\""`,
	`q: "end\\\"`,
	`q: "\n\t\x41\u00e9\/\ \0"`,
	`approvedBy: ["@x (PR #35: \"let's implement\" — together)", 'y']`,
	`list: ["a\"", "b\\", "\c"]`,
	`q: "unclosed`,
	`q: "a"b`,
	`q: "a"#b`,
	"plain: a #b\nplain2: a#b\nplain3: a: b\nplain4: a:b",
	"plain: a:",
	"url: https://example.com/x?y=1#frag",
	"text: café ☕ naïve",
	"text: emoji 😀",
	"text: a\u2028b",
	"text: a\u0085b",
	"text: \ufeffbom",
	"text: a\tb",
	"text: a\rb",
	"\ufeffstatus: approved",
	"key:\n- a\n- b",
	"key:\n  nested: 1",
	"key: value\n  continued",
	"key: value\ncontinued",
	"a: 1\na: 2",
	"a: 1\nA: 2",
	"  indented: 1\n  second: 2",
	"key : value",
	"key:value",
	": value",
	"-key: value",
	"key-with-dash: v\nkey_with_underscore: v",
	"<<: {a: 1}",
	"anchor: &a x\nalias: *a",
	"tagged: !!str 1",
	"block: |\n  text",
	"folded: >-\n  text",
	"...",
	"%YAML 1.1",
	"key: ---",
	"key: ...",
	"key: -",
	"key: - a",
	"key: ? a",
	"key: [a, b] trailing",
	"key: 'a'   ",
	"key:   ",
	"key: .inf\nk2: -.inf\nk3: .nan\nk4: .NaN",
	"key: 1_000\nk2: 0b101\nk3: +.5\nk4: 1.",
	"k: 2001-12-14t21:59:43.10-05:00",
	"k: " + strings.Repeat("x", 2000),
	strings.Repeat("k", 200) + ": v",
	"k: a\x7fb",
	"k: \x00",
	"k: \xff",
}

func TestFlatFrontMatterAgreesWithYAML(t *testing.T) {
	for _, block := range flatBlocks {
		checkFlat(t, block)
	}
}

// checkFlat fails when the block decodes differently with and without the
// flat reader.
func checkFlat(t *testing.T, block string) {
	t.Helper()
	if len(block) > maxFrontMatterBytes {
		return
	}
	front, lines, ok := fmDecode(block)
	wantFront, wantLines, wantOK := fmDecodeYAML(block)
	if !same(front, wantFront) || !same(lines, wantLines) || ok != wantOK {
		_, _, flat := fmFlat(block)
		t.Errorf("%q (flat reader took it: %v):\n got %#v %#v %v\nwant %#v %#v %v", block, flat, front, lines, ok, wantFront, wantLines, wantOK)
	}
}

// checkSplit fails when a document splits differently from how the
// joined splitter splits it.
func checkSplit(t *testing.T, name, text string) {
	t.Helper()
	front, body, lines := SplitFrontMatterLines(text)
	wantFront, wantBody, wantLines := splitFrontMatterJoined(text)
	if !same(front, wantFront) || body != wantBody || !same(lines, wantLines) {
		t.Errorf("%s: split differently:\n got %#v %q %#v\nwant %#v %q %#v", name, front, body, lines, wantFront, wantBody, wantLines)
	}
}

func TestSplitFrontMatterAgreesWithTheJoinedSplitter(t *testing.T) {
	docs := []string{"", "---", "---\n", "---\n---", "---\n---\n", "---\n---\nbody", "--- \nstatus: x\n ---\t\nbody\n",
		"---\nstatus: x\n", "---\nstatus: [\n---\nbody", "----\nstatus: x\n---\n", "text\n---\nstatus: x\n---\n",
		"---\nstatus: approved\n---\n# Title\n\ntext\n", "---\n# comment\n---\r\nbody"}
	for _, block := range flatBlocks {
		docs = append(docs, "---\n"+block+"\n---\n# Body\n")
	}
	for _, d := range docs {
		checkSplit(t, fmt.Sprintf("%q", d), d)
	}
}

// TestFrontMatterAgreesOnTheCorpus splits every Markdown file of the
// original project's work items both ways, and asks that the flat reader
// take nearly all of them: it is there to be used.
func TestFrontMatterAgreesOnTheCorpus(t *testing.T) {
	docs := corpusMarkdown(t)
	flat, blocks := 0, 0
	for name, text := range docs {
		checkSplit(t, name, text)
		if block, ok := frontMatterBlock(text); ok {
			blocks++
			checkFlat(t, block)
			if _, _, ok := fmFlat(block); ok {
				flat++
			}
		}
	}
	t.Logf("%d documents, %d with front matter, %d of them read flat", len(docs), blocks, flat)
	// Only a block scalar (overrides: >-) sends one of them to the decoder.
	if blocks < 400 || flat < blocks*99/100 {
		t.Errorf("%d of %d front-matter blocks read flat; want 99 in 100", flat, blocks)
	}
}

// frontMatterBlock is the text between a document's "---" lines, as
// SplitFrontMatterLines hands it to fmDecode.
func frontMatterBlock(text string) (string, bool) {
	if !strings.HasPrefix(text, "---") {
		return "", false
	}
	lines := strings.Split(text, "\n")
	for i := 1; i < len(lines); i++ {
		if TrimPySpace(lines[i]) == "---" {
			return strings.Join(lines[1:i], "\n"), true
		}
	}
	return "", false
}

func FuzzFlatFrontMatter(f *testing.F) {
	for _, block := range flatBlocks {
		f.Add(block)
	}
	f.Fuzz(func(t *testing.T, block string) {
		checkFlat(t, block)
		checkSplit(t, fmt.Sprintf("%q", block), "---\n"+block+"\n---\nbody\n")
		checkSplit(t, fmt.Sprintf("%q as a document", block), block)
	})
}

// fmPlainPatterns is fmPlain without its shortcut for words: the patterns
// alone decide.
func fmPlainPatterns(s string) any {
	switch {
	case fmNull.MatchString(s):
		return nil
	case fmBool.MatchString(s):
		switch strings.ToLower(s) {
		case "yes", "true", "on":
			return true
		}
		return false
	case fmInt.MatchString(s):
		if v, ok := fmParseInt(s); ok {
			return v
		}
	case fmSexa.MatchString(s):
		if v, ok := fmParseSexagesimal(s); ok {
			return v
		}
	case fmFloat.MatchString(s):
		return fmParseFloat(s)
	}
	return s
}

func FuzzPlainScalar(f *testing.F) {
	for _, s := range []string{"", "~", "null", "NULL", "nUll", "yes", "Yes", "yES", "on", "off", "OFF", "y", "n",
		"true", "tRue", "approved", "a1", "e5", "inf", "nan", "NaN", ".nan", "x:1", "0x1f", "1:30", "1e3", "1.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := fmPlain(s), fmPlainPatterns(s); !same(got, want) {
			t.Errorf("fmPlain(%q) = %#v, the patterns say %#v", s, got, want)
		}
	})
}
