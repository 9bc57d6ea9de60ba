package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/the-loop/the-loop/graph"
)

// The GitHub Actions events a pull request's gate runs under
// ($GITHUB_EVENT_NAME): the first two carry the pull request, a merge
// queue's its number in the queue branch's name.
const (
	EventPullRequest       = "pull_request"
	EventPullRequestTarget = "pull_request_target"
	EventMergeGroup        = "merge_group"
)

// IsPullRequestEvent reports whether name is one of the events above.
func IsPullRequestEvent(name string) bool {
	switch name {
	case EventPullRequest, EventPullRequestTarget, EventMergeGroup:
		return true
	}
	return false
}

// maxEventBytes bounds an event file: GitHub caps a webhook payload at
// 25 MB, and a pull request's is a few dozen kilobytes.
const maxEventBytes = 25 << 20

// PullRequest is what a gate reads of the pull request it judges.
type PullRequest struct {
	// Number is the pull request's number; 0 when the event has none.
	Number int
	// Repo is the repository it is opened in, OWNER/NAME ("" when the
	// event does not say).
	Repo string
	// Body is its description; a merge queue's event has none.
	Body string
	// HeadRef is its head branch, e.g. "issue-31-fix" (a merge queue's:
	// the queue branch).
	HeadRef string
	// HeadSHA is its head commit ("" for a merge queue's event): where a
	// check run shows on the pull request.
	HeadSHA string
	// Event is the event's kind: EventPullRequest or EventMergeGroup.
	Event string
}

// EventError is an event file that cannot be read as a pull request's.
type EventError struct {
	Path string
	Err  error
}

func (e *EventError) Error() string { return fmt.Sprintf("event file %s: %v", e.Path, e.Err) }
func (e *EventError) Unwrap() error { return e.Err }

// prEvent is the part of a pull_request, pull_request_target or
// merge_group payload a gate reads (octokit's payload examples).
type prEvent struct {
	Number      int `json:"number"`
	PullRequest *struct {
		Number int     `json:"number"`
		Body   *string `json:"body"`
		Head   struct {
			Ref string `json:"ref"`
			SHA string `json:"sha"`
		} `json:"head"`
	} `json:"pull_request"`
	MergeGroup *struct {
		HeadRef string `json:"head_ref"`
	} `json:"merge_group"`
	Repository struct {
		FullName string `json:"full_name"`
	} `json:"repository"`
}

// queueBranch is a merge queue's branch: gh-readonly-queue/<base>/pr-<N>-<sha>.
var queueBranch = regexp.MustCompile(`^(?:refs/heads/)?gh-readonly-queue/.+/pr-([0-9]{1,9})-[0-9a-f]{7,64}$`)

// ReadPullRequestEvent reads the GitHub event payload at path: a
// pull_request (or pull_request_target) event, or a merge_group event,
// told apart by what the payload holds. The file is untrusted: it must be
// a regular file of at most 25 MB of JSON.
func ReadPullRequestEvent(path string) (*PullRequest, error) {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return nil, &EventError{Path: path, Err: err}
	case !fi.Mode().IsRegular():
		return nil, &EventError{Path: path, Err: errors.New("not a regular file")}
	case fi.Size() > maxEventBytes:
		return nil, &EventError{Path: path, Err: fmt.Errorf("%d bytes, over the limit of %d", fi.Size(), maxEventBytes)}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, &EventError{Path: path, Err: err}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxEventBytes+1))
	if err != nil {
		return nil, &EventError{Path: path, Err: err}
	}
	if len(data) > maxEventBytes {
		return nil, &EventError{Path: path, Err: fmt.Errorf("over the limit of %d bytes", maxEventBytes)}
	}
	pr, err := parsePullRequestEvent(data)
	if err != nil {
		return nil, &EventError{Path: path, Err: err}
	}
	return pr, nil
}

func parsePullRequestEvent(data []byte) (*PullRequest, error) {
	var ev prEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	pr := &PullRequest{Repo: ev.Repository.FullName}
	switch {
	case ev.PullRequest != nil:
		pr.Event = EventPullRequest
		pr.Number = ev.PullRequest.Number
		if pr.Number == 0 {
			pr.Number = ev.Number
		}
		if ev.PullRequest.Body != nil {
			pr.Body = *ev.PullRequest.Body
		}
		pr.HeadRef, pr.HeadSHA = ev.PullRequest.Head.Ref, ev.PullRequest.Head.SHA
	case ev.MergeGroup != nil:
		pr.Event = EventMergeGroup
		pr.HeadRef = ev.MergeGroup.HeadRef
		if m := queueBranch.FindStringSubmatch(pr.HeadRef); m != nil {
			pr.Number, _ = strconv.Atoi(m[1])
		}
	default:
		return nil, errors.New("neither a pull_request nor a merge_group event: no \"pull_request\" or \"merge_group\" object")
	}
	if pr.Number < 0 {
		return nil, fmt.Errorf("pull request number: got %d, want a positive number", pr.Number)
	}
	if pr.Repo != "" {
		if _, err := graph.ParseRepoName(pr.Repo); err != nil {
			return nil, fmt.Errorf("repository.full_name: got %q, want OWNER/NAME: %w", pr.Repo, err)
		}
	}
	pr.HeadRef = strings.TrimPrefix(pr.HeadRef, "refs/heads/")
	return pr, nil
}

// PullRequestFrom is the pull request a gate run judges: the event file
// named (--event), else the Actions event's when the run is a pull
// request's or a merge queue's; nil when there is none. An event that
// names no repository belongs to $GITHUB_REPOSITORY's.
func PullRequestFrom(eventFile string, getenv func(string) string) (*PullRequest, error) {
	path := eventFile
	if path == "" && IsPullRequestEvent(getenv("GITHUB_EVENT_NAME")) {
		path = getenv("GITHUB_EVENT_PATH")
	}
	if path == "" {
		return nil, nil
	}
	pr, err := ReadPullRequestEvent(path)
	if err != nil {
		return nil, err
	}
	if pr.Repo == "" {
		pr.Repo = getenv("GITHUB_REPOSITORY")
		if _, err := graph.ParseRepoName(pr.Repo); pr.Repo != "" && err != nil {
			return nil, fmt.Errorf("$GITHUB_REPOSITORY: %w", err)
		}
	}
	return pr, nil
}
