package builtins

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/the-loop/the-loop/graph"
)

// Markdown artifact reading shared by the content hooks: front-matter values
// rendered as Python would, the heading-delimited sections and the mermaid
// blocks of a document. The front matter itself is parsed by graph.Files. Every
// reader here tolerates a malformed document: a gate must report what is
// unmet, never fail to read.

// fmSpace is Python's str.isspace, which the original's strip() calls use.
func fmSpace(r rune) bool { return graph.IsPySpace(r) }

// fmTrim strips fmSpace from both ends of s.
func fmTrim(s string) string { return graph.TrimPySpace(s) }

// pythonStr renders a decoded value the way Python's str() does, so that a
// front-matter comparison made by text agrees with the reference
// implementation: None, True/False, 1.0 rather than 1.
func pythonStr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return x
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		return pythonFloat(x)
	case float32:
		return pythonFloat(float64(x))
	}
	return pythonRepr(v)
}

// pythonRepr is Python's repr() for the same values: strings are quoted.
func pythonRepr(v any) string {
	switch x := v.(type) {
	case string:
		q := "'"
		if strings.Contains(x, "'") && !strings.Contains(x, `"`) {
			q = `"`
		}
		r := strings.ReplaceAll(x, `\`, `\\`)
		if q == "'" {
			r = strings.ReplaceAll(r, "'", `\'`)
		}
		r = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(r)
		return q + r + q
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pythonRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []string:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pythonRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range x {
				if !yield(k) {
					return
				}
			}
		})
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = pythonRepr(k) + ": " + pythonRepr(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case nil, bool, int, int64, uint64, float64, float32:
		return pythonStr(x)
	}
	return strconv.Quote(strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(fmt.Sprint(v), "\n", " "), "\r", " ")))
}

// pythonFloat is Python's repr of a float: the shortest round-tripping digits,
// always with a decimal point or an exponent, scientific below 1e-4 and from
// 1e16 up.
func pythonFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	sci := strconv.FormatFloat(f, 'e', -1, 64)
	mant, expText, _ := strings.Cut(sci, "e")
	exp, _ := strconv.Atoi(expText)
	if exp >= -4 && exp < 16 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.ContainsAny(s, ".") {
			s += ".0"
		}
		return s
	}
	sign := "+"
	if exp < 0 {
		sign, exp = "-", -exp
	}
	e := strconv.Itoa(exp)
	if len(e) < 2 {
		e = "0" + e
	}
	return mant + "e" + sign + e
}

// mdSection is one heading of a markdown document and the text it owns.
// Line is the 1-based line of the heading that owns Content.
type mdSection struct {
	Title   string
	Content string
	Line    int
}

// fmSections lists a document's headings in order of first appearance, each
// with its content: the lines up to the next heading of the same or a higher
// level, so a section owns its subsections. Headings inside ``` fences are
// not headings. When a title repeats, the last occurrence's content and line
// win and the first occurrence's position is kept.
//
// It reads the document once: a heading's section ends where the first
// later heading of its level or higher starts, which a stack of the
// headings still open finds as it goes, and each content is a slice of
// text, not a copy. The gates ask it of every artifact they read on every
// node, and a section that nests others would otherwise be joined again for
// each heading above it.
func fmSections(text string) []mdSection {
	type head struct {
		title string
		level int
		line  int // 0-based line of the heading
		from  int // offset of the line after it
		to    int // offset where its content ends; -1 while open
	}
	// Most documents have a few dozen headings and nest a few deep: their
	// lists start on the stack.
	var headBuf [64]head
	var openBuf [16]int
	heads := headBuf[:0]
	open := openBuf[:0] // indexes into heads, levels strictly rising
	fenced := false
	for line, at := 0, 0; at <= len(text); line++ {
		end := strings.IndexByte(text[at:], '\n')
		next := at + end + 1
		if end < 0 {
			end, next = len(text)-at, len(text)+1
		}
		l := text[at : at+end]
		if l != "" && l[0] > ' ' && l[0] < utf8.RuneSelf && l[0] != '#' && l[0] != '`' {
			// Most lines start with what they say, and what they say is
			// neither a heading nor a fence: no need to look further.
			at = next
			continue
		}
		switch {
		case isFence(l):
			fenced = !fenced
		case !fenced && strings.HasPrefix(l, "#"):
			rest := strings.TrimLeft(l, "#")
			level := len(l) - len(rest)
			for len(open) > 0 && heads[open[len(open)-1]].level >= level {
				// The "\n" that ends the line before this heading is no
				// part of the section it closes.
				heads[open[len(open)-1]].to = at - 1
				open = open[:len(open)-1]
			}
			open = append(open, len(heads))
			heads = append(heads, head{title: fmTrim(rest), level: level, line: line, from: next, to: -1})
		}
		at = next
	}
	if len(heads) == 0 {
		return nil
	}
	out := make([]mdSection, 0, len(heads))
	var index map[string]int // by title; only for many headings
	if len(heads) > 32 {
		index = make(map[string]int, len(heads))
	}
	for _, h := range heads {
		content := ""
		switch {
		case h.to < 0 && h.from < len(text):
			content = fmTrim(text[h.from:])
		case h.to >= h.from:
			content = fmTrim(text[h.from:h.to])
		}
		at, seen := -1, false
		if index != nil {
			at, seen = index[h.title]
		} else {
			at = slices.IndexFunc(out, func(s mdSection) bool { return s.Title == h.title })
			seen = at >= 0
		}
		if seen {
			out[at].Content, out[at].Line = content, h.line+1
			continue
		}
		if index != nil {
			index[h.title] = len(out)
		}
		out = append(out, mdSection{Title: h.title, Content: content, Line: h.line + 1})
	}
	return out
}

// isFence reports whether line opens or closes a ``` fence: its first
// character that is not fmSpace is the first of three backticks.
func isFence(line string) bool { return strings.HasPrefix(graph.TrimLeftPySpace(line), "```") }

// sectionsKey is what artifactSections keeps an artifact's sections
// under, in the evaluation's graph.Files: no path has a NUL in it, so no
// other keeper's key is this one.
const sectionsKey = "\x00sections"

// artifactSections is fmSections of body, the body of rel, split once per
// evaluation: the gates of eight nodes read the sections of the shared
// execution log. Callers must not modify the result.
func artifactSections(files *graph.Files, rel, body string) []mdSection {
	return graph.Remembered(files, rel, sectionsKey, func() []mdSection { return slices.Clip(fmSections(body)) })
}

// lowerText is strings.ToLower(s): for valid UTF-8, which is all a
// checkout's text artifacts can be (graph.Files reads nothing else), by a
// loop that lowers ASCII letters itself and asks package unicode only about
// other characters, where strings.ToLower maps every character of a text
// with one non-ASCII character in it through a call. Gates lower whole
// documents to compare them without regard to case.
func lowerText(s string) string {
	if !utf8.ValidString(s) {
		return strings.ToLower(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b.WriteByte(c)
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(unicode.ToLower(r))
		i += w
	}
	return b.String()
}

// mermaidBlock is the body of one ```mermaid fence. Line is the 1-based line
// of the opening fence; the body's first line is Line+1.
type mermaidBlock struct {
	Line int
	Body string
}

// fmMermaidBlocks finds every ```mermaid fenced block in document order. Any
// line starting with ``` closes the block; a block left open runs to the end
// of the document, which is how a markdown renderer shows it. Each body is
// a slice of text: its lines are consecutive there.
func fmMermaidBlocks(text string) []mermaidBlock {
	var out []mermaidBlock
	open, from := 0, 0 // the opening fence's line (0: none open), where the body starts
	for line, at := 0, 0; at <= len(text); line++ {
		end := strings.IndexByte(text[at:], '\n')
		next := at + end + 1
		if end < 0 {
			end, next = len(text)-at, len(text)+1
		}
		l := text[at : at+end]
		if l == "" || l[0] > ' ' && l[0] < utf8.RuneSelf && l[0] != '`' {
			// Not a fence, and most lines say so in their first byte.
			at = next
			continue
		}
		stripped := graph.TrimLeftPySpace(l)
		switch {
		case open == 0 && strings.HasPrefix(stripped, "```mermaid"):
			open, from = line+1, next
		case open != 0 && strings.HasPrefix(stripped, "```"):
			out = append(out, mermaidBlock{Line: open, Body: span(text, from, at-1)})
			open = 0
		}
		at = next
	}
	if open != 0 {
		out = append(out, mermaidBlock{Line: open, Body: span(text, from, len(text))})
	}
	return out
}

// span is text[from:to], "" when the span is empty (to < from: a block
// with no lines, or one that would start past the end).
func span(text string, from, to int) string {
	if to <= from || from >= len(text) {
		return ""
	}
	return text[from:to]
}
