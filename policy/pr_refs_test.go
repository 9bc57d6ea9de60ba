package policy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestClosingRefsReadsGitHubsKeywords(t *testing.T) {
	type ref = ClosingRef
	cases := []struct {
		body string
		want []ref
	}{
		{"Closes #31", []ref{{"", 31, "Closes #31"}}},
		{"closes #31", []ref{{"", 31, "closes #31"}}},
		{"CLOSED #31", []ref{{"", 31, "CLOSED #31"}}},
		{"close #31", []ref{{"", 31, "close #31"}}},
		{"Fix #12", []ref{{"", 12, "Fix #12"}}},
		{"Fixes #12", []ref{{"", 12, "Fixes #12"}}},
		{"fixed #12.", []ref{{"", 12, "fixed #12"}}},
		{"Resolve #7", []ref{{"", 7, "Resolve #7"}}},
		{"resolves #7", []ref{{"", 7, "resolves #7"}}},
		{"Resolved #7", []ref{{"", 7, "Resolved #7"}}},
		{"Fixes: #12", []ref{{"", 12, "Fixes: #12"}}},
		{"Fixes:#12", []ref{{"", 12, "Fixes:#12"}}},
		{"This PR fixes #12 for good", []ref{{"", 12, "fixes #12"}}},
		{"(closes #4)", []ref{{"", 4, "closes #4"}}},
		{"- Closes octo-org/octo-repo#100", []ref{{"octo-org/octo-repo", 100, "Closes octo-org/octo-repo#100"}}},
		{"Resolves #10, resolves #123, resolves octo/repo#100", []ref{{"", 10, "Resolves #10"}, {"", 123, "resolves #123"}, {"octo/repo", 100, "resolves octo/repo#100"}}},
		// each reference needs its own keyword, as on GitHub
		{"Fixes #1 and #2", []ref{{"", 1, "Fixes #1"}}},
		// the same issue twice is one reference
		{"Closes #5\nfixes #5 fixes #05", []ref{{"", 5, "Closes #5"}}},
		// OWNER/NAME is read by graph.ParseRepoName: what it refuses names
		// no repository, and no link is made to it
		{"Closes acme/..#3", nil},
		{"Closes acme/.#3", nil},
		{"Fixes acme/app.git#3", nil},
		{"Fixes https://github.com/acme/../issues/3", nil},
		{"Fixes octocat_acme/notes#4", []ref{{"octocat_acme/notes", 4, "Fixes octocat_acme/notes#4"}}},
		{"Fixes acme/.github#4", []ref{{"acme/.github", 4, "Fixes acme/.github#4"}}},
		// not a closing reference
		{"Refs #31", nil},
		{"See #31", nil},
		{"Closes 31", nil},
		{"Closes # 31", nil},
		{"Closes\n#31", nil},
		{"prefixes #31", nil},
		{"unfixed #31", nil},
		{"Closes #31abc", nil},
		{"Closes #0", nil},
		{"Fixing #31", nil},
		{"Closes #1234567890", nil},
		{"Closes https://github.com/o/r/issues/31", []ref{{"o/r", 31, "Closes https://github.com/o/r/issues/31"}}},
		{"Resolved GH-15", []ref{{"", 15, "Resolved GH-15"}}},
		{"fix https://ghe.example.com/octo/repo/issues/15 and more", []ref{{"octo/repo", 15, "fix https://ghe.example.com/octo/repo/issues/15"}}},
		{"Closes https://github.com/o/r/pull/31", nil},
		// code is not prose
		{"`Closes #31`", nil},
		{"run `x` then closes #8 `y`", []ref{{"", 8, "closes #8"}}},
		{"```\nCloses #31\n```\nFixes #2", []ref{{"", 2, "Fixes #2"}}},
		{"~~~~\nCloses #31\n~~~\nstill code\n~~~~", nil},
		{"a ` b closes #9", []ref{{"", 9, "closes #9"}}},
	}
	for _, c := range cases {
		t.Run(c.body, func(t *testing.T) {
			got, truncated := ClosingRefs(c.body)
			if truncated {
				t.Errorf("truncated a short body")
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("ClosingRefs(%q) = %+v, want %+v", c.body, got, c.want)
			}
		})
	}
}

func TestClosingRefsIsBounded(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&b, "Closes #%d\n", i)
	}
	refs, truncated := ClosingRefs(b.String())
	if len(refs) != maxRefs || !truncated {
		t.Fatalf("got %d refs, truncated %v; want %d and truncated", len(refs), truncated, maxRefs)
	}
	if refs[maxRefs-1].Number != maxRefs {
		t.Errorf("kept %+v last, want the first %d in order", refs[maxRefs-1], maxRefs)
	}
	long := strings.Repeat("x", maxBodyBytes) + " Closes #1"
	if refs, truncated := ClosingRefs(long); len(refs) != 0 || !truncated {
		t.Errorf("a reference past the byte bound was read: %+v, %v", refs, truncated)
	}
}

func FuzzClosingRefs(f *testing.F) {
	for _, s := range []string{"Closes #31", "fixes: o/r#2 `x`", "```\nFixes #1\n```", "resolved #0 #1 Close #999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		refs, _ := ClosingRefs(body)
		if len(refs) > maxRefs {
			t.Fatalf("%d refs, over the bound", len(refs))
		}
		seen := map[string]bool{}
		for _, r := range refs {
			if r.Number <= 0 || !strings.Contains(body, r.Text) {
				t.Fatalf("bad ref %+v of %q", r, body)
			}
			digits := r.Text[len(strings.TrimRight(r.Text, "0123456789")):]
			if n, err := strconv.Atoi(digits); err != nil || n != r.Number {
				t.Fatalf("ref %+v: its text does not end in its number", r)
			}
			k := strings.ToLower(r.Repo) + "#" + fmt.Sprint(r.Number)
			if seen[k] {
				t.Fatalf("issue %s twice in %+v", k, refs)
			}
			seen[k] = true
		}
	})
}
