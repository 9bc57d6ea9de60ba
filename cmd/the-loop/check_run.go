package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/the-loop/the-loop/channels/github"
	"github.com/the-loop/the-loop/policy"
)

// checkRunName is the check run's name: what branch protection requires.
const checkRunName = "the-loop"

// checkRunTimeout bounds the whole check run, retries included.
const checkRunTimeout = 2 * time.Minute

// checkRunFromEnv is check --check-run's runner: a check run on the
// Actions run's repository and commit, through the REST API at
// $GITHUB_API_URL with the job's token (GH_TOKEN or GITHUB_TOKEN). It
// needs GitHub Actions' environment; a token missing or refused is the
// runner's error, which the github format reports and falls back from.
func checkRunFromEnv(getenv func(string) string) (checkRunner, error) {
	owner, name, ok := strings.Cut(getenv("GITHUB_REPOSITORY"), "/")
	sha := headSHA(getenv)
	if !ok || owner == "" || name == "" || sha == "" {
		return nil, errors.New("check --check-run: $GITHUB_REPOSITORY (owner/name) and $GITHUB_SHA are not set; a check run is made from GitHub Actions")
	}
	base := getenv("GITHUB_API_URL")
	if base == "" {
		base = github.DefaultBaseURL
	}
	in, err := github.New(github.Options{Transport: github.TransportAPI, BaseURL: base, Env: getenv})
	if err != nil {
		return nil, fmt.Errorf("check --check-run: $GITHUB_API_URL: %w", err)
	}
	run := github.CheckRun{Owner: owner, Repo: name, HeadSHA: sha, Name: checkRunName}
	if id := getenv("GITHUB_RUN_ID"); id != "" {
		run.ExternalID = strings.Join([]string{checkRunName, id, getenv("GITHUB_RUN_ATTEMPT"), getenv("GITHUB_JOB")}, "/")
		if server := getenv("GITHUB_SERVER_URL"); server != "" {
			run.DetailsURL = strings.TrimSuffix(server, "/") + "/" + owner + "/" + name + "/actions/runs/" + id
		}
	}
	return func(r checkRunReport) (string, error) {
		if err := in.Available(); err != nil {
			return "", err
		}
		run.Title, run.Summary, run.Conclusion, run.Annotations = r.Title, r.Summary, r.Conclusion, r.Annotations
		ctx, cancel := context.WithTimeout(context.Background(), checkRunTimeout)
		defer cancel()
		res, err := in.CreateCheckRun(ctx, run)
		return res.HTMLURL, err
	}, nil
}

// headSHA is the commit the check run goes on. On a pull request's event
// $GITHUB_SHA is the merge commit GitHub made to test, on which a check
// run shows on no pull request: there it is the pull request's head, from
// the event. Else, and when the event cannot be read, it is $GITHUB_SHA.
func headSHA(getenv func(string) string) string {
	sha := getenv("GITHUB_SHA")
	switch getenv("GITHUB_EVENT_NAME") {
	case "pull_request", "pull_request_target", "pull_request_review", "pull_request_review_comment":
	default:
		return sha
	}
	pr, err := policy.ReadPullRequestEvent(getenv("GITHUB_EVENT_PATH"))
	if err != nil || pr.HeadSHA == "" {
		return sha
	}
	return pr.HeadSHA
}
