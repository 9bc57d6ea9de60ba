package reply

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Why says how a phrase found in a reply was read.
type Why string

const (
	// Decides: the phrase says what it says.
	Decides Why = ""
	// Negated: a negation stands before it in its clause ("not approved").
	Negated Why = "negated"
	// Asked: its sentence is a question ("approved?").
	Asked Why = "a question"
	// Conditional: its sentence is a condition ("approved once ...").
	Conditional Why = "conditional"
	// Mentioned: it stands inside double quotes, a word talked about.
	Mentioned Why = "in quotes"
)

// Mention is one phrase of a list found in a reply's own words.
type Mention struct {
	// Phrase is the phrase as listed ("looks good").
	Phrase string
	// Why is how it was read; Decides when it counts.
	Why Why
	// Clause is the clause it was found in, as written, spaces collapsed.
	Clause string
}

// Mentions finds each of phrases (lower case, words separated by single
// spaces) in body's own words ([Own]), in the order they stand, each as a
// whole word or run of words, and reads each in its clause.
func Mentions(body string, phrases []string) []Mention {
	lists := make([][]string, len(phrases))
	for i, p := range phrases {
		lists[i] = strings.Fields(p)
	}
	var out []Mention
	for _, s := range sentences(Own(body)) {
		for _, c := range s.clauses {
			for i := 0; i < len(c.words); i++ {
				for k, p := range lists {
					if !c.hasAt(i, p) {
						continue
					}
					out = append(out, Mention{Phrase: phrases[k], Why: s.read(c, i), Clause: c.text()})
				}
			}
		}
	}
	return out
}

// word is one token of a clause: lower case, with whether it stood inside
// double quotes.
type word struct {
	text   string
	quoted bool
	raw    string
}

// clause is one clause of a sentence: its words, and whether a condition
// word stands in it and whether it opens it.
type clause struct {
	words    []word
	cond     bool
	leadCond bool
}

func (c clause) hasAt(i int, phrase []string) bool {
	if len(phrase) == 0 || i+len(phrase) > len(c.words) {
		return false
	}
	for k, w := range phrase {
		if c.words[i+k].text != w {
			return false
		}
	}
	return true
}

func (c clause) text() string {
	raws := make([]string, len(c.words))
	for i, w := range c.words {
		raws[i] = w.raw
	}
	return strings.Join(raws, " ")
}

type sentence struct {
	clauses  []clause
	question bool
}

// conditional reports whether c, a clause of s, is conditioned: a
// condition word stands in it ("approved once CI passes"), or opens
// another clause of the sentence ("if CI passes, approved"; "approved,
// assuming CI passes"). A condition word inside another clause conditions
// that clause only ("rejected, and worth writing down once").
func (s sentence) conditional(c clause) bool {
	if c.cond {
		return true
	}
	for _, o := range s.clauses {
		if o.leadCond {
			return true
		}
	}
	return false
}

// read is how the phrase at word i of c, a clause of s, is read.
func (s sentence) read(c clause, i int) Why {
	switch {
	case c.words[i].quoted:
		return Mentioned
	case negatedAt(c, i):
		return Negated
	case s.question:
		return Asked
	case s.conditional(c):
		return Conditional
	}
	return Decides
}

// negatedAt reports whether a negation stands before word i in c: a
// negating word anywhere before it, or "no" right before it.
func negatedAt(c clause, i int) bool {
	for k := 0; k < i; k++ {
		w := c.words[k].text
		if negations[w] || strings.HasSuffix(w, "n't") || (w == "no" && c.words[k+1].text == "longer") {
			return true
		}
	}
	return i > 0 && c.words[i-1].text == "no"
}

// negations are the words that negate what follows them in a clause;
// every word ending in "n't" does too, and "no" right before a phrase.
var negations = set("not", "never", "without", "nor", "cannot", "dont", "doesnt", "didnt", "isnt", "arent",
	"wasnt", "werent", "wont", "cant", "havent", "hasnt", "hadnt", "shouldnt", "wouldnt", "couldnt", "aint")

// conditions make a sentence a condition rather than a statement.
var conditions = set("if", "once", "when", "whenever", "unless", "until", "assuming", "provided")

// eachWord calls f with each word of text, as the lists spell it.
func eachWord(text string, f func(w string)) {
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isWordRune(r) {
			i += size
			continue
		}
		j := wordEnd(text, i)
		f(normalWord(text[i:j]))
		i = j
	}
}

// joiners cut a sentence into clauses, as a comma does.
var joiners = set("and", "but", "however", "although", "though", "so")

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// sentences cuts text into sentences at '.', '!', '?', ';' and line ends,
// and each sentence into clauses at ',', ':', brackets, dashes and the
// joining words. A '.' inside a word ("v1.2", "e.g") does not end a
// sentence.
func sentences(text string) []sentence {
	var (
		out    []sentence
		cur    sentence
		cl     clause
		quoted bool
	)
	endClause := func() {
		if len(cl.words) > 0 {
			cur.clauses = append(cur.clauses, cl)
		}
		cl = clause{}
	}
	endSentence := func() {
		endClause()
		if len(cur.clauses) > 0 {
			out = append(out, cur)
		}
		cur = sentence{}
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if isWordRune(r) {
			j := wordEnd(text, i)
			raw := text[i:j]
			w := normalWord(raw)
			switch {
			case joiners[w]:
				endClause()
			default:
				if conditions[w] {
					cl.cond = true
					cl.leadCond = cl.leadCond || len(cl.words) == 0
				}
				cl.words = append(cl.words, word{text: w, quoted: quoted, raw: raw})
			}
			i = j
			continue
		}
		switch r {
		case '?':
			cur.question = true
			endSentence()
		case '.', '!', ';':
			endSentence()
		case '\n':
			endSentence()
			quoted = false
		case ',', ':', '(', ')', '[', ']', '—', '–':
			endClause()
		case '-':
			if i > 0 && text[i-1] == ' ' {
				endClause() // a dash standing alone between words
			}
		case '"', '“', '”':
			quoted = !quoted
		}
		i += size
	}
	endSentence()
	return out
}

// isWordRune reports whether r can be part of a word.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r)
}

// wordEnd is where the word starting at i ends: letters and digits, joined
// by an apostrophe, a hyphen or a dot with a letter or digit on both sides
// ("don't", "dis-approved", "v1.2").
func wordEnd(text string, i int) int {
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if isWordRune(r) {
			i += size
			continue
		}
		if r == '\'' || r == '’' || r == '-' || r == '.' {
			if next, _ := utf8.DecodeRuneInString(text[i+size:]); i+size < len(text) && isWordRune(next) {
				i += size
				continue
			}
		}
		return i
	}
	return i
}

// normalWord is w as the lists spell it: lower case, a curly apostrophe
// straight, and an apostrophe-less contraction ("dont") kept as written.
func normalWord(w string) string {
	return strings.ReplaceAll(strings.ToLower(w), "’", "'")
}
