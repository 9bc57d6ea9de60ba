package reportjson

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// The-loop writes JSON strings two ways, both byte for byte as
// encoding/json writes them: HTML-safe as json.Marshal does (a with: of
// graph show, see params.go), and with <, > and & as they are, as the
// Encoder of check's JSON does after SetEscapeHTML(false) (see
// Encoder). Only the ASCII bytes kept as they are differ.

// plainJSON marks the ASCII bytes a string holds as they are when HTML
// is not escaped: not the controls, '"' or '\\'.
var plainJSON = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainHTMLJSON is plainJSON less <, > and &.
var plainHTMLJSON = func() (t [utf8.RuneSelf]bool) {
	t = plainJSON
	t['<'], t['>'], t['&'] = false, false, false
	return t
}()

const hexDigits = "0123456789abcdef"

// AppendString is encoding/json's string encoding, HTML-safe as
// json.Marshal's is: quotes, backslashes and control characters escaped,
// <, > and & as \u003c, \u003e and \u0026, U+2028 and U+2029 escaped, and
// each byte of broken UTF-8 as \ufffd.
func AppendString(b []byte, s string) []byte {
	return appendQuoted(b, s, &plainHTMLJSON)
}

// AppendStringKeepHTML is AppendString with <, > and & as they
// are: an Encoder's after SetEscapeHTML(false).
func AppendStringKeepHTML(b []byte, s string) []byte {
	return appendQuoted(b, s, &plainJSON)
}

// appendQuoted appends s quoted, the ASCII bytes plain marks as they are.
// U+2028 and U+2029 are escaped whatever plain says, because JavaScript
// reads them as line ends.
func appendQuoted(b []byte, s string, plain *[utf8.RuneSelf]bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plain[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendFloat is encoding/json's float64 encoding: the shortest
// decimal that reads back the same, in exponent form only for very large
// and very small magnitudes, with a one-digit negative exponent unpadded;
// false for NaN and the infinities, which encoding/json refuses.
func AppendFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 reads e-9, as encoding/json writes it.
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}
