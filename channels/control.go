package channels

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/the-loop/the-loop/policy"
	"github.com/the-loop/the-loop/reply"
)

// The control commands an authorized person writes in a comment to steer
// the-loop itself rather than to answer a gate, in the order the original
// tool documents them (and reports several in).
const (
	CommandStart      = "start"      // arm the work item and enter its loop
	CommandStop       = "stop"       // disarm it
	CommandPause      = "pause"      // hold it; resume undoes a pause only
	CommandResume     = "resume"     // release a pause
	CommandExecute    = "execute"    // answer phase-selection: handed to the gate
	CommandContribute = "contribute" // start, on the contribution loop
	CommandCleanup    = "cleanup"    // the work is over: disarm it for good
	CommandDo         = "do"         // start, on the ad-hoc loop
)

// Commands lists every control command in that order.
var Commands = []string{CommandStart, CommandStop, CommandPause, CommandResume, CommandExecute, CommandContribute, CommandCleanup, CommandDo}

// Arming reports whether command asks for the work item to be running:
// start, resume, contribute and do. The others (and "") disarm or do not
// touch it.
func Arming(command string) bool {
	switch command {
	case CommandStart, CommandResume, CommandContribute, CommandDo:
		return true
	}
	return false
}

// Vocabulary is the control keywords in force: one per command, those the
// operator set to "" left out. The zero value recognises nothing. It is
// immutable and safe for concurrent use.
type Vocabulary struct {
	words []keyword
}

type keyword struct {
	command string
	word    string
	re      *regexp.Regexp // the keyword, case-insensitively
}

// NewVocabulary builds the vocabulary keywordOf declares: keywordOf(cmd) is
// the keyword of each of Commands, "" to leave that command out.
func NewVocabulary(keywordOf func(command string) string) Vocabulary {
	var v Vocabulary
	for _, c := range Commands {
		if k := strings.TrimSpace(keywordOf(c)); k != "" {
			v.words = append(v.words, keyword{command: c, word: k, re: regexp.MustCompile("(?i)" + regexp.QuoteMeta(k))})
		}
	}
	return v
}

// VocabularyOf is the CLI config's routing.control: its keywords, or no
// vocabulary at all when routing.control.enabled is false.
func VocabularyOf(cli *policy.CLIConfig) Vocabulary {
	if !cli.ControlEnabled() {
		return Vocabulary{}
	}
	return NewVocabulary(cli.ControlKeyword)
}

// Recognises reports whether v has a keyword for command.
func (v Vocabulary) Recognises(command string) bool {
	return slices.ContainsFunc(v.words, func(w keyword) bool { return w.command == command })
}

// Control is what a comment asks of the-loop itself: one command, two or
// more different ones (Ambiguous, which must be acted on not at all), or
// nothing.
type Control struct {
	// Command is one of Commands, "" when there is none or it is ambiguous.
	Command string
	// Ambiguous is set when the body carries different commands: a half
	// "stop" must never be read as a "start".
	Ambiguous bool
	// Matched lists every command found, in the order of Commands.
	Matched []string
}

// Parse finds the control commands in a comment body. A keyword counts as a
// whole token, anywhere in the person's own words, in any case: neither
// side of it may touch a letter, digit, '_', '-' or ':' (the characters
// keywords are made of), so "the-loop start." at the end of a sentence
// counts and "the-loop started", "the-loop do-over" and "xthe-loop start"
// do not. The same command repeated is that command. Only the person's
// own words are read (reply.Own): a keyword in a quoted line, a fenced
// block, an inline code span or an HTML comment (where the-loop keeps its
// records' envelopes) is shown, not said, and commands nothing.
//
// Departure from the original (docs/compatibility.md#control-keywords): a keyword quoted or shown in code commands nothing.
func (v Vocabulary) Parse(body string) Control {
	var c Control
	if len(v.words) == 0 {
		return c
	}
	body = reply.Own(body)
	for _, w := range v.words {
		if containsToken(body, w.re) {
			c.Matched = append(c.Matched, w.command)
		}
	}
	switch len(c.Matched) {
	case 0:
	case 1:
		c.Command = c.Matched[0]
	default:
		c.Ambiguous = true
	}
	return c
}

// containsToken reports whether re matches somewhere in body with a
// boundary on both sides. Every occurrence is tried, overlapping ones
// included, since the first may be glued to a word and a later one not.
func containsToken(body string, re *regexp.Regexp) bool {
	for from := 0; from < len(body); {
		loc := re.FindStringIndex(body[from:])
		if loc == nil {
			return false
		}
		i, j := from+loc[0], from+loc[1]
		before, _ := utf8.DecodeLastRuneInString(body[:i])
		after, _ := utf8.DecodeRuneInString(body[j:])
		if (i == 0 || !joins(before)) && (j == len(body) || !joins(after)) {
			return true
		}
		_, size := utf8.DecodeRuneInString(body[i:])
		from = i + max(size, 1)
	}
	return false
}

// joins reports whether r, beside a keyword, makes it part of a longer
// token: a word character (as Python's \w reads one) or '-' or ':'.
func joins(r rune) bool {
	return r == '_' || r == '-' || r == ':' || unicode.IsLetter(r) || unicode.IsNumber(r)
}

// defangMark is what Defang puts inside a keyword to break it, visibly: a
// reader still sees which command was meant.
const defangMark = "‹defanged›"

// Defang returns text with every control keyword of v that Parse would
// find broken, so that nothing reading text afterwards finds a command in
// it: the ledger's record of a reply the pipeline delivered itself must
// not be executed by the ledger's ingress when it is read back. A keyword
// with a space gets the mark beside the space; a one-word keyword after its
// first letter. Longer keywords go first, so one embedding another is
// broken whole.
func (v Vocabulary) Defang(text string) string {
	words := slices.Clone(v.words)
	slices.SortStableFunc(words, func(a, b keyword) int { return len(b.word) - len(a.word) })
	for _, w := range words {
		text = replaceTokens(text, w.re, func(m string) string {
			if i := strings.IndexByte(m, ' '); i >= 0 {
				return m[:i] + " " + defangMark + m[i:]
			}
			_, size := utf8.DecodeRuneInString(m)
			return m[:size] + defangMark + m[size:]
		})
	}
	return text
}

// Strip returns text with every control keyword of v that Parse would
// find taken out: what a reader of the comment has beside the commands it
// carries.
func (v Vocabulary) Strip(text string) string {
	words := slices.Clone(v.words)
	slices.SortStableFunc(words, func(a, b keyword) int { return len(b.word) - len(a.word) })
	for _, w := range words {
		text = replaceTokens(text, w.re, func(string) string { return "" })
	}
	return text
}

// replaceTokens replaces each match of re in body that stands as a whole
// token (as containsToken reads one) with what with returns for it.
func replaceTokens(body string, re *regexp.Regexp, with func(string) string) string {
	var out strings.Builder
	last := 0
	for from := 0; from < len(body); {
		loc := re.FindStringIndex(body[from:])
		if loc == nil {
			break
		}
		i, j := from+loc[0], from+loc[1]
		before, _ := utf8.DecodeLastRuneInString(body[:i])
		after, _ := utf8.DecodeRuneInString(body[j:])
		if (i == 0 || !joins(before)) && (j == len(body) || !joins(after)) && j > i {
			out.WriteString(body[last:i])
			out.WriteString(with(body[i:j]))
			last, from = j, j
			continue
		}
		_, size := utf8.DecodeRuneInString(body[i:])
		from = i + max(size, 1)
	}
	out.WriteString(body[last:])
	return out.String()
}
