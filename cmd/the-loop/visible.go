package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
	"unsafe"
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
	for i := 0; i < len(s); {
		// Most of any output is printable ASCII: eight bytes of it are
		// passed at a time (a report in JSON is tens of kilobytes an item).
		if i+8 <= len(s) && printable8(s[i:i+8]) {
			i += 8
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 || c == 0x7f) && !(layout && (c == '\n' || c == '\t')) {
				return false
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if !shows(r, layout) {
			return false
		}
		i += w
	}
	return true
}

// printable8 reports whether each of the eight bytes of s is printable
// ASCII, 0x20 to 0x7e: none below 0x20 (the subtraction borrows into its
// top bit, which is clear in the byte itself), and none from 0x7f (adding
// one sets its top bit, or it was set). A carry or borrow across bytes
// only happens past a byte that fails already, so false is exact enough:
// the caller then looks at the bytes one at a time.
func printable8(s string) bool {
	const ones, tops = 0x0101010101010101, 0x8080808080808080
	x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	return (x-0x20*ones)&^x&tops == 0 && ((x+ones)|x)&tops == 0
}

// cleanBytes is clean of p, without copying it into a string: the string
// is a view of p, which clean only reads.
func cleanBytes(p []byte, layout bool) bool {
	return clean(unsafe.String(unsafe.SliceData(p), len(p)), layout)
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
	if cleanBytes(doc, true) {
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
