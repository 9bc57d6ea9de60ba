package channels

import (
	"slices"
	"testing"

	"github.com/the-loop/the-loop/policy"
)

func defaultVocabulary() Vocabulary { return NewVocabulary(policy.DefaultControlKeyword) }

// A keyword shown rather than said commands nothing: in code, in a quote,
// in an HTML comment (where the-loop's records keep their envelopes).
func TestParseNeverReadsAKeywordThePersonDidNotSay(t *testing.T) {
	v := defaultVocabulary()
	for _, body := range []string{
		"`the-loop start`",
		"FYI: anyone on the list can type `the-loop stop`.",
		"> the-loop start\n\nquoted, and not said again",
		"To pause it:\n\n```\nthe-loop pause\n```",
		"~~~\nthe-loop stop\n~~~",
		"log:\n\n    the-loop stop",
		"<!-- the-loop stop -->",
		"``the-loop `stop` start``",
	} {
		if c := v.Parse(body); c.Command != "" || c.Ambiguous || len(c.Matched) > 0 {
			t.Errorf("Parse(%q) = %+v, want nothing", body, c)
		}
	}
	// Two different keywords are still ambiguous when both are said, and
	// one said beside one shown is the one said.
	if c := v.Parse("the-loop stop, then the-loop start"); !c.Ambiguous {
		t.Errorf("two said keywords: %+v, want ambiguous", c)
	}
	if c := v.Parse("`the-loop stop` is what I would have said; the-loop start"); c.Command != CommandStart || c.Ambiguous {
		t.Errorf("one shown, one said: %+v, want start", c)
	}
}

func TestParseFindsAKeywordOnlyAsAWholeToken(t *testing.T) {
	v := defaultVocabulary()
	for _, tc := range []struct {
		body, want string
	}{
		{"the-loop start", CommandStart},
		{"the-loop start.", CommandStart},
		{"Please, the-loop start!", CommandStart},
		{"**the-loop start**", CommandStart},
		{"(the-loop start)", CommandStart},
		{"> the-loop stop\n\nthe-loop start", CommandStart},
		{"line one\nthe-loop stop\nline three", CommandStop},
		{"the-loop started", ""},
		{"the-loop startlater", ""},
		{"xthe-loop start", ""},
		{"re-the-loop start", ""},
		{":the-loop start", ""},
		{"the-loop start:", ""},
		{"the-loop start-up", ""},
		{"the-loop start_", ""},
		{"the-loop start1", ""},
		{"éthe-loop start", ""},
		{"the-loop starté", ""},
		{"the-loop  start", ""},
		{"the-loopstart", ""},
		{"the-loop does", ""},
		{"the-loop done", ""},
		{"the-loop docs", ""},
		{"the-loop do", CommandDo},
		{"the-loop do, please", CommandDo},
		{"the-loop execute", CommandExecute},
		{"the-loop cleanup", CommandCleanup},
		{"the-loop contribute", CommandContribute},
		{"the-loop resume", CommandResume},
		{"the-loop pause", CommandPause},
		// a glued occurrence does not hide a later clean one
		{"the-loop started; so the-loop start", CommandStart},
		{"", ""},
		{"approved", ""},
	} {
		got := v.Parse(tc.body)
		if got.Command != tc.want || got.Ambiguous {
			t.Errorf("Parse(%q) = %+v, want command %q", tc.body, got, tc.want)
		}
	}
}

func TestParseIgnoresCase(t *testing.T) {
	v := defaultVocabulary()
	for _, body := range []string{"THE-LOOP START", "The-Loop Start", "tHe-lOoP sTaRt"} {
		if got := v.Parse(body); got.Command != CommandStart {
			t.Errorf("Parse(%q) = %+v, want start", body, got)
		}
	}
}

func TestTwoDifferentCommandsAreAmbiguousAndNoCommand(t *testing.T) {
	v := defaultVocabulary()
	got := v.Parse("the-loop stop... no wait, the-loop start")
	if !got.Ambiguous || got.Command != "" || !slices.Equal(got.Matched, []string{CommandStart, CommandStop}) {
		t.Errorf("got %+v, want ambiguous start and stop", got)
	}
	// the same command twice is that command
	got = v.Parse("the-loop start. I said: the-loop start")
	if got.Ambiguous || got.Command != CommandStart {
		t.Errorf("a repeated command: got %+v", got)
	}
}

func TestAKeywordSetToEmptyIsNotRecognised(t *testing.T) {
	v := NewVocabulary(func(c string) string {
		switch c {
		case CommandStop:
			return ""
		case CommandStart:
			return "go go go"
		}
		return policy.DefaultControlKeyword(c)
	})
	if got := v.Parse("the-loop stop"); got.Command != "" || got.Ambiguous {
		t.Errorf("a disabled keyword: got %+v", got)
	}
	// with stop gone, a comment carrying it and start is not ambiguous
	if got := v.Parse("the-loop stop, then GO GO GO"); got.Command != CommandStart || got.Ambiguous {
		t.Errorf("got %+v, want start", got)
	}
	if got := v.Parse("the-loop start"); got.Command != "" {
		t.Errorf("a redeclared keyword's default still counts: %+v", got)
	}
	if got := (Vocabulary{}).Parse("the-loop start"); got.Command != "" || len(got.Matched) != 0 {
		t.Errorf("the empty vocabulary recognised %+v", got)
	}
}

func TestVocabularyOfAConfigWithControlOffRecognisesNothing(t *testing.T) {
	on := policy.DefaultCLIConfig()
	if got := VocabularyOf(on).Parse("the-loop pause"); got.Command != CommandPause {
		t.Errorf("defaults: got %+v", got)
	}
	off := policy.DefaultCLIConfig()
	off.Doc = map[string]any{"routing": map[string]any{"control": map[string]any{"enabled": false}}}
	if got := VocabularyOf(off).Parse("the-loop pause"); got.Command != "" {
		t.Errorf("control off: got %+v", got)
	}
}

func TestArmingCommands(t *testing.T) {
	var armed []string
	for _, c := range Commands {
		if Arming(c) {
			armed = append(armed, c)
		}
	}
	if want := []string{CommandStart, CommandResume, CommandContribute, CommandDo}; !slices.Equal(armed, want) {
		t.Errorf("arming = %v, want %v", armed, want)
	}
}

func TestParseRefIsStrict(t *testing.T) {
	for _, s := range []string{"github:acme/shop#12", "github:Acme-Co/shop.js#1", "github:a/b_c#2147483647"} {
		r, err := ParseRef(s)
		if err != nil {
			t.Errorf("ParseRef(%q): %v", s, err)
			continue
		}
		if r.String() != s {
			t.Errorf("ParseRef(%q).String() = %q", s, r.String())
		}
	}
	for _, s := range []string{
		"", "acme/shop#12", "gitlab:acme/shop#12", "github:acme/shop", "github:acme#12",
		"github:ghe.corp/acme/shop#12", "github:acme/shop#0", "github:acme/shop#012",
		"github:acme/shop#-1", "github:acme/shop#+1", "github:acme/shop#1x", "github:acme/shop#",
		"github:acme/shop#2147483648", " github:acme/shop#12", "github:acme/shop#12 ",
		"github:acme/sh op#12", "github:-acme/shop#12", "github:acme/../#12", "github:acme/shop#1#2",
		"github:acme//shop#1", "GITHUB:acme/shop#1",
	} {
		if r, err := ParseRef(s); err == nil {
			t.Errorf("ParseRef(%q) = %+v, want an error", s, r)
		}
	}
}

func TestRefNamesItsItemAndCompareIgnoringCase(t *testing.T) {
	a, _ := ParseRef("github:Acme/Shop#12")
	b, _ := ParseRef("github:acme/shop#12")
	if a.Key() != b.Key() || !a.SameRepository(b) {
		t.Errorf("%v and %v are one work item", a, b)
	}
	if a.ItemID() != "issue-12" || a.Repository() != "Acme/Shop" {
		t.Errorf("ItemID %q, Repository %q", a.ItemID(), a.Repository())
	}
	if (Ref{}).String() != "" || !(Ref{}).IsZero() {
		t.Error("the zero Ref names nothing")
	}
}

// FuzzVocabularyParse: whatever the body, a parse is one command, an
// ambiguity with no command, or nothing, and the command is one it matched.
func FuzzVocabularyParse(f *testing.F) {
	for _, s := range []string{"the-loop start", "THE-LOOP Stop the-loop start", "the-loop started", "x the-loop execute.", "the-loop:start", ""} {
		f.Add(s)
	}
	v := NewVocabulary(func(c string) string { return "the-loop " + c })
	f.Fuzz(func(t *testing.T, body string) {
		c := v.Parse(body)
		switch {
		case c.Ambiguous && (c.Command != "" || len(c.Matched) < 2):
			t.Fatalf("%q: ambiguous with command %q and matches %v", body, c.Command, c.Matched)
		case !c.Ambiguous && len(c.Matched) > 1:
			t.Fatalf("%q: %v matched, and not ambiguous", body, c.Matched)
		case c.Command != "" && !slices.Contains(c.Matched, c.Command):
			t.Fatalf("%q: command %q is not among the matches %v", body, c.Command, c.Matched)
		}
	})
}

func TestADefangedReplyCarriesNoCommandAndStillShowsWhichWasMeant(t *testing.T) {
	v := NewVocabulary(func(c string) string {
		return map[string]string{CommandStart: "the-loop start", CommandStop: "the-loop stop", CommandDo: "go"}[c]
	})
	for _, tc := range []struct{ in, want string }{
		{"please the-loop start now", "please the-loop ‹defanged› start now"},
		{"THE-LOOP STOP.", "THE-LOOP ‹defanged› STOP."},
		{"go go gadget", "g‹defanged›o g‹defanged›o gadget"},
		{"gone and the-loop started stay", "gone and the-loop started stay"},
		{"approved", "approved"},
	} {
		got := v.Defang(tc.in)
		if got != tc.want {
			t.Errorf("Defang(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if c := v.Parse(got); len(c.Matched) != 0 {
			t.Errorf("Parse(Defang(%q)) still finds %v", tc.in, c.Matched)
		}
	}
}

func TestStripTakesOutWholeKeywordsAlone(t *testing.T) {
	v := NewVocabulary(policy.DefaultControlKeyword)
	for in, want := range map[string]string{
		"the-loop contribute.":                ".",
		"The-Loop START\nGoal: x":             "\nGoal: x",
		"the-loop started, the-loop do-over":  "the-loop started, the-loop do-over",
		"the-loop stop the-loop stop, please": " , please",
		"nothing here":                        "nothing here",
	} {
		if got := v.Strip(in); got != want {
			t.Errorf("Strip(%q) = %q, want %q", in, got, want)
		}
	}
}
