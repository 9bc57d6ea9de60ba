package graph

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// IsPySpace is Python's str.isspace for one character, which the
// original's strip() calls use: Unicode white space plus the four ASCII
// separator controls.
func IsPySpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

// asciiPySpace marks the ASCII bytes IsPySpace holds: tab to carriage
// return, the separator controls, and the space.
var asciiPySpace = [utf8.RuneSelf]bool{
	'\t': true, '\n': true, '\v': true, '\f': true, '\r': true,
	0x1c: true, 0x1d: true, 0x1e: true, 0x1f: true, ' ': true,
}

// TrimPySpace strips what Python's str.strip() strips from both ends of
// s. Spec documents are trimmed line by line, heading by heading: the
// ASCII ends are trimmed byte by byte, and only an end that is not ASCII
// is asked of Unicode.
func TrimPySpace(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] < utf8.RuneSelf && asciiPySpace[s[i]] {
		i++
	}
	for j > i && s[j-1] < utf8.RuneSelf && asciiPySpace[s[j-1]] {
		j--
	}
	s = s[i:j]
	if s != "" && (s[0] >= utf8.RuneSelf || s[len(s)-1] >= utf8.RuneSelf) {
		return strings.TrimFunc(s, IsPySpace)
	}
	return s
}

// TrimLeftPySpace is TrimPySpace of the start of s only.
func TrimLeftPySpace(s string) string {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf && asciiPySpace[s[i]] {
		i++
	}
	if s = s[i:]; s != "" && s[0] >= utf8.RuneSelf {
		return strings.TrimLeftFunc(s, IsPySpace)
	}
	return s
}
