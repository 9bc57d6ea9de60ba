package graph

import (
	"fmt"
	"strings"
)

// A repository's OWNER/NAME reaches the-loop from places it does not
// control: an operator's --pr-repo, a webhook payload's full_name, a pull
// request body's "Closes acme/app#3", an execution log's repos: list, a
// git remote. It becomes a directory name (pr-loops/OWNER__NAME), a URL
// path and a ref, so every one of those goes through ParseRepoName, and a
// name it refuses is refused, never rewritten: a name quietly sanitised
// into a valid one would file one repository's state under another's.

// Bounds GitHub puts on the two names.
const (
	MaxOwnerLen    = 39
	MaxRepoNameLen = 100
)

// RepoName is a GitHub repository's owner and name, as ParseRepoName
// accepts them. The zero value is no repository.
type RepoName struct {
	Owner string
	Name  string
}

// String is OWNER/NAME; "" for the zero value.
func (r RepoName) String() string {
	if r == (RepoName{}) {
		return ""
	}
	return r.Owner + "/" + r.Name
}

// StateKey is the directory an inner loop of a pull request in r keeps
// its state under, below pr-loops/: OWNER__NAME, as the original names it.
// It names one repository only: an owner holds no "__" and does not end
// in "_" (IsOwnerName), so the key's first "__" is where the owner ends,
// and a_/b and a/_b, which the original files under one key, cannot both
// be read. A name is one path segment, never "." or "..".
func (r RepoName) StateKey() string { return r.Owner + "__" + r.Name }

// RepoNameError is a string that is not OWNER/NAME: either one segment of
// it is unusable (Segment, which may be ""), or, when Shape is set, the
// whole is not two segments.
type RepoNameError struct {
	Input   string
	Segment string
	Shape   bool
	Msg     string
}

func (e *RepoNameError) Error() string {
	const want = "want OWNER/NAME, such as acme/shop: an owner of letters, digits, '-' and '_' (at most 39, starting with a letter or digit, no \"__\", not ending in '_'), " +
		"a name of letters, digits, '.', '_' and '-' (at most 100, not starting with '-', not \".\" or \"..\")"
	if e.Shape {
		return fmt.Sprintf("repository %q: %s; %s", e.Input, e.Msg, want)
	}
	msg := fmt.Sprintf("unusable repository segment %q in %q", e.Segment, e.Input)
	if e.Msg != "" {
		msg += " (" + e.Msg + ")"
	}
	return msg + "; " + want
}

// ParseRepoName reads OWNER/NAME, strictly, and is the one reader of it:
// exactly one slash; nothing around it (no space, no scheme, no host, no
// ".git"); an owner that IsOwnerName accepts and a name that IsRepoName
// does. Anything else is a *RepoNameError naming the segment refused in
// the original's words ("unusable repository segment"). Case is kept:
// GitHub's names are case-insensitive, and a caller comparing two says so.
//
// Departure from the original (docs/compatibility.md#repository-names-one-reader-ownername-only): exactly OWNER/NAME as GitHub spells them; no host segment, no .git, no trimming.
func ParseRepoName(s string) (RepoName, error) {
	segment := func(seg, msg string) (RepoName, error) {
		return RepoName{}, &RepoNameError{Input: s, Segment: seg, Msg: msg}
	}
	shape := func(input, msg string) (RepoName, error) {
		return RepoName{}, &RepoNameError{Input: input, Shape: true, Msg: msg}
	}
	switch {
	case s == "":
		return shape(s, "empty")
	case len(s) > MaxOwnerLen+1+MaxRepoNameLen:
		// Said before the string is split, and without quoting it whole.
		return shape(Cut(s, 60), fmt.Sprintf("%d bytes, longer than any", len(s)))
	}
	parts := strings.Split(s, "/")
	switch {
	case len(parts) == 1:
		return shape(s, `no "/" between owner and name`)
	case len(parts) > 2:
		for _, p := range parts {
			if !IsRepoName(p) { // "", "." and ".." among them
				return segment(p, "")
			}
		}
		return shape(s, fmt.Sprintf("%d segments; a host before OWNER/NAME (GitHub Enterprise's) or a path after it is not taken", len(parts)))
	}
	owner, name := parts[0], parts[1]
	if !IsOwnerName(owner) {
		return segment(owner, "not an owner's login")
	}
	if len(name) >= 4 && strings.EqualFold(name[len(name)-4:], ".git") {
		// GitHub takes no name ending so: it is a clone URL's path, and
		// the repository is the rest, which is not ours to guess.
		return segment(name, "a clone URL's path ends in .git; the repository's name does not")
	}
	if !IsRepoName(name) {
		return segment(name, "not a repository name")
	}
	return RepoName{Owner: owner, Name: name}, nil
}

// IsOwnerName reports whether s is a GitHub owner's login in the charset
// the-loop takes: 1 to 39 ASCII letters, digits, '-' and '_', starting
// with a letter or a digit, with no "__" and no trailing '_'. GitHub makes
// new logins of letters, digits and single inner hyphens; older logins
// keep a doubled or trailing hyphen, and an Enterprise Managed User's ends
// in _SHORTCODE, so those are taken too. None can be a path step, a flag
// or a second segment, nor make two repositories one StateKey.
func IsOwnerName(s string) bool {
	if len(s) == 0 || len(s) > MaxOwnerLen || !isAlnum(s[0]) || s[len(s)-1] == '_' || strings.Contains(s, "__") {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// IsRepoName reports whether s is a GitHub repository name in the charset
// the-loop takes: 1 to 100 ASCII letters, digits, '.', '_' and '-', not
// starting with '-' (it would read as a flag), and not "." or ".." (path
// steps). ".github" and "_site" are names.
func IsRepoName(s string) bool {
	if len(s) == 0 || len(s) > MaxRepoNameLen || s[0] == '-' || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
