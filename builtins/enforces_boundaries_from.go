package builtins

import (
	"strings"
	"unicode/utf8"

	"github.com/the-loop/the-loop/graph"
)

const enforcesBoundariesName = "enforces-boundaries-from"

func init() { register(enforcesBoundariesName, enforcesBoundaries{}) }

// enforcesBoundaries is the enforces-boundaries-from hook: every trust
// boundary raised upstream must be answered downstream.
//
// with.upstream names the upstream artifact (alternatives a|b allowed; every
// present name is read, so a marker raised in either must be answered), and
// with.markers the phrases to follow, matched case-insensitively in the
// documents' bodies. A marker found upstream but not in the node's own
// produced artifacts blocks. A declared downstream artifact that is missing
// answers nothing, so it blocks too. With no upstream on disk, or a node that
// produces nothing, the hook skips.
type enforcesBoundaries struct{}

var (
	_ graph.Hook         = enforcesBoundaries{}
	_ graph.ParamChecker = enforcesBoundaries{}
)

var enforcesBoundariesParams = hookParams{
	hook: enforcesBoundariesName,
	rules: map[string]paramRule{
		"upstream": {want: "an artifact name (alternatives separated by |)", check: ruleArtifactRef},
		"markers":  {want: "a list of marker phrases", check: ruleStringList},
	},
}

func (enforcesBoundaries) CheckParams(params map[string]any) error {
	return enforcesBoundariesParams.check(params)
}

func (enforcesBoundaries) Run(ctx *graph.Context) (graph.Result, error) {
	upstream := ctx.Params["upstream"]
	if !pythonTruthy(upstream) {
		return graph.Skip(enforcesBoundariesName, "no upstream artifact declared"), nil
	}
	var ups []string
	for _, slot := range resolveSlots(ctx, slotEntries(upstream)) {
		ups = append(ups, slot.Present...)
	}
	// Gate on what the node declares, read what is present: a declared but
	// missing downstream leaves nothing to answer with, and blocks.
	slots := resolveSlots(ctx, nodeProduces(ctx))
	var downs []string
	for _, slot := range slots {
		downs = append(downs, slot.Present...)
	}
	if len(ups) == 0 || len(slots) == 0 {
		return graph.Skip(enforcesBoundariesName, "upstream or downstream artifact absent"), nil
	}

	upBody, failed := joinedBodies(ctx, ups)
	downBody, failedDown := joinedBodies(ctx, downs)
	if failed = append(failed, failedDown...); len(failed) > 0 {
		return graph.Block(enforcesBoundariesName, failed...), nil
	}

	where := ctx.WorkItem.Dir
	if len(downs) > 0 {
		where = downs[0]
	} else if len(slots[0].Candidates) > 0 {
		where = slots[0].Candidates[0]
	}
	var missing []graph.Message
	for _, marker := range sectionParam(ctx.Params["markers"]) {
		if upBody.contains(marker) && !downBody.contains(marker) {
			// No line: the finding is about what the downstream artifact
			// lacks; the line that names the marker is in another file.
			missing = append(missing, findingAt(where, "boundary named upstream is unanswered here: %s", marker))
		}
	}
	if len(missing) > 0 {
		return graph.Block(enforcesBoundariesName, missing...), nil
	}
	return graph.Pass(enforcesBoundariesName, nil), nil
}

// joinedBodies is the bodies (front matter removed) of paths, joined by
// newlines, to search without regard to case, and a finding for each file
// that could not be read.
func joinedBodies(ctx *graph.Context, paths []string) (*foldedText, []graph.Message) {
	var bodies []string
	var failed []graph.Message
	for _, p := range paths {
		_, body, err := ctx.Files.FrontMatter(p)
		if err != nil {
			failed = append(failed, findingAt(p, "artifact could not be read: %v", err))
			continue
		}
		bodies = append(bodies, body)
	}
	return foldText(strings.Join(bodies, "\n")), failed
}

// foldedText is a text to search for phrases without regard to case: it
// answers as strings.Contains(strings.ToLower(text),
// strings.ToLower(phrase)) does, the reference implementation's
// `phrase.lower() in text.lower()` as Go lowers.
//
// Lowering a design document character by character, on every check, was
// a tenth of the work. An ASCII phrase, which every marker a shipped loop
// declares is, is looked for in the text as it is, comparing ASCII letters
// without regard to case: lowering puts ASCII into a text only where ASCII
// was, but for two characters (U+0130 and U+212A, which lower to "i" and
// "k"), and a text holding either is lowered in full instead.
type foldedText struct {
	text  string
	ascii bool   // ASCII phrases can be looked for in text as it is
	full  string // lowerText(text), once a phrase needs it
	done  bool   // full is set
}

// asciiFromElsewhere are the characters outside ASCII that lower into it.
var asciiFromElsewhere = []string{"\u0130", "\u212a"}

// foldText is text ready to search. Broken UTF-8 changes nothing on the
// ASCII path: an ASCII byte decodes as itself wherever it stands, and
// strings.ToLower turns only the bytes that do not decode into U+FFFD,
// which is not ASCII either.
func foldText(text string) *foldedText {
	f := &foldedText{text: text, ascii: true}
	for _, s := range asciiFromElsewhere {
		if strings.Contains(text, s) {
			f.ascii = false
		}
	}
	return f
}

// contains reports whether the text holds phrase, without regard to case.
func (f *foldedText) contains(phrase string) bool {
	if f.ascii && isASCII(phrase) {
		return containsFoldASCII(f.text, strings.ToLower(phrase))
	}
	if !f.done {
		f.full, f.done = lowerText(f.text), true
	}
	return strings.Contains(f.full, strings.ToLower(phrase))
}

// containsFoldASCII reports whether text holds phrase, an ASCII phrase in
// lower case, with text's ASCII letters compared in either case. A byte
// of a character outside ASCII matches no byte of phrase.
//
// It looks for the phrase's rarest letter, in either case, and compares
// the phrase around each place it stands: in prose a phrase's first letter
// is often everywhere (the "t" of "trust boundary").
func containsFoldASCII(text, phrase string) bool {
	if phrase == "" {
		return true
	}
	if len(phrase) > len(text) {
		return false
	}
	k := rarestLetter(phrase)
	lower, upper := phrase[k], phrase[k]
	if 'a' <= lower && lower <= 'z' {
		upper = lower - ('a' - 'A')
	}
	// The anchor stands at k in a match, which starts at most at last.
	last := len(text) - len(phrase)
	window := text[:last+k+1]
	// The next place each case of the anchor stands, at or after i: -2
	// before it is looked for, -1 when there is none.
	nextLower, nextUpper := -2, -2
	for i := k; i < len(window); {
		if nextLower != -1 && nextLower < i {
			nextLower = indexFrom(window, lower, i)
		}
		if nextUpper != -1 && nextUpper < i {
			nextUpper = indexFrom(window, upper, i)
		}
		j := nextLower
		if j < 0 || nextUpper >= 0 && nextUpper < j {
			j = nextUpper
		}
		if j < 0 {
			return false
		}
		if equalFoldASCII(text[j-k:j-k+len(phrase)], phrase) {
			return true
		}
		i = j + 1
	}
	return false
}

// letterRarity ranks the lower-case letters from the most to the least
// common in English prose.
const letterRarity = "etaoinshrdlcumwfgypbvkjxqz"

// rarestLetter is the index in phrase of its least common letter, or 0
// when it has none.
func rarestLetter(phrase string) int {
	at, rank := 0, -1
	for i := 0; i < len(phrase); i++ {
		if r := strings.IndexByte(letterRarity, phrase[i]); r > rank {
			at, rank = i, r
		}
	}
	return at
}

// indexFrom is the index of the first c in s at or after from, or -1.
func indexFrom(s string, c byte, from int) int {
	if j := strings.IndexByte(s[from:], c); j >= 0 {
		return from + j
	}
	return -1
}

// equalFoldASCII reports whether s, as long as lower, is lower with its
// ASCII capitals lowered.
func equalFoldASCII(s, lower string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
