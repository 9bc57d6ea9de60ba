package builtins

import (
	"strings"
	"unicode"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/reply"
)

func init() { register("classify-adhoc-reply", classifyAdhocReply{}) }

// classifyAdhocReply is the ad-hoc loop's gate: more work, or done? It reads
// the same authorized comments a review gate does, with the opposite default:
// silence waits, a reply that declares completion is "done", and any other
// authorized reply is "more-work", because in this loop an unanswered
// instruction sitting at an open gate is the failure. Only the newest
// authorized comment decides, so a done-word earlier in the thread neither
// ends the item early nor makes it impossible to reopen.
//
// Data: outcome "done" | "more-work", comments [{author, body}] (the
// authorized comments read, oldest first).
type classifyAdhocReply struct{}

var (
	_ graph.Hook         = classifyAdhocReply{}
	_ graph.ParamChecker = classifyAdhocReply{}
)

const classifyAdhocReplyName = "classify-adhoc-reply"

func (classifyAdhocReply) CheckParams(params map[string]any) error {
	return withRules{}.verify(classifyAdhocReplyName, params)
}

func (classifyAdhocReply) Run(ctx *graph.Context) (graph.Result, error) {
	const name = classifyAdhocReplyName
	comments := authorizedComments(ctx)
	if len(comments) == 0 {
		return graph.Wait(name, waitingFor(ctx, "no authorized reply yet")), nil
	}
	outcome := graph.OutcomeMoreWork
	if declaresDone(comments[len(comments)-1].Body) {
		outcome = graph.OutcomeDone
	}
	return graph.Pass(name, map[string]any{"outcome": outcome, "comments": commentRecords(comments)}), nil
}

// adhocDonePhrases are the whole phrases that declare an ad-hoc task
// finished: unambiguous ones only. Gratitude ("thanks", "nice") is absent on
// purpose: reading it as a close would end an item its requester was still
// using.
var adhocDonePhrases = []string{
	"done", "all done", "we're done", "that's all", "thats all", "nothing else",
	"no more", "all set", "close it", "close this", "lgtm", "looks good",
	"ship it", "approved",
}

// adhocNegations turn a done-phrase that follows within the same sentence
// back into more work: "not done", "isn't approved yet", "nope, not lgtm".
var adhocNegations = []string{"not", "isn't", "isnt", "aren't", "arent", "nope", "no"}

// adhocNegationReach is how many characters may separate a negation from the
// done-phrase it negates; the gap may not cross a sentence end or a line.
const adhocNegationReach = 40

// declaresDone reports whether body declares the ad-hoc task finished: a
// done-phrase appears in the person's own words (reply.Own: not in a
// quote, code or an HTML comment) as a whole phrase (not inside a longer word: "undone",
// "abandoned") and no negation precedes one within the same sentence. Matching
// is case-insensitive.
func declaresDone(body string) bool {
	// Departure from the original (docs/compatibility.md#control-keywords): the ad-hoc loop's done words count in the person's own words only.
	text := []rune(reply.Own(body))
	for i := range text {
		text[i] = unicode.ToLower(text[i])
	}
	var phrases [][2]int // start and end of each whole done-phrase
	for _, p := range adhocDonePhrases {
		for _, at := range wholeOccurrences(text, []rune(p)) {
			phrases = append(phrases, [2]int{at, at + len([]rune(p))})
		}
	}
	if len(phrases) == 0 {
		return false
	}
	for _, n := range adhocNegations {
		for _, at := range wholeOccurrences(text, []rune(n)) {
			end := at + len([]rune(n))
			for _, ph := range phrases {
				if gap := ph[0] - end; gap >= 0 && gap <= adhocNegationReach && !strings.ContainsAny(string(text[end:ph[0]]), ".!?\n") {
					return false
				}
			}
		}
	}
	return true
}

// wholeOccurrences lists where needle occurs in text with no word character
// or hyphen directly before or after it.
func wholeOccurrences(text, needle []rune) []int {
	var at []int
	for i := 0; i+len(needle) <= len(text); i++ {
		if !runesEqualAt(text, needle, i) {
			continue
		}
		if i > 0 && isWordOrHyphen(text[i-1]) {
			continue
		}
		if j := i + len(needle); j < len(text) && isWordOrHyphen(text[j]) {
			continue
		}
		at = append(at, i)
	}
	return at
}

func runesEqualAt(text, needle []rune, i int) bool {
	for k, r := range needle {
		if text[i+k] != r {
			return false
		}
	}
	return true
}

// isWordOrHyphen is Python's [\w-] for one rune.
func isWordOrHyphen(r rune) bool {
	return r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsNumber(r)
}
