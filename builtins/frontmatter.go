package builtins

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Markdown artifact reading shared by the content hooks: front-matter values
// rendered as Python would, the heading-delimited sections and the mermaid
// blocks of a document. The front matter itself is parsed by graph.Files. Every
// reader here tolerates a malformed document: a gate must report what is
// unmet, never fail to read.

// fmSpace is Python's str.isspace, which the original's strip() calls use:
// Unicode white space plus the four ASCII separator controls.
func fmSpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

// fmTrim strips fmSpace from both ends of s.
func fmTrim(s string) string { return strings.TrimFunc(s, fmSpace) }

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
func fmSections(text string) []mdSection {
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

// mermaidBlock is the body of one ```mermaid fence. Line is the 1-based line
// of the opening fence; the body's first line is Line+1.
type mermaidBlock struct {
	Line int
	Body string
}

// fmMermaidBlocks finds every ```mermaid fenced block in document order. Any
// line starting with ``` closes the block; a block left open runs to the end
// of the document, which is how a markdown renderer shows it.
func fmMermaidBlocks(text string) []mermaidBlock {
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
