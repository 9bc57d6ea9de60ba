package route

import (
	"strconv"
	"strings"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/internal/lazyregexp"
)

// branchIssue links a head branch to an issue of the pull request's own
// repository by the naming convention the-loop's branches and GitHub's
// follow: claude/github-issue-15-x, feature/issue-15.
var branchIssue = lazyregexp.New(`(?i)issue[-/](\d+)`)

// closingKeyword is a closing reference in a pull request's description,
// in every form GitHub accepts: "Closes #15", "Fixes: #15",
// "Resolves octo/repo#15", "fixed GH-15", "close
// https://github.com/octo/repo/issues/15". The URL form comes first so a
// link is never half-read as the "#" form.
var closingKeyword = lazyregexp.New(`(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b\s*:?\s+(?:https?://[^\s/]+/([\w.-]+/[\w.-]+)/issues/(\d+)|([\w.-]+/[\w.-]+)?#(\d+)|GH-(\d+))`)

// LinkedWorkItems are the work items the pull request pr delivers, most
// authoritative first, without repeats: the issue its head branch names
// (in pr's repository; a comment's payload carries no branch, so this is
// for pull_request events), then each closing keyword in its description
// (a qualified one, OWNER/REPO#N or an issue URL, in the repository it
// names). A reference to pr itself, and one that does not make a valid
// ref, are left out.
//
// A linked ref says nothing about whether that issue exists. The router
// acts only on a linked work item that is bound, which is the operator's
// own statement that it does.
func LinkedWorkItems(pr channels.Ref, body, headBranch string) []channels.Ref {
	var out []channels.Ref
	seen := map[string]bool{pr.Key(): true}
	add := func(repository, number string) {
		n, err := strconv.Atoi(number)
		if err != nil {
			return
		}
		if repository == "" {
			repository = pr.Repository()
		}
		r, err := channels.ParseRef("github:" + repository + "#" + strconv.Itoa(n))
		if err != nil || seen[r.Key()] {
			return
		}
		seen[r.Key()] = true
		out = append(out, r)
	}
	if m := branchIssue.FindStringSubmatch(headBranch); m != nil {
		add("", m[1])
	}
	for _, m := range closingKeyword.FindAllStringSubmatch(body, -1) {
		switch {
		case m[2] != "":
			add(m[1], m[2])
		case m[4] != "":
			add(m[3], m[4])
		default:
			add("", m[5])
		}
	}
	return out
}

// isBot reports whether an account is a bot: GitHub says so in its type,
// and an App's login ends in [bot].
func isBot(login, kind string) bool {
	return strings.EqualFold(kind, "Bot") || strings.HasSuffix(strings.ToLower(login), "[bot]")
}
