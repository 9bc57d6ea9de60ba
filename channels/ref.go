package channels

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/the-loop/the-loop/graph"
)

// Ref names a work item on GitHub, as the original tool and the event log
// write it: github:OWNER/REPO#N. The zero value names nothing.
type Ref struct {
	Owner  string
	Repo   string
	Number int
}

// maxNumber bounds an issue number: GitHub's are 32-bit.
const maxNumber = 1<<31 - 1

// RefError is a string that is not a work item ref.
type RefError struct {
	Ref string
	Msg string
}

func (e *RefError) Error() string {
	return fmt.Sprintf("work item ref %q: %s; want github:OWNER/REPO#N, e.g. github:acme/shop#12", e.Ref, e.Msg)
}

// ParseRef reads github:OWNER/REPO#N strictly: no space around or inside
// it, OWNER and REPO in GitHub's charset (graph.IsGitHubName), N a positive
// decimal without leading zeros. A GitHub Enterprise host (the original's
// github:HOST/OWNER/REPO#N) is refused: nothing here can reach one.
// ParseRef(s).String() is s for every s it accepts.
func ParseRef(s string) (Ref, error) {
	bad := func(msg string) (Ref, error) { return Ref{}, &RefError{Ref: s, Msg: msg} }
	rest, ok := strings.CutPrefix(s, "github:")
	if !ok {
		return bad(`it does not start with "github:"`)
	}
	path, num, ok := strings.Cut(rest, "#")
	if !ok {
		return bad(`no "#" before the issue number`)
	}
	parts := strings.Split(path, "/")
	switch {
	case len(parts) == 3:
		return bad("a host before OWNER/REPO (GitHub Enterprise) is not supported")
	case len(parts) != 2:
		return bad("want OWNER/REPO before the #")
	}
	for _, p := range parts {
		if !graph.IsGitHubName(p) {
			return bad(fmt.Sprintf("%q is not a GitHub owner or repository name (letters, digits, '.', '_', '-', not starting with a punctuation mark)", p))
		}
	}
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 || n > maxNumber || num[0] == '0' || strings.ContainsAny(num, "+-") {
		return bad(fmt.Sprintf("issue number %q is not a positive whole number", num))
	}
	return Ref{Owner: parts[0], Repo: parts[1], Number: n}, nil
}

// String is the ref as written: github:OWNER/REPO#N.
func (r Ref) String() string {
	if r.IsZero() {
		return ""
	}
	return fmt.Sprintf("github:%s/%s#%d", r.Owner, r.Repo, r.Number)
}

// IsZero reports whether r names nothing.
func (r Ref) IsZero() bool { return r == Ref{} }

// Repository is OWNER/REPO.
func (r Ref) Repository() string { return r.Owner + "/" + r.Repo }

// Key identifies the work item whatever case its owner and repository are
// written in: GitHub's names are case-insensitive, and an operator, a
// webhook and a closing keyword may each spell one differently.
func (r Ref) Key() string { return strings.ToLower(r.String()) }

// SameRepository reports whether r and o are in the same repository.
func (r Ref) SameRepository(o Ref) bool {
	return strings.EqualFold(r.Repository(), o.Repository())
}

// ItemID is the spec folder the work item lives in, issue-N: the
// convention by which the ingress and the graph name the same work item.
func (r Ref) ItemID() string { return "issue-" + strconv.Itoa(r.Number) }
