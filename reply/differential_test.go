package reply

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/internal/corpus"
)

// TestDecideDepartsFromTheFloorOnlyWhereTheTableSaysTheFloorIsWrong reads
// the original's own 109 work items as replies: every review comment their
// Review comments sections record, and every paragraph of every Markdown
// file, each alone as a gate would read one reply. Where Decide and the
// original's Floor disagree, the disagreement must have one of the causes
// the phrasings table demonstrates; anything else fails.
func TestDecideDepartsFromTheFloorOnlyWhereTheTableSaysTheFloorIsWrong(t *testing.T) {
	src := corpus.Shared(t)
	docs := src.Markdown()
	demonstrated := map[string]bool{}
	for _, c := range phrasings {
		demonstrated[c.why] = true
	}
	for _, sample := range []struct {
		name   string
		bodies func(doc string) []string
	}{
		{"review comments", reviewComments},
		{"paragraphs", paragraphs},
	} {
		total, differ := 0, map[string]int{}
		for _, path := range slices.Sorted(maps.Keys(docs)) {
			for _, body := range sample.bodies(docs[path]) {
				total++
				cause := departure(body)
				if cause == agrees {
					continue
				}
				differ[cause]++
				if !demonstrated[cause] {
					t.Errorf("%s: %q: Decide %q, Floor %q, for a cause the table does not show: %s",
						path, clip(body), Decide([]Reply{{Body: body}}).Outcome, Floor([]string{body}), cause)
				}
			}
		}
		n := 0
		for _, k := range slices.Sorted(maps.Keys(differ)) {
			n += differ[k]
			t.Logf("%s: %d differ because %s", sample.name, differ[k], k)
		}
		t.Logf("%s: %d read, %d the same as the floor, %d not", sample.name, total, total-n, n)
	}
}

// departure is why Decide and Floor part on one reply, found by taking the
// floor to Decide one step at a time: first only the person's own words,
// then whole words and phrases, then whole-word hedges; what is left is
// the reading in clauses, and Decide's Unread says what it read there.
func departure(body string) string {
	ours := Decide([]Reply{{Body: body}})
	floor := Floor([]string{body})
	if ours.Outcome == floor {
		return agrees
	}
	own := Own(body)
	step := Floor([]string{own})
	if step != floor {
		return notTheirs
	}
	if next := wholeWords(own, func(text string) bool {
		return strings.Contains(text, "but") || strings.Contains(text, "nit")
	}); next != step {
		return inWord
	} else {
		step = next
	}
	if next := wholeWords(own, hedges); next != step {
		return hedgeInWord
	}
	causes := map[string]bool{}
	for _, m := range ours.Unread {
		switch m.Why {
		case Negated:
			causes[negated] = true
		case Asked:
			causes[asked] = true
		case Conditional:
			causes[conditional] = true
		case Mentioned:
			causes[inQuotes] = true
		}
	}
	if len(causes) == 1 {
		for c := range causes {
			return c
		}
	}
	return "unexplained: " + strings.Join(slices.Sorted(maps.Keys(causes)), ", ")
}

// wholeWords is Floor with phrases found as whole words in own text but
// not read in their clauses, and hedges found by hedged.
func wholeWords(own string, hedged func(string) bool) Outcome {
	changes, approves := false, false
	for _, m := range Mentions(own, decisionPhrases) {
		if isChange[m.Phrase] {
			changes = true
		} else {
			approves = true
		}
	}
	switch {
	case changes:
		return ChangesRequested
	case approves && hedged(strings.ToLower(own)):
		return ApprovedWithComments
	case approves:
		return Approved
	}
	return Undecided
}

// reviewComments are the bodies of the entries record-feedback appended
// under a "## Review comments" heading: each "### " entry's text, less
// its "**@login**" attribution lines.
func reviewComments(doc string) []string {
	_, section, ok := strings.Cut(doc, "\n## Review comments\n")
	if !ok {
		return nil
	}
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var out []string
	for _, entry := range strings.Split(section, "\n### ")[1:] {
		_, text, _ := strings.Cut(entry, "\n")
		var kept []string
		for _, l := range strings.Split(text, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), "**@") {
				kept = append(kept, l)
			}
		}
		if body := strings.TrimSpace(strings.Join(kept, "\n")); body != "" {
			out = append(out, body)
		}
	}
	return out
}

// paragraphs are doc's blank-line separated blocks, fenced blocks kept
// whole.
func paragraphs(doc string) []string {
	var out []string
	var cur []string
	fence := ""
	flush := func() {
		if p := strings.TrimSpace(strings.Join(cur, "\n")); p != "" {
			out = append(out, p)
		}
		cur = nil
	}
	for _, l := range strings.Split(doc, "\n") {
		switch {
		case fence != "":
			if closesFence(l, fence) {
				fence = ""
			}
		case opensFence(l) != "":
			fence = opensFence(l)
		case strings.TrimSpace(l) == "":
			flush()
			continue
		}
		cur = append(cur, l)
	}
	flush()
	return out
}

func clip(s string) string {
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}
