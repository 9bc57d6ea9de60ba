package policy

import "testing"

func TestIssueBranchReadsTheOriginalsConvention(t *testing.T) {
	cases := map[string]string{
		"issue-31":                 "31",
		"issue-31-fix":             "31",
		"Issue-31_fix":             "31",
		"feature/issue-31":         "31",
		"claude/github-issue-31-x": "31",
		"issue/31":                 "31",
		"tissue-31":                "",
		"issue-31a":                "",
		"issue-":                   "",
		"issues-31":                "",
		"fix-31":                   "",
	}
	for branch, want := range cases {
		got := ""
		if m := issueBranch.FindStringSubmatch(branch); m != nil {
			got = m[1]
		}
		if got != want {
			t.Errorf("%s: got issue %q, want %q", branch, got, want)
		}
	}
}
