package builtins

import (
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Markdown artifact reading shared by the content hooks: the front matter,
// the heading-delimited sections and the mermaid blocks of a document. Every
// reader here tolerates a malformed document: a gate must report what is
// unmet, never fail to read.

// fmSpace is Python's str.isspace, which the original's strip() calls use:
// Unicode white space plus the four ASCII separator controls.
func fmSpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

// fmTrim strips fmSpace from both ends of s.
func fmTrim(s string) string { return strings.TrimFunc(s, fmSpace) }

// fmSplit separates a document's leading "---" front matter from its body.
//
// A document that does not start with "---", whose block is never closed, or
// whose block is not valid YAML has no front matter and its whole text is the
// body. A block that parses to something other than a mapping (a list, a
// scalar, nothing) yields empty front matter but still ends the header: the
// body is what follows the closing line.
//
// Scalars are resolved as YAML 1.1 (yes/no/on/off are booleans, 012 is
// octal), because that is how the reference implementation reads the same
// files and a front-matter comparison must reach the same verdict.
func fmSplit(text string) (map[string]any, string) {
	if !strings.HasPrefix(text, "---") {
		return map[string]any{}, text
	}
	lines := strings.Split(text, "\n")
	for i := 1; i < len(lines); i++ {
		if fmTrim(lines[i]) != "---" {
			continue
		}
		front, ok := fmDecode(strings.Join(lines[1:i], "\n"))
		if !ok {
			return map[string]any{}, text
		}
		return front, strings.Join(lines[i+1:], "\n")
	}
	return map[string]any{}, text
}

// fmRead is the front matter of the file at path; empty when the file cannot
// be read or has none.
func fmRead(path string) map[string]any {
	text, err := readArtifact(path)
	if err != nil {
		return map[string]any{}
	}
	front, _ := fmSplit(text)
	return front
}

// fmDecode parses one front-matter block. ok is false only for invalid YAML.
func fmDecode(block string) (map[string]any, bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(block), &doc); err != nil {
		return nil, false
	}
	if len(doc.Content) == 0 {
		return map[string]any{}, true
	}
	m, isMap := fmValue(doc.Content[0], 0).(map[string]any)
	if !isMap {
		return map[string]any{}, true
	}
	return m, true
}

// fmMaxDepth bounds alias expansion, so a hostile document of nested
// aliases cannot make a gate spin.
const fmMaxDepth = 64

func fmValue(n *yaml.Node, depth int) any {
	if n == nil || depth > fmMaxDepth {
		return nil
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return fmValue(n.Content[0], depth+1)
	case yaml.AliasNode:
		return fmValue(n.Alias, depth+1)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			out = append(out, fmValue(c, depth+1))
		}
		return out
	case yaml.MappingNode:
		out := map[string]any{}
		var merged []map[string]any
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
				merged = append(merged, fmMergeSources(v, depth+1)...)
				continue
			}
			out[pyStr(fmValue(k, depth+1))] = fmValue(v, depth+1)
		}
		for _, src := range merged {
			for k, v := range src {
				if _, set := out[k]; !set {
					out[k] = v
				}
			}
		}
		return out
	case yaml.ScalarNode:
		if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
			return n.Value
		}
		if n.Style&yaml.TaggedStyle != 0 {
			var v any
			if err := n.Decode(&v); err == nil {
				return v
			}
			return n.Value
		}
		return fmPlain(n.Value)
	}
	return nil
}

func fmMergeSources(v *yaml.Node, depth int) []map[string]any {
	switch x := fmValue(v, depth).(type) {
	case map[string]any:
		return []map[string]any{x}
	case []any:
		var out []map[string]any
		for _, e := range x {
			if m, ok := e.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}

var (
	fmBool  = regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	fmNull  = regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)
	fmInt   = regexp.MustCompile(`^[-+]?(?:0b[01_]+|0[0-7_]+|0|[1-9][0-9_]*|0x[0-9a-fA-F_]+)$`)
	fmSexa  = regexp.MustCompile(`^[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+$`)
	fmFloat = regexp.MustCompile(`^(?:[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?|[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
)

// fmPlain resolves an unquoted scalar the way a YAML 1.1 safe loader does.
// Timestamps stay strings: their text is what a comparison would print.
func fmPlain(s string) any {
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

func fmParseInt(s string) (int64, bool) {
	t := strings.ReplaceAll(s, "_", "")
	neg := false
	if t != "" && (t[0] == '-' || t[0] == '+') {
		neg = t[0] == '-'
		t = t[1:]
	}
	base := 10
	switch {
	case strings.HasPrefix(t, "0b"):
		base, t = 2, t[2:]
	case strings.HasPrefix(t, "0x"):
		base, t = 16, t[2:]
	case len(t) > 1 && t[0] == '0':
		base, t = 8, t[1:]
	}
	if t == "" {
		return 0, false
	}
	v, err := strconv.ParseInt(t, base, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

func fmParseSexagesimal(s string) (int64, bool) {
	t := strings.ReplaceAll(s, "_", "")
	sign := int64(1)
	if t[0] == '-' || t[0] == '+' {
		if t[0] == '-' {
			sign = -1
		}
		t = t[1:]
	}
	var v int64
	for _, part := range strings.Split(t, ":") {
		n, err := strconv.ParseInt(part, 10, 64)
		if err != nil || v > math.MaxInt64/60 {
			return 0, false
		}
		v = v*60 + n
	}
	return sign * v, true
}

func fmParseFloat(s string) float64 {
	t := strings.ReplaceAll(s, "_", "")
	switch strings.ToLower(strings.TrimLeft(t, "+-")) {
	case ".inf":
		if strings.HasPrefix(t, "-") {
			return math.Inf(-1)
		}
		return math.Inf(1)
	case ".nan":
		return math.NaN()
	}
	if strings.HasSuffix(t, ".") {
		t += "0"
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return 0
	}
	return f
}

// pyStr renders a decoded value the way Python's str() does, so that a
// front-matter comparison made by text agrees with the reference
// implementation: None, True/False, 1.0 rather than 1.
func pyStr(v any) string {
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
		return pyFloat(x)
	case float32:
		return pyFloat(float64(x))
	}
	return pyRepr(v)
}

// pyRepr is Python's repr() for the same values: strings are quoted.
func pyRepr(v any) string {
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
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []string:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyRepr(e)
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
			parts[i] = pyRepr(k) + ": " + pyRepr(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case nil, bool, int, int64, uint64, float64, float32:
		return pyStr(x)
	}
	return strconv.Quote(strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(fmt.Sprint(v), "\n", " "), "\r", " ")))
}

// pyFloat is Python's repr of a float: the shortest round-tripping digits,
// always with a decimal point or an exponent, scientific below 1e-4 and from
// 1e16 up.
func pyFloat(f float64) string {
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
type mdSection struct {
	Title   string
	Content string
}

// fmSections lists a document's headings in order of first appearance, each
// with its content: the lines up to the next heading of the same or a higher
// level, so a section owns its subsections. Headings inside ``` fences are
// not headings. When a title repeats, the last occurrence's content wins and
// the first occurrence's position is kept.
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
			out[at].Content = content
			continue
		}
		index[h.title] = len(out)
		out = append(out, mdSection{Title: h.title, Content: content})
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

// errNotUTF8 is why a binary or mis-encoded artifact cannot be read.
var errNotUTF8 = errors.New("not valid UTF-8 text")

// readArtifact reads a text artifact the way the reference implementation
// does: UTF-8 only, with \r\n and lone \r read as \n.
func readArtifact(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(data) {
		return "", errNotUTF8
	}
	text := string(data)
	if strings.Contains(text, "\r") {
		text = strings.ReplaceAll(text, "\r\n", "\n")
		text = strings.ReplaceAll(text, "\r", "\n")
	}
	return text, nil
}
