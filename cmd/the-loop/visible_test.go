package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVisibleShowsWhatWouldActOnATerminal(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, é and 日本":           "plain text, é and 日本",
		"a\nb\tc\rd":                     `a\nb\tc\rd`,
		"\x1b]0;pwned\x07":               `\x1b]0;pwned\x07`,
		"\x7f and \u009b and \u202edcba": `\x7f and \u009b and \u202edcba`,
		"broken \xff byte":               `broken \xff byte`,
	} {
		if got := visible(in); got != want {
			t.Errorf("visible(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCleanBytesIsClean(t *testing.T) {
	for _, s := range []string{
		"", "plain text, é and 日本", "a\nb\tc", "a\rb", "\x1b]0;x\x07", "\x7f", "\u009b", "\u202e", "\u200e",
		"broken \xff byte", "\xc3", "\ufffd", "\xed\xa0\x80", "\xf4\x90\x80\x80", "end\xe6\x97",
	} {
		for _, layout := range []bool{false, true} {
			if got, want := cleanBytes([]byte(s), layout), clean(s, layout); got != want {
				t.Errorf("cleanBytes(%q, %v) = %v, want clean's %v", s, layout, got, want)
			}
		}
	}
}

func TestTheVisibleWriterKeepsItsLayoutAndEscapesTheRest(t *testing.T) {
	var b bytes.Buffer
	visibleWriter{&b}.Write([]byte("one\n\ttwo\x1b[2K\r\n"))
	if got := b.String(); got != "one\n\ttwo\\x1b[2K\\r\n" {
		t.Errorf("got %q", got)
	}
}

func TestJSONStaysJSONAndTerminalSafe(t *testing.T) {
	doc, _ := json.Marshal(map[string]string{"m": "a\x7f\u009b\u202eb\x1b"})
	safe := jsonSafe(doc)
	var back map[string]string
	if err := json.Unmarshal(safe, &back); err != nil || back["m"] != "a\x7f\u009b\u202eb\x1b" {
		t.Errorf("jsonSafe(%s) = %s, which decodes to %q, %v", doc, safe, back["m"], err)
	}
	if !clean(string(safe), true) {
		t.Errorf("jsonSafe left something that acts: %q", safe)
	}
}

func TestAFolderNameCannotForgeCheckOutput(t *testing.T) {
	repo := t.TempDir()
	for _, dir := range []string{".git", "docs/specs/evil\x1b[31mred\nissue-9: ok"} {
		if err := os.MkdirAll(filepath.Join(repo, filepath.FromSlash(dir)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	t.Setenv("HOME", t.TempDir())
	t.Setenv("THE_LOOP_CLI_CONFIG", "")
	code := run([]string{"check", "--all", "--repo", repo}, &stdout, &stderr)
	out := stdout.String()
	if code != 1 || !strings.Contains(out, `evil\x1b[31mred\nissue-9: ok: UNMET`) || strings.Contains(out, "\x1b") || strings.Contains(out, "\nissue-9: ok") {
		t.Errorf("exit %d, output:\n%s\nstderr: %s", code, out, stderr.String())
	}
}

// cleanByRunes is clean as it was, a rune at a time: the reference the
// word-at-a-time clean must agree with.
func cleanByRunes(s string, layout bool) bool {
	for _, r := range s {
		if !shows(r, layout) {
			return false
		}
	}
	return true
}

// cleanCases put each byte that matters at every place in and around an
// eight-byte word.
func cleanCases() []string {
	cases := []string{"", "plain text, é and 日本", "a\nb\tc", "\xed\xa0\x80", "\xf4\x90\x80\x80", "end\xe6\x97"}
	for _, odd := range []string{"\x00", "\x1f", "\n", "\t", "\r", "\x7f", "\x80", "\xff", "\u009b", "\u202e", "\ufffd", "é", " ", "~"} {
		for n := 0; n <= 17; n++ {
			for at := 0; at <= n; at++ {
				cases = append(cases, strings.Repeat("a", at)+odd+strings.Repeat("b", n-at))
			}
		}
	}
	return cases
}

func TestCleanAgreesWithReadingRuneByRune(t *testing.T) {
	for _, s := range cleanCases() {
		for _, layout := range []bool{false, true} {
			if got, want := clean(s, layout), cleanByRunes(s, layout); got != want {
				t.Errorf("clean(%q, %v) = %v, want %v", s, layout, got, want)
			}
		}
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range cleanCases() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, layout := range []bool{false, true} {
			if got, want := clean(s, layout), cleanByRunes(s, layout); got != want {
				t.Errorf("clean(%q, %v) = %v, want %v", s, layout, got, want)
			}
			if got, want := cleanBytes([]byte(s), layout), cleanByRunes(s, layout); got != want {
				t.Errorf("cleanBytes(%q, %v) = %v, want %v", s, layout, got, want)
			}
		}
	})
}

// BenchmarkCleanJSON is clean of an item's report as check's JSON writes
// it: indented lines, mostly ASCII, a dash now and then.
func BenchmarkCleanJSON(b *testing.B) {
	doc := strings.Repeat("        {\n          \"hook\": \"validate-artifacts\",\n          \"text\": \"artifact is not locked — front matter says status: draft\"\n        },\n", 200)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if !clean(doc, true) {
			b.Fatal("not clean")
		}
	}
}
