package graph

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzTrimPySpaceIsTrimFunc(f *testing.F) {
	for _, s := range []string{"", " ", "\u0085x\u00a0", " \u2003 a b \x1c", "\xff ", " x\u3000", "\t\n\v\f\r", "é ", " \u200b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := TrimPySpace(s), strings.TrimFunc(s, IsPySpace); got != want {
			t.Errorf("TrimPySpace(%q) = %q, want %q", s, got, want)
		}
		if got, want := TrimLeftPySpace(s), strings.TrimLeftFunc(s, IsPySpace); got != want {
			t.Errorf("TrimLeftPySpace(%q) = %q, want %q", s, got, want)
		}
	})
}

func TestTheASCIITableIsIsPySpace(t *testing.T) {
	for b := range utf8.RuneSelf {
		if asciiPySpace[b] != IsPySpace(rune(b)) {
			t.Errorf("byte %#x: table says %v, IsPySpace %v", b, asciiPySpace[b], IsPySpace(rune(b)))
		}
	}
}
