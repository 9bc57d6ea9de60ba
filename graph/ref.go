package graph

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// RefPrefix starts every work item ref this tool builds: github:OWNER/REPO#N.
const RefPrefix = "github:"

// maxRefNumber bounds an issue number: GitHub's are 32-bit.
const maxRefNumber = 1<<31 - 1

// RefError is a string that is not a work item ref.
type RefError struct {
	Ref string
	Msg string
}

func (e *RefError) Error() string {
	return fmt.Sprintf("work item ref %q: %s; want %sOWNER/REPO#N, e.g. %sacme/shop#12", e.Ref, e.Msg, RefPrefix, RefPrefix)
}

// ParseRef splits a work item ref, github:OWNER/REPO#N, into its owner,
// repository and issue (or pull request) number. It is RefFor's inverse
// and as strict: no space around or inside it, OWNER/REPO is what
// ParseRepoName takes, the number is a positive decimal with no sign or leading
// zero that fits GitHub's 32 bits. A GitHub Enterprise host (the original
// tool's github:HOST/OWNER/REPO#N) is refused: nothing here reaches one.
// Anything else is a *RefError saying what a ref looks like.
func ParseRef(ref string) (owner, repo string, number int, err error) {
	bad := func(msg string) (string, string, int, error) { return "", "", 0, &RefError{Ref: ref, Msg: msg} }
	rest, ok := strings.CutPrefix(ref, RefPrefix)
	if !ok {
		return bad(`it does not start with "` + RefPrefix + `"`)
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
	name, err := ParseRepoName(path)
	if err != nil {
		var e *RepoNameError
		if errors.As(err, &e) && !e.Shape {
			return bad(fmt.Sprintf("%q is not a GitHub owner or repository name (unusable repository segment: an owner is letters, digits, '-' and '_', at most 39, with no \"__\" and no '_' at its end; a name letters, digits, '.', '_' and '-', at most 100, not \".\" or \"..\")", e.Segment))
		}
		return bad("want OWNER/REPO before the #")
	}
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 || n > maxRefNumber || strconv.Itoa(n) != num {
		return bad(fmt.Sprintf("issue number %q is not a positive whole number", num))
	}
	return name.Owner, name.Name, n, nil
}
