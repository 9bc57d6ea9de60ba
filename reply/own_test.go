package reply

import (
	"strings"
	"testing"
)

func TestOwnKeepsOnlyWhatThePersonWroteNow(t *testing.T) {
	for _, c := range []struct {
		name, body, want string
	}{
		{"plain text", "approved", "approved"},
		{"CRLF line ends", "a\r\nb", "a\nb"},
		{"a quoted line", "> approved\nno", "\nno"},
		{"a quote indented three spaces", "   > approved", ""},
		{"four spaces is not a quote but code", "\n    > approved", "\n"},
		{"a fenced block", "```\napproved\n```\nok", "\n\n\nok"},
		{"a tilde fence", "~~~go\nlgtm\n~~~", "\n\n"},
		{"a longer fence closes only at its length", "````\n```\nlgtm\n````\nx", "\n\n\n\nx"},
		{"an unclosed fence runs to the end", "```\nlgtm\nmore", "\n\n"},
		{"a backtick fence's info string holds no backtick", "```a`b\nlgtm", "```a`b\nlgtm"},
		{"an inline code span", "say `approved` here", "say   here"},
		{"a double-backtick span", "say ``a ` b`` here", "say   here"},
		{"an unclosed backtick is literal", "a ` lgtm", "a ` lgtm"},
		{"a span does not cross a blank line", "a `x\n\ny` lgtm", "a `x\n\ny` lgtm"},
		{"an HTML comment", "a<!-- approved -->b", "a b"},
		{"an HTML comment over lines", "a<!--\napproved\n-->b", "a b"},
		{"an unclosed HTML comment runs to the end", "a<!-- approved", "a "},
		{"the-loop's envelope", "words\n\n<!-- the-loop:event {\"type\":\"gate.feedback\"} -->\n", "words\n\n \n"},
		{"struck-out text", "~~approved~~ no", "  no"},
		{"an indented code block", "log:\n\n    approved\n    lgtm\nback", "log:\n\n\n\nback"},
		{"a list item's continuation is prose", "- one\n    approved", "- one\n    approved"},
		{"a tab indents code", "x\n\n\tlgtm", "x\n\n"},
	} {
		if got := Own(c.body); got != c.want {
			t.Errorf("%s: Own(%q) = %q, want %q", c.name, c.body, got, c.want)
		}
	}
}

// TestOwnCostsItsLengthOnHostileBodies holds the reader linear where a
// careless one is quadratic: many unclosed backtick runs of distinct
// lengths, many struck-out spans on one line, many unclosed comments.
// It counts work, not time: each body must come back no longer than it
// went in, and a 1 MB body of each kind must be read at all.
func TestOwnCostsItsLengthOnHostileBodies(t *testing.T) {
	var runs strings.Builder
	for n := 1; runs.Len() < 1<<20; n++ {
		runs.WriteString(strings.Repeat("`", n%1500+1))
		runs.WriteString(" approved ")
	}
	for name, body := range map[string]string{
		"backtick runs":    runs.String(),
		"struck spans":     strings.Repeat("~~a~~", 1<<18),
		"comment openings": strings.Repeat("<!--", 1<<18),
		"quote lines":      strings.Repeat("> lgtm\n", 1<<17),
		"fence lines":      strings.Repeat("```\n", 1<<18),
	} {
		if got := Own(body); len(got) > len(body) {
			t.Errorf("%s: Own grew the body from %d to %d bytes", name, len(body), len(got))
		}
		_ = Decide([]Reply{{Body: body}})
	}
}

func FuzzReadNeverDecidesOnWhatIsNotThePersonsOwn(f *testing.F) {
	for _, c := range phrasings {
		for _, b := range c.bodies {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, body string) {
		own := Own(body)
		if len(own) > len(body) {
			t.Fatalf("Own(%q) = %q is longer", body, own)
		}
		_ = Decide([]Reply{{Body: body}})
		// Whatever it says, said only as a quote or inside a fence, it
		// decides nothing.
		if strings.Contains(body, "```") || strings.Contains(body, "\r") {
			return
		}
		quoted := "> " + strings.ReplaceAll(body, "\n", "\n> ")
		if v := Decide([]Reply{{Body: quoted}}); v.Outcome != Undecided {
			t.Fatalf("the quote %q decided %q", quoted, v.Outcome)
		}
		fenced := "```\n" + body + "\n```"
		if v := Decide([]Reply{{Body: fenced}}); v.Outcome != Undecided {
			t.Fatalf("the fenced %q decided %q", fenced, v.Outcome)
		}
	})
}
