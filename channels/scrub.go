package channels

import (
	"cmp"
	"os"
	"slices"
	"strings"

	"github.com/the-loop/the-loop/internal/lazyregexp"
)

// What Scrub masks. A reply recorded on a work item is public wherever the
// issue is, and people paste what they should not into chat: a token, an
// environment dump. The masks are visible, so a reader of the record sees
// that something was taken out and what kind of thing it was.
const (
	maskEnv   = "<redacted:env>"
	maskToken = "<redacted:token>"
)

// sensitiveName marks an environment variable whose value is a credential
// by its name.
var sensitiveName = lazyregexp.New(`(?i)TOKEN|SECRET|KEY|PASSWORD|PASSWD|CREDENTIAL|AUTH`)

// minSecret is the shortest environment value masked: a shorter one would
// eat ordinary words.
const minSecret = 6

// tokenShaped is a run of 20 or more characters of a credential's alphabet
// holding a digit (long hyphenated words carry none, and survive), not
// inside a longer word or a path.
var tokenShaped = lazyregexp.New(`(^|[^\w/-])([A-Za-z0-9_-]{20,})`)

// knownToken is a credential its issuer's prefix names (GitHub's ghp_,
// gho_, ghu_, ghs_, ghr_ and github_pat_; Slack's xox?- and xapp-): masked
// wherever it stands, a URL's user or path included, where tokenShaped
// leaves a run alone. It is most often pasted in a clone URL.
var knownToken = lazyregexp.New(`(^|[^A-Za-z0-9_])((?:gh[pousr]_|github_pat_)[A-Za-z0-9_]{16,}|(?:xox[a-z]|xapp)-[A-Za-z0-9-]{10,})`)

// Scrub returns text with credentials masked: the value of every
// environment variable whose name says it holds one (environ is os.Environ
// when nil), every GitHub or Slack token, and every token-shaped run. It
// is applied to a reply before the ledger records it.
func Scrub(text string, environ []string) string {
	if environ == nil {
		environ = os.Environ()
	}
	var values []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if ok && len(value) >= minSecret && sensitiveName.MatchString(name) {
			values = append(values, value)
		}
	}
	// Longest first, so a value holding another is masked whole.
	slices.SortFunc(values, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	for _, v := range values {
		text = strings.ReplaceAll(text, v, maskEnv)
	}
	text = knownToken.ReplaceAllString(text, "${1}"+maskToken)
	return tokenShaped.ReplaceAllStringFunc(text, func(m string) string {
		sub := tokenShaped.FindStringSubmatch(m)
		lead, run := sub[1], sub[2]
		if !strings.ContainsAny(run, "0123456789") {
			return m
		}
		return lead + maskToken
	})
}
