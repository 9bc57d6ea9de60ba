package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Everything the-loop prints as text passes through here: work item ids
// are folder names, messages are hooks' words, and both come from the
// checkout under review. A character that would act on a terminal rather
// than show (a carriage return, an escape sequence's ESC, the C1
// controls, the bidirectional overrides, a broken UTF-8 byte) could draw a
// fake verdict line or retitle the window, so it is shown as its escape.

// acts reports whether r would act on a terminal rather than show.
func acts(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// escape writes s to b, escaping what acts; layout keeps the newlines and
// tabs a text's own layout is made of.
func escape(b *bytes.Buffer, s string, layout bool) {
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w == 1:
			fmt.Fprintf(b, `\x%02x`, s[i])
		case layout && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && acts(r):
			fmt.Fprintf(b, `\x%02x`, r)
		case acts(r):
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+w])
		}
		i += w
	}
}

// clean reports whether s holds nothing escape would change.
func clean(s string, layout bool) bool {
	for _, r := range s {
		if !shows(r, layout) {
			return false
		}
	}
	return true
}

// cleanBytes is clean of p, without copying it into a string.
func cleanBytes(p []byte, layout bool) bool {
	for len(p) > 0 {
		r, w := rune(p[0]), 1
		if r >= utf8.RuneSelf {
			r, w = utf8.DecodeRune(p)
		}
		if !shows(r, layout) {
			return false
		}
		p = p[w:]
	}
	return true
}

// shows reports whether escape leaves r (a rune clean reads) as it is.
// U+FFFD itself is not clean: clean cannot tell it from a broken byte.
func shows(r rune, layout bool) bool {
	return !(r == utf8.RuneError || acts(r)) || (layout && (r == '\n' || r == '\t'))
}

// visible is s on one line, with whatever would act on a terminal, its
// newlines included, shown as escapes.
func visible(s string) string {
	if clean(s, false) {
		return s
	}
	var b bytes.Buffer
	escape(&b, s, false)
	return b.String()
}

// visibleWriter passes text through, escaping what would act on a
// terminal but the newlines and tabs it is laid out with. Values that may
// hold a newline of their own are made visible before they are written.
type visibleWriter struct{ w io.Writer }

func (v visibleWriter) Write(p []byte) (int, error) {
	if cleanBytes(p, true) {
		return v.w.Write(p)
	}
	var b bytes.Buffer
	escape(&b, string(p), true)
	if _, err := v.w.Write(b.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// jsonSafe escapes, inside a JSON document, the characters a JSON encoder
// leaves as they are but a terminal acts on (DEL, the C1 controls, the
// bidirectional overrides). They can only stand inside strings, where
// \uXXXX means the same character, so the document means what it meant.
func jsonSafe(doc []byte) []byte {
	if clean(string(doc), true) {
		return doc
	}
	var b strings.Builder
	for _, r := range string(doc) {
		if r != '\n' && r != '\t' && acts(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return []byte(b.String())
}
