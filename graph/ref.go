package graph

import (
	"fmt"
	"strconv"
	"strings"
)

// RefPrefix starts every work item ref this tool builds: github:OWNER/REPO#N.
const RefPrefix = "github:"

// ParseRef splits a work item ref, github:OWNER/REPO#N, into its owner,
// repository and issue (or pull request) number. It is RefFor's inverse
// and as strict: the provider prefix is required, both names must pass
// IsGitHubName and the number must be a positive decimal with no sign or
// leading zero. Anything else (a bare work item id, a URL, a ref with a
// path after the number) is an error saying what a ref looks like.
func ParseRef(ref string) (owner, repo string, number int, err error) {
	bad := func(why string) (string, string, int, error) {
		return "", "", 0, fmt.Errorf("work item ref %q: %s; want %sOWNER/REPO#NUMBER (pass --ref, or declare ticketing.github in the harness config and name the item issue-N)", ref, why, RefPrefix)
	}
	body, ok := strings.CutPrefix(ref, RefPrefix)
	if !ok {
		return bad("not a GitHub ref")
	}
	slug, num, ok := strings.Cut(body, "#")
	if !ok {
		return bad("no issue number")
	}
	owner, repo, ok = strings.Cut(slug, "/")
	if !ok || !IsGitHubName(owner) || !IsGitHubName(repo) {
		return bad("not an owner/repository pair")
	}
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 || strconv.Itoa(n) != num {
		return bad("the issue number is not a positive whole number")
	}
	return owner, repo, n, nil
}
