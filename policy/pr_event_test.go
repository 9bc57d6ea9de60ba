package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// octokit are GitHub's example payloads (testdata/octokit/README.md).
var octokit = filepath.Join("..", "testdata", "octokit", "api.github.com")

func TestReadPullRequestEventReadsOctokitsPayloads(t *testing.T) {
	cases := []struct {
		file string
		want PullRequest
	}{
		{"pull_request/opened.payload.json", PullRequest{Number: 2, Repo: "Codertocat/Hello-World",
			Body: "This is a pretty simple change that we need to pull into master.", HeadRef: "changes", HeadSHA: "ec26c3e57ca3a959ca5aad62de7213c562f8c821", Event: EventPullRequest}},
		{"pull_request/opened.with-null-body.json", PullRequest{Number: 2, Repo: "Codertocat/Hello-World", HeadRef: "changes", HeadSHA: "ec26c3e57ca3a959ca5aad62de7213c562f8c821", Event: EventPullRequest}},
		// a merge queue names the pull request in its branch, and has no body
		{"merge_group/checks_requested.payload.json", PullRequest{Number: 104, Repo: "octo-org/octo-repo",
			HeadRef: "gh-readonly-queue/main/pr-104-929f8209d40f77f4abc622a499c93a83babdbe64", Event: EventMergeGroup}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			got, err := ReadPullRequestEvent(filepath.Join(octokit, c.file))
			if err != nil {
				t.Fatal(err)
			}
			if *got != c.want {
				t.Errorf("got %+v\nwant %+v", *got, c.want)
			}
		})
	}
}

func TestReadPullRequestEventRefusesWhatIsNoPullRequestsEvent(t *testing.T) {
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, nil, 0o644); err != nil || os.Truncate(big, maxEventBytes+1) != nil {
		t.Fatal("make a sparse file")
	}
	cases := []struct{ path, want string }{
		{file("bad.json", `{"pull_request": `), "not valid JSON"},
		{file("push.json", `{"ref": "refs/heads/main", "repository": {"full_name": "o/r"}}`), "neither a pull_request nor a merge_group event"},
		{file("forged.json", `{"pull_request": {"number": 1}, "repository": {"full_name": "o/r/../x"}}`), `repository.full_name: got "o/r/../x", want OWNER/NAME`},
		{file("negative.json", `{"pull_request": {"number": -3}}`), "got -3, want a positive number"},
		{fifo, "not a regular file"},
		{big, "over the limit of"},
		{filepath.Join(dir, "missing.json"), "no such file"},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			_, err := ReadPullRequestEvent(c.path)
			var ee *EventError
			if !errors.As(err, &ee) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
				t.Errorf("got %v, want an *EventError naming %s and saying %q", err, c.path, c.want)
			}
		})
	}
}

// TestPullRequestFromRefusesARunnersRepositoryThatIsNoOwnerSlashName: an
// event without a repository belongs to $GITHUB_REPOSITORY's, which is read
// by the one OWNER/NAME reader too: it names a pr-loops/ directory.
func TestPullRequestFromRefusesARunnersRepositoryThatIsNoOwnerSlashName(t *testing.T) {
	event := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(event, []byte(`{"pull_request": {"number": 3, "body": "", "head": {"ref": "x", "sha": "0"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for repo, ok := range map[string]bool{"acme/shop": true, "": true, "../../etc": false, "acme/..": false, "a/b/c": false, "acme": false} {
		getenv := func(k string) string {
			if k == "GITHUB_REPOSITORY" {
				return repo
			}
			return ""
		}
		pr, err := PullRequestFrom(event, getenv)
		if got := err == nil; got != ok {
			t.Errorf("$GITHUB_REPOSITORY=%q: %+v, %v; want accepted %v", repo, pr, err, ok)
		}
		if err != nil && !strings.Contains(err.Error(), "$GITHUB_REPOSITORY") {
			t.Errorf("$GITHUB_REPOSITORY=%q: %v; want it named", repo, err)
		}
	}
}
