package graph

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/the-loop/the-loop/internal/lazyregexp"
)

// SplitFrontMatter separates a document's leading "---" front matter from its body.
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
func SplitFrontMatter(text string) (map[string]any, string) {
	front, body, _ := SplitFrontMatterLines(text)
	return front, body
}

// SplitFrontMatterLines is SplitFrontMatter, and the lines the front matter
// stands on, for findings that point into the document.
//
// It walks the lines only as far as the closing "---", and the block and
// the body are slices of text: a check reads the front matter of every
// artifact, and splitting and re-joining whole documents to find a few
// lines at their top was most of what that cost.
func SplitFrontMatterLines(text string) (map[string]any, string, FrontMatterLines) {
	if !strings.HasPrefix(text, "---") {
		return map[string]any{}, text, FrontMatterLines{}
	}
	first := strings.IndexByte(text, '\n')
	if first < 0 {
		return map[string]any{}, text, FrontMatterLines{}
	}
	open := first + 1 // where the block's first line starts
	for i, at := 1, open; at <= len(text); i++ {
		end := strings.IndexByte(text[at:], '\n')
		next := at + end + 1
		if end < 0 {
			end, next = len(text)-at, len(text)+1
		}
		if TrimPySpace(text[at:at+end]) != "---" {
			at = next
			continue
		}
		block := ""
		if at > open {
			block = text[open : at-1] // without the "\n" that ends its last line
		}
		front, keys, ok := fmDecode(block)
		if !ok {
			return map[string]any{}, text, FrontMatterLines{}
		}
		for k := range keys {
			keys[k]++ // the block's first line is the document's second
		}
		body := ""
		if next <= len(text) {
			body = text[next:]
		}
		return front, body, FrontMatterLines{Open: 1, Close: i + 1, Keys: keys}
	}
	return map[string]any{}, text, FrontMatterLines{}
}

// FrontMatterLines is where a document's front matter stands, in lines
// counted from 1 at the start of the document, each ended by "\n" (so a
// "\r\n" ends one line, and Files has read a lone "\r" as "\n"). The zero
// value is a document without front matter, whose body starts on line 1.
type FrontMatterLines struct {
	// Open and Close are the lines of the opening and closing "---", both
	// 0 when the document has no front matter.
	Open, Close int
	// Keys is the line of each top-level key, by its name in the front
	// matter map: for a repeated key the occurrence whose value is read,
	// for a key a merge (<<) brings in the merge's line. Nil when the lines
	// cannot be known (see fmDecode).
	Keys map[string]int
}

// Body is the document line on which line n of the body stands.
func (l FrontMatterLines) Body(n int) int { return l.Close + n }

// Key is where a finding about key points: its line, or the opening "---"
// when the front matter lacks it or its line is unknown; 0 when there is no
// front matter.
func (l FrontMatterLines) Key(key string) int {
	if n, ok := l.Keys[key]; ok {
		return n
	}
	return l.Open
}

// Bounds on a front-matter block, as written and once its aliases are
// expanded: real ones are a few lines, and parsing YAML builds a tree of
// about a hundred times the text.
const (
	maxFrontMatterBytes    = 64 << 10
	maxFrontMatterExpanded = 1 << 20
)

// fmDecode parses one front-matter block, and the line within the block of
// each top-level key (see FrontMatterLines.Keys). ok is false for invalid
// YAML, and for a block over maxFrontMatterBytes or whose aliases would
// expand it past maxFrontMatterExpanded (a few lines of anchors can stand
// for gigabytes): such a document has no front matter a gate can read.
//
// A block of flat "key: scalar" lines, the shape nearly every artifact's
// front matter has, is read by fmFlat without building a YAML tree; any
// other block goes to the YAML decoder (fmDecodeYAML). The two agree on
// every block fmFlat accepts: a test runs both on the corpus and under the
// fuzzer.
func fmDecode(block string) (map[string]any, map[string]int, bool) {
	if len(block) > maxFrontMatterBytes {
		return nil, nil, false
	}
	if front, lines, ok := fmFlat(block); ok {
		return front, lines, true
	}
	return fmDecodeYAML(block)
}

// fmDecodeYAML is fmDecode by way of the YAML decoder, for any block: the
// size bound is fmDecode's.
func fmDecodeYAML(block string) (map[string]any, map[string]int, bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(block), &doc); err != nil {
		return nil, nil, false
	}
	if _, over := ExpandedSize(&doc, maxFrontMatterExpanded); over != nil {
		return nil, nil, false
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return map[string]any{}, nil, true
	}
	var lines map[string]int
	// The YAML scanner also ends a line at a lone "\r", NEL, LS and PS,
	// where a document's line numbers do not: its lines would be wrong.
	// (The block of a "\r\n" document ends in the "\r" of its last line.)
	if !strings.ContainsAny(strings.TrimSuffix(strings.ReplaceAll(block, "\r\n", "\n"), "\r"), "\r\u0085\u2028\u2029") {
		lines = map[string]int{}
	}
	return fmMapping(doc.Content[0], 0, lines), lines, true
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
		return fmMapping(n, depth, nil)
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

// fmMapping decodes a mapping node. When lines is not nil it also records
// there the line of each key, in the same pass, so that a key's line is
// always that of the value the map holds.
func fmMapping(n *yaml.Node, depth int, lines map[string]int) map[string]any {
	type source struct {
		m    map[string]any
		line int
	}
	out := map[string]any{}
	var merged []source
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			for _, m := range fmMergeSources(v, depth+1) {
				merged = append(merged, source{m, k.Line})
			}
			continue
		}
		key := frontMatterKey(fmValue(k, depth+1))
		out[key] = fmValue(v, depth+1)
		if lines != nil {
			lines[key] = k.Line
		}
	}
	for _, src := range merged {
		for k, v := range src.m {
			if _, set := out[k]; !set {
				out[k] = v
				if lines != nil {
					lines[k] = src.line
				}
			}
		}
	}
	return out
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
	fmBool  = lazyregexp.New(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	fmNull  = lazyregexp.New(`^(?:~|null|Null|NULL|)$`)
	fmInt   = lazyregexp.New(`^[-+]?(?:0b[01_]+|0[0-7_]+|0|[1-9][0-9_]*|0x[0-9a-fA-F_]+)$`)
	fmSexa  = lazyregexp.New(`^[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+$`)
	fmFloat = lazyregexp.New(`^(?:[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?|[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
)

// fmPlain resolves an unquoted scalar the way a YAML 1.1 safe loader does.
// Timestamps stay strings: their text is what a comparison would print.
func fmPlain(s string) any {
	if s != "" && ('a' <= s[0] && s[0] <= 'z' || 'A' <= s[0] && s[0] <= 'Z') {
		// A word: no number starts with a letter, so only the null and
		// boolean spellings resolve, and every other is itself; most
		// values are words (approved, design), and this spares them the
		// patterns.
		return fmWord(s)
	}
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

// fmWord is fmPlain of a scalar that starts with a letter: fmNull's and
// fmBool's spellings, spelled out.
func fmWord(s string) any {
	switch s {
	case "null", "Null", "NULL":
		return nil
	case "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
		return true
	case "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
		return false
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

// frontMatterKey is the text of a mapping key as the reference
// implementation's str() gives it; keys are nearly always plain strings.
func frontMatterKey(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	}
	return fmt.Sprint(v)
}
