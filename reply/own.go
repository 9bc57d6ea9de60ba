package reply

import "strings"

// Own returns the words body's author wrote now: body with quoted lines,
// fenced and indented code blocks, inline code spans, HTML comments and
// ~~struck-out~~ text blanked. A blanked line stays as an empty line and a
// blanked span as a space, so that what stood on either side of it never
// joins into one word or one sentence.
//
// Markdown is read the way a person sees it rendered, with the edges
// resolved towards "not theirs": an HTML comment or a fenced block left
// open runs to the end of the body, as GitHub renders it.
//
// Departure from the original (docs/compatibility.md#how-a-reply-is-read): quotes, code, HTML comments and struck-out text are not the person's words.
func Own(body string) string {
	if body == "" {
		return ""
	}
	body = strings.ReplaceAll(body, "\r\n", "\n")
	body = blankHTMLComments(body)
	body = blankBlocks(body)
	body = blankCodeSpans(body)
	return blankStruck(body)
}

// blankHTMLComments replaces every <!-- ... --> with a space.
func blankHTMLComments(s string) string {
	if !strings.Contains(s, "<!--") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "<!--")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteByte(' ')
		j := strings.Index(s[i+4:], "-->")
		if j < 0 {
			return b.String()
		}
		s = s[i+4+j+3:]
	}
}

// blankBlocks blanks the lines that are not the author's prose: quoted
// lines, and fenced and indented code blocks.
func blankBlocks(s string) string {
	lines := strings.Split(s, "\n")
	var (
		fence      string // the open fence's run of ` or ~, "" outside one
		prevBlank  = true
		inIndented bool
		inList     bool // the paragraph above is a list item: indentation continues it
	)
	for i, l := range lines {
		blank := strings.TrimSpace(l) == ""
		switch {
		case fence != "":
			if closesFence(l, fence) {
				fence = ""
			}
			lines[i] = ""
		case opensFence(l) != "":
			fence = opensFence(l)
			lines[i] = ""
		case isQuoted(l):
			lines[i] = ""
			inIndented = false
		case !blank && indentWidth(l) >= 4 && (inIndented || (prevBlank && !inList)):
			inIndented = true
			lines[i] = ""
		default:
			if !blank {
				inIndented = false
				if indentWidth(l) < 4 {
					inList = isListItem(l)
				}
			}
		}
		prevBlank = blank
	}
	return strings.Join(lines, "\n")
}

// indentWidth is how far l's first non-blank character stands in, a tab
// counting to the next multiple of four.
func indentWidth(l string) int {
	w := 0
	for _, r := range l {
		switch r {
		case ' ':
			w++
		case '\t':
			w += 4 - w%4
		default:
			return w
		}
	}
	return w
}

// isQuoted reports whether l is a block quote line: at most three spaces,
// then '>'.
func isQuoted(l string) bool {
	t := strings.TrimLeft(l, " ")
	return len(l)-len(t) <= 3 && strings.HasPrefix(t, ">")
}

// isListItem reports whether l opens a list item: "-", "*" or "+" then a
// space, or digits then "." or ")" then a space.
func isListItem(l string) bool {
	t := strings.TrimLeft(l, " ")
	if len(t) >= 2 && strings.ContainsRune("-*+", rune(t[0])) && (t[1] == ' ' || t[1] == '\t') {
		return true
	}
	n := 0
	for n < len(t) && t[n] >= '0' && t[n] <= '9' {
		n++
	}
	return n > 0 && n+1 < len(t) && (t[n] == '.' || t[n] == ')') && (t[n+1] == ' ' || t[n+1] == '\t')
}

// opensFence returns the fence run l opens a fenced code block with (three
// or more backticks or tildes after at most three spaces; a backtick
// fence's info string holds no backtick), or "".
func opensFence(l string) string {
	t := strings.TrimLeft(l, " ")
	if len(l)-len(t) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return ""
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 || (t[0] == '`' && strings.Contains(t[n:], "`")) {
		return ""
	}
	return t[:n]
}

// closesFence reports whether l closes a block fence opened: the same
// character, at least as many, after at most three spaces, and nothing but
// space after.
func closesFence(l, fence string) bool {
	t := strings.TrimLeft(l, " ")
	if len(l)-len(t) > 3 {
		return false
	}
	n := 0
	for n < len(t) && t[n] == fence[0] {
		n++
	}
	return n >= len(fence) && strings.TrimSpace(t[n:]) == ""
}

// blankCodeSpans replaces each inline code span with a space. A span opens
// with a run of backticks and closes at the next run of the same length in
// the same paragraph; a run that no such run closes is literal text, as
// CommonMark reads it.
func blankCodeSpans(s string) string {
	if !strings.Contains(s, "`") {
		return s
	}
	var b strings.Builder
	for s != "" {
		para, rest := s, ""
		if p := paragraphEnd(s); p >= 0 {
			para, rest = s[:p], s[p:]
		}
		b.WriteString(blankSpansIn(para))
		s = rest
	}
	return b.String()
}

// blankSpansIn blanks the code spans of one paragraph. Each run's closer
// is found from a table built in one pass from the end, so a paragraph of
// many unclosed runs costs its length, not its length squared.
func blankSpansIn(para string) string {
	type run struct{ at, n int }
	var runs []run
	for i := 0; i < len(para); {
		j := strings.IndexByte(para[i:], '`')
		if j < 0 {
			break
		}
		n := runOf(para[i+j:], '`')
		runs = append(runs, run{i + j, n})
		i += j + n
	}
	if len(runs) == 0 {
		return para
	}
	closer := make([]int, len(runs))
	seen := map[int]int{}
	for k := len(runs) - 1; k >= 0; k-- {
		closer[k] = -1
		if c, ok := seen[runs[k].n]; ok {
			closer[k] = c
		}
		seen[runs[k].n] = k
	}
	var b strings.Builder
	last := 0
	for k := 0; k < len(runs); k++ {
		c := closer[k]
		if c < 0 {
			continue
		}
		b.WriteString(para[last:runs[k].at])
		b.WriteByte(' ')
		last = runs[c].at + runs[c].n
		k = c
	}
	b.WriteString(para[last:])
	return b.String()
}

// paragraphEnd is where the first blank line after s's first line
// starts, or -1.
func paragraphEnd(s string) int {
	for i := 0; ; {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			return -1
		}
		k := i + j + 1
		line := s[k:]
		if e := strings.IndexByte(line, '\n'); e >= 0 {
			line = line[:e]
		}
		if strings.TrimSpace(line) == "" {
			return k
		}
		i = k
	}
}

func runOf(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// blankStruck replaces each ~~struck-out~~ span within a line with a space:
// what the author crossed out is what they no longer say.
func blankStruck(s string) string {
	if !strings.Contains(s, "~~") {
		return s
	}
	var b strings.Builder
	for line := range strings.Lines(s) {
		for {
			a := strings.Index(line, "~~")
			if a < 0 {
				break
			}
			z := strings.Index(line[a+2:], "~~")
			if z < 0 {
				break
			}
			b.WriteString(line[:a])
			b.WriteByte(' ')
			line = line[a+2+z+2:]
		}
		b.WriteString(line)
	}
	return b.String()
}
