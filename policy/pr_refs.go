package policy

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/the-loop/the-loop/graph"
)

// A pull request's body links the issues it closes with GitHub's closing
// keywords ("Linking a pull request to an issue" in GitHub's docs): close,
// closes, closed, fix, fixes, fixed, resolve, resolves, resolved, in any
// case, with an optional colon, then #N, OWNER/REPO#N, GH-N or the issue's
// URL, as the original reads them. Each reference needs its own keyword,
// as on GitHub: "Fixes #1 and #2" links #1 only.
var closingRef = regexp.MustCompile(`(?i)(?:^|[^\w/#-])(` +
	`(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)(?::[ \t]*|[ \t]+)(?:` +
	`https?://[^\s/]+/` + ownerRe + `/` + nameRe + `/issues/([0-9]{1,9})` +
	`|(?:` + ownerRe + `/` + nameRe + `)?#([0-9]{1,9})` +
	`|GH-([0-9]{1,9})))\b`)

// GitHub's charset for an owner and a repository name, as wide as
// graph.ParseRepoName's, which judges what these find.
const (
	ownerRe = `([A-Za-z0-9][A-Za-z0-9_-]{0,38})`
	nameRe  = `([A-Za-z0-9._-]{1,100})`
)

// Bounds on what a body may cost: GitHub keeps at most 65,536 characters
// of it, and no pull request closes a hundred issues.
const (
	maxBodyBytes = 256 << 10
	maxRefs      = 100
)

// ClosingRef is one closing reference in a pull request's body.
type ClosingRef struct {
	// Repo is OWNER/REPO as written, "" for a bare #N (the pull request's
	// own repository).
	Repo string
	// Number is the issue number.
	Number int
	// Text is the reference as written, e.g. "Closes #31".
	Text string
}

// ClosingRefs are the closing references in body, in order of first
// appearance, each issue once. Text inside fenced code blocks and inline
// code spans is not read: GitHub does not link it either. Only the first
// maxBodyBytes of body and the first maxRefs references count; truncated
// reports whether any were left unread.
//
// Departure from the original (docs/compatibility.md#the-pull-request-gate-and-adoption): references in code are not read, Fixes:#12 is one, and only the first 100 count.
func ClosingRefs(body string) (refs []ClosingRef, truncated bool) {
	if len(body) > maxBodyBytes {
		body, truncated = body[:maxBodyBytes], true
	}
	seen := map[string]bool{}
	for _, line := range proseLines(body) {
		for _, m := range closingRef.FindAllStringSubmatch(line, -1) {
			// m[2:5] is a URL's owner, name and number; m[5:8] a
			// reference's; m[8] a GH- number.
			repo, num := "", m[8]
			switch {
			case m[4] != "":
				repo, num = m[2]+"/"+m[3], m[4]
			case m[7] != "":
				num = m[7]
				if m[5] != "" {
					repo = m[5] + "/" + m[6]
				}
			}
			n, err := strconv.Atoi(num)
			if err != nil || n <= 0 {
				continue
			}
			if _, err := graph.ParseRepoName(repo); repo != "" && err != nil {
				// The pattern finds a reference in prose; the one reader
				// of OWNER/NAME judges it ("acme/..#3" names nothing).
				continue
			}
			key := strings.ToLower(repo) + "#" + strconv.Itoa(n)
			if seen[key] {
				continue
			}
			if len(refs) == maxRefs {
				return refs, true
			}
			seen[key] = true
			refs = append(refs, ClosingRef{Repo: repo, Number: n, Text: m[1]})
		}
	}
	return refs, truncated
}

// proseLines are body's lines outside fenced code blocks, with inline
// code spans blanked.
func proseLines(body string) []string {
	var out []string
	fence := ""
	for _, line := range strings.Split(body, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if f := fenceOf(trimmed); f != "" {
			fence = f
			continue
		}
		out = append(out, blankCode(line))
	}
	return out
}

// fenceOf is the fence a line opens (``` or ~~~, three or more), "".
func fenceOf(line string) string {
	for _, c := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// blankCode replaces each inline code span of line with a space.
func blankCode(line string) string {
	if !strings.Contains(line, "`") {
		return line
	}
	var b strings.Builder
	parts := strings.Split(line, "`")
	in := false
	for i, part := range parts {
		// An unmatched backtick is a backtick, not a span.
		if !in || (i == len(parts)-1 && len(parts)%2 == 0) {
			b.WriteString(part)
		} else {
			b.WriteByte(' ')
		}
		in = !in
	}
	return b.String()
}
