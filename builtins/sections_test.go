package builtins

import (
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/the-loop/the-loop/graph"
)

// fmSectionsJoined is the splitter fmSections replaced, kept as the
// reference it must agree with: every heading's end found by scanning the
// headings after it, and its content joined from the document's lines.
func fmSectionsJoined(text string) []mdSection {
	type head struct {
		title        string
		level, start int
	}
	lines := strings.Split(text, "\n")
	var heads []head
	fenced := false
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimLeftFunc(line, fmSpace), "```") {
			fenced = !fenced
			continue
		}
		if !fenced && strings.HasPrefix(line, "#") {
			rest := strings.TrimLeft(line, "#")
			heads = append(heads, head{title: fmTrim(rest), level: len(line) - len(rest), start: i})
		}
	}
	var out []mdSection
	index := map[string]int{}
	for n, h := range heads {
		end := len(lines)
		for _, next := range heads[n+1:] {
			if next.level <= h.level {
				end = next.start
				break
			}
		}
		content := fmTrim(strings.Join(lines[h.start+1:end], "\n"))
		if at, seen := index[h.title]; seen {
			out[at].Content, out[at].Line = content, h.start+1
			continue
		}
		index[h.title] = len(out)
		out = append(out, mdSection{Title: h.title, Content: content, Line: h.start + 1})
	}
	return out
}

// sectionCases are documents at the edges of the splitter: no trailing
// newline, a heading on the last line, empty sections, fences (one left
// open), repeated titles, levels that rise and fall, "\r" and Unicode
// space around titles.
var sectionCases = []string{
	"",
	"\n",
	"#",
	"# A",
	"# A\n",
	"# A\nbody",
	"# A\n\n# B\n",
	"# A\n## B\n### C\nc\n## D\nd\n# E\ne",
	"### deep\n# shallow\n## mid\ntext\n",
	"# A\n```\n# not a heading\n```\n## B\n  ```go\n# still not\n",
	"# A\n```\n# open fence to the end\n",
	"# T\n\n## A\n\none\n\n## B\n\n## A\n\ntwo\n",
	"#\u00a0Spaced\u2003\r\n text \r\n#\tTab\n\x1c\n",
	"text before\n# A\n#### skip levels\n## B\n\n\n",
	"# A\n# A\n# A\n",
	"#A\n##B\nb\n#C",
	// A "```" after text is no fence, and neither is one later on its line.
	"# A\nsee ``` and ```\n# B\n",
	"a ```\n```\n# fenced\n```\n# B",
	" # not a heading\n\t```\n# fenced\n\u2003```\n# C\n",
	"\xe2\x80```\n# A\n",
}

func TestSectionsAgreeWithTheJoinedSplitter(t *testing.T) {
	for _, text := range sectionCases {
		if got, want := fmSections(text), fmSectionsJoined(text); !reflect.DeepEqual(got, want) {
			t.Errorf("%q:\n got %#v\nwant %#v", text, got, want)
		}
	}
}

// TestSectionsAgreeOnTheCorpus runs both splitters on every Markdown body
// of the original project's work items.
func TestSectionsAgreeOnTheCorpus(t *testing.T) {
	n := 0
	for name, body := range corpusBodies(t) {
		n++
		if got, want := fmSections(body), fmSectionsJoined(body); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the splitters disagree:\n got %#v\nwant %#v", name, got, want)
		}
	}
	if n < 400 {
		t.Errorf("only %d documents in the corpus", n)
	}
}

func FuzzSections(f *testing.F) {
	for _, text := range sectionCases {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if got, want := fmSections(text), fmSectionsJoined(text); !reflect.DeepEqual(got, want) {
			t.Errorf("%q:\n got %#v\nwant %#v", text, got, want)
		}
	})
}

// fmMermaidBlocksJoined is the block finder fmMermaidBlocks replaced, kept
// as the reference it must agree with.
func fmMermaidBlocksJoined(text string) []mermaidBlock {
	var out []mermaidBlock
	var buf []string
	open := 0
	for i, line := range strings.Split(text, "\n") {
		stripped := fmTrim(line)
		if open == 0 {
			if strings.HasPrefix(stripped, "```mermaid") {
				open, buf = i+1, nil
			}
			continue
		}
		if strings.HasPrefix(stripped, "```") {
			out = append(out, mermaidBlock{Line: open, Body: strings.Join(buf, "\n")})
			open = 0
			continue
		}
		buf = append(buf, line)
	}
	if open != 0 {
		out = append(out, mermaidBlock{Line: open, Body: strings.Join(buf, "\n")})
	}
	return out
}

var mermaidCases = []string{
	"", "```mermaid", "```mermaid\n", "```mermaid\n```", "```mermaid\n\n```\n", "```mermaid\na\n\nb\n```\n```mermaid\nopen",
	" \u00a0```mermaid x\nflowchart LR\n  ```  \ntext\n```mermaid\r\nA-->B\r\n```\r\n", "```\n```mermaid\n```",
	"x ```mermaid\n```mermaid\nA\n y```\n```", "```mermaid\n# heading\n```", "\xe2\x80```mermaid\nA\n```",
	"\u00a0```mermaid\nA\n\u2003```\nB",
}

func TestMermaidBlocksAgreeWithTheJoinedFinder(t *testing.T) {
	for _, text := range mermaidCases {
		if got, want := fmMermaidBlocks(text), fmMermaidBlocksJoined(text); !reflect.DeepEqual(got, want) {
			t.Errorf("%q:\n got %#v\nwant %#v", text, got, want)
		}
	}
	for name, body := range corpusBodies(t) {
		if got, want := fmMermaidBlocks(body), fmMermaidBlocksJoined(body); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the finders disagree:\n got %#v\nwant %#v", name, got, want)
		}
	}
}

func FuzzMermaidBlocks(f *testing.F) {
	for _, text := range mermaidCases {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if got, want := fmMermaidBlocks(text), fmMermaidBlocksJoined(text); !reflect.DeepEqual(got, want) {
			t.Errorf("%q:\n got %#v\nwant %#v", text, got, want)
		}
	})
}

func FuzzLowerText(f *testing.F) {
	for _, s := range []string{"", "ABC def", "Trust Boundary — Abuse CASE", "\u212a\u0130İ ΣΑΣ", "\xff\xfeA", "ǅ ǈ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := lowerText(s), strings.ToLower(s); got != want {
			t.Errorf("lowerText(%q) = %q, strings.ToLower says %q", s, got, want)
		}
	})
}

func TestArtifactSectionsAreSplitOncePerEvaluation(t *testing.T) {
	files := graph.NewFiles(nil)
	first := artifactSections(files, "a.md", "# A\n\ntext\n")
	again := artifactSections(files, "a.md", "# ignored: the first answer stands\n")
	if len(first) != 1 || &first[0] != &again[0] {
		t.Errorf("split again: %#v then %#v", first, again)
	}
	if other := artifactSections(files, "b.md", "# B\n"); other[0].Title != "B" {
		t.Errorf("another file shares the first one's sections: %#v", other)
	}
	if direct := artifactSections(nil, "a.md", "# C\n"); direct[0].Title != "C" {
		t.Errorf("no cache, yet %#v", direct)
	}
}

func TestOnlyTheListedCharactersLowerIntoASCII(t *testing.T) {
	var found []string
	for r := rune(utf8.RuneSelf); r <= unicode.MaxRune; r++ {
		if utf8.ValidRune(r) && unicode.ToLower(r) < utf8.RuneSelf {
			found = append(found, string(r))
		}
	}
	if !reflect.DeepEqual(found, asciiFromElsewhere) {
		t.Errorf("characters outside ASCII that lower into it: %q; foldedText knows %q", found, asciiFromElsewhere)
	}
}

var foldCases = [][2]string{
	{"A Trust Boundary here", "trust boundary"}, {"TRUST\nBOUNDARY", "trust\nboundary"}, {"abuse CASE", "Abuse Case"},
	{"\u212aelvin", "kelvin"}, {"\u0130nput", "input"}, {"İstanbul — ŞEHİR", "şehir"}, {"ΣΑΣ", "σασ"}, {"\xffA", "a"},
	{"résumé", "RÉSUMÉ"}, {"no match", "boundary"}, {"", ""}, {"x", ""},
	{"boundary", "BOUNDARY"}, {"xyTrust BoundarY", "trust boundary"}, {"trust boundar", "trust boundary"}, {"yyy", "y"}, {"a-b c", "-b"},
}

func TestFoldedTextAnswersAsLoweringBoth(t *testing.T) {
	for _, c := range foldCases {
		checkFolded(t, c[0], c[1])
	}
}

func checkFolded(t *testing.T, text, phrase string) {
	t.Helper()
	f := foldText(text)
	want := strings.Contains(strings.ToLower(text), strings.ToLower(phrase))
	// Twice: the second answer may come from what the first computed.
	for range 2 {
		if got := f.contains(phrase); got != want {
			t.Errorf("foldText(%q).contains(%q) = %v, want %v", text, phrase, got, want)
		}
	}
}

func FuzzFoldedText(f *testing.F) {
	for _, c := range foldCases {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, text, phrase string) {
		checkFolded(t, text, phrase)
		if phrase != "" && len(text) > 2 {
			// A phrase that is there, in another case.
			checkFolded(t, text, strings.ToUpper(text[1:len(text)-1]))
		}
	})
}

// TestFoldedSearchIsLinear looks for a phrase whose first letter fills the
// text in one case and is absent in the other: a search that looked for the
// other case afresh at every candidate would take minutes.
func TestFoldedSearchIsLinear(t *testing.T) {
	text := strings.Repeat("t", 1<<20) + "Trust Boundary"
	if !foldText(text).contains("trust boundary") {
		t.Error("not found")
	}
	if foldText(strings.Repeat("T", 1<<20)).contains("trust boundary") {
		t.Error("found in a text without it")
	}
}
