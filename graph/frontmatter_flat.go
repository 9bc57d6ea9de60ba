package graph

import (
	"strings"
	"unicode/utf8"
)

// fmFlat reads a front-matter block written as flat lines, without the
// YAML decoder:
//
//	status: approved            # a comment
//	riskTier: 3
//	workItem: "github:acme/app#7"
//	collaborators: [architect, engineer]
//	approvedBy: []
//	overrides: {}
//
// Each line is blank, a comment, or a key at the first column, a colon,
// and one of: nothing, a plain scalar on one line, a quoted scalar with
// no escape but \" and \\, a flow list of such scalars, or {}. Scalars
// resolve as fmValue resolves them (fmPlain), so the answer is the
// decoder's. ok is false for anything else (an indented line, a block
// scalar, an anchor, a tag, a nested or non-empty flow mapping, any other
// escape, a repeated key, a tab, a character outside the printable ranges
// YAML reads the same way on every line), and the caller then decodes the
// block as YAML: fmFlat may decline what it could have read, never read
// it differently.
func fmFlat(block string) (front map[string]any, lines map[string]int, ok bool) {
	// Sized for a key a line, so that neither map grows as it fills.
	keys := strings.Count(block, "\n") + 1
	front = make(map[string]any, keys)
	lines = make(map[string]int, keys)
	for n := 1; ; n++ {
		line, rest, more := strings.Cut(block, "\n")
		if !flatText(line) {
			return nil, nil, false
		}
		switch t := strings.TrimLeft(line, " "); {
		case t == "", t[0] == '#':
			// A blank line, or a comment at any indentation.
		case len(t) < len(line):
			return nil, nil, false // indented: a continuation or a nested block
		default:
			key, value, ok := flatEntry(line)
			if !ok {
				return nil, nil, false
			}
			if _, dup := front[key]; dup {
				return nil, nil, false
			}
			front[key], lines[key] = value, n
		}
		if !more {
			break
		}
		block = rest
	}
	if len(front) == 0 {
		// No mapping: the decoder's answer for a block of comments.
		return map[string]any{}, nil, true
	}
	return front, lines, true
}

// maxFlatKey keeps fmFlat well inside the decoder's limit on a simple
// key's length (1,024).
const maxFlatKey = 128

// flatEntry reads one "key: value" line.
func flatEntry(line string) (key string, value any, ok bool) {
	k := 0
	for k < len(line) && flatKeyByte(line[k]) {
		k++
	}
	if k == 0 || k > maxFlatKey || line[0] == '-' || k == len(line) || line[k] != ':' {
		return "", nil, false
	}
	rest := line[k+1:]
	if rest != "" && rest[0] != ' ' {
		return "", nil, false // "a:b" is one scalar, not a key
	}
	key = frontMatterKey(fmPlain(line[:k]))
	v := strings.TrimLeft(rest, " ")
	switch {
	case v == "", v[0] == '#':
		return key, nil, true
	case v[0] == '"' || v[0] == '\'':
		s, after, ok := flatQuoted(v)
		if !ok || !flatTail(after) {
			return "", nil, false
		}
		return key, s, true
	case v[0] == '[':
		list, after, ok := flatList(v[1:])
		if !ok || !flatTail(after) {
			return "", nil, false
		}
		return key, list, true
	case strings.HasPrefix(v, "{}"):
		if !flatTail(v[2:]) {
			return "", nil, false
		}
		return key, map[string]any{}, true
	}
	// A plain scalar runs to a comment (" #") or the end of the line.
	text := v
	if i := strings.Index(v, " #"); i >= 0 {
		text = v[:i]
	}
	text = strings.TrimRight(text, " ")
	if !flatPlainStart(text, 0) || strings.Contains(text, ": ") || strings.HasSuffix(text, ":") {
		return "", nil, false
	}
	return key, fmPlain(text), true
}

// flatQuoted reads a quoted scalar at the start of v: in single quotes,
// one with no doubled quote; in double quotes, one whose only escapes are
// \" and \\ (approvals quote what was said: "PR #35: \"let's go\"").
func flatQuoted(v string) (s, after string, ok bool) {
	q := v[0]
	if q == '\'' {
		end := strings.IndexByte(v[1:], q)
		if end < 0 || strings.HasPrefix(v[2+end:], "'") {
			return "", "", false
		}
		return v[1 : 1+end], v[2+end:], true
	}
	end := strings.IndexAny(v[1:], `"\`)
	if end < 0 {
		return "", "", false
	}
	if v[1+end] == '"' {
		return v[1 : 1+end], v[2+end:], true
	}
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		switch c := v[i]; c {
		case '"':
			return b.String(), v[i+1:], true
		case '\\':
			if i+1 == len(v) || v[i+1] != '"' && v[i+1] != '\\' {
				return "", "", false // any other escape: the decoder's
			}
			i++
			b.WriteByte(v[i])
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false
}

// flatList reads the items of a flow list after its "[": quoted scalars
// or plain ones of flatListByte, separated by commas, and what follows the
// closing "]". An empty item (a trailing comma) is declined.
func flatList(v string) (list []any, after string, ok bool) {
	list = []any{}
	v = strings.TrimLeft(v, " ")
	if rest, empty := strings.CutPrefix(v, "]"); empty {
		return list, rest, true
	}
	for {
		var item any
		switch {
		case v == "":
			return nil, "", false
		case v[0] == '"' || v[0] == '\'':
			s, rest, ok := flatQuoted(v)
			if !ok {
				return nil, "", false
			}
			item, v = s, strings.TrimLeft(rest, " ")
		default:
			i := 0
			for i < len(v) && flatListByte(v[i]) {
				i++
			}
			text := strings.TrimRight(v[:i], " ")
			if text == "" || !flatPlainStart(text, 0) {
				return nil, "", false
			}
			item, v = fmPlain(text), v[i:]
		}
		list = append(list, item)
		switch {
		case strings.HasPrefix(v, "]"):
			return list, v[1:], true
		case strings.HasPrefix(v, ","):
			v = strings.TrimLeft(v[1:], " ")
		default:
			return nil, "", false
		}
	}
}

// flatTail reports whether what follows a value is only spaces, then
// perhaps a comment after at least one of them.
func flatTail(s string) bool {
	t := strings.TrimLeft(s, " ")
	return t == "" || t[0] == '#' && len(t) < len(s)
}

// flatKeyByte is a byte of a key fmFlat reads.
func flatKeyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// flatListByte is a byte of a plain scalar inside a flow list: none that
// ends one (",", "]"), opens a nested collection, a quote, or a comment.
func flatListByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(" _./()+-~$@=", c) >= 0
}

// flatPlainStart reports whether s[i] may start a plain scalar: not an
// indicator ("-" only before what cannot make it one).
func flatPlainStart(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	switch c := s[i]; {
	case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9':
		return true
	case c == '_' || c == '.' || c == '/' || c == '(' || c == '~' || c == '+' || c == '$':
		return true
	case c == '-':
		return i+1 < len(s) && ('0' <= s[i+1] && s[i+1] <= '9' || s[i+1] == '.' || 'a' <= s[i+1] && s[i+1] <= 'z')
	}
	return false
}

// flatText reports whether line holds only what every YAML reader takes as
// itself: printable ASCII, and the printable non-ASCII characters that are
// neither a line break (U+2028, U+2029), a byte-order mark, nor outside
// the Basic Multilingual Plane. A tab, "\r" or control character declines
// the block.
func flatText(line string) bool {
	for i := 0; i < len(line); {
		c := line[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(line[i:])
		switch {
		case r == utf8.RuneError, r < 0xa0, r == 0x2028, r == 0x2029, r == 0xfeff,
			r >= 0xd800 && r < 0xe000, r > 0xfffd:
			return false
		}
		i += w
	}
	return true
}
