package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
	"unicode/utf8"
)

// The Checks API's limits, from GitHub's REST description (checks/create
// and checks/update).
const (
	// MaxAnnotationsPerRequest is how many annotations one create or
	// update takes; the rest go in further updates, which append.
	MaxAnnotationsPerRequest = 50
	// MaxCheckRunSummary bounds output.summary and output.text, in
	// characters.
	MaxCheckRunSummary = 65535
	// maxAnnotationText bounds an annotation's message and raw_details
	// (64 KB), and maxAnnotationTitle its title (255 characters).
	maxAnnotationText  = 64 << 10
	maxAnnotationTitle = 255
)

// The conclusions a check run of the-loop's ends with.
const (
	ConclusionSuccess = "success"
	ConclusionFailure = "failure"
	ConclusionNeutral = "neutral"
)

// The annotation levels the Checks API takes.
const (
	LevelNotice  = "notice"
	LevelWarning = "warning"
	LevelFailure = "failure"
)

// opCheckRun names check run calls in errors.
const opCheckRun = "check-run"

// ErrCheckRunForbidden is a check run GitHub refused for want of
// permission (403, "Resource not accessible by integration"): the token
// lacks checks: write, as a workflow's GITHUB_TOKEN does unless its
// permissions grant it. The caller falls back to what needs no
// permission.
var ErrCheckRunForbidden = errors.New("the token may not create check runs (it needs checks: write)")

// Annotation is one check run annotation, as the Checks API takes it.
// StartColumn and EndColumn are sent only when StartLine and EndLine are
// one line, as the API requires.
type Annotation struct {
	Path        string `json:"path"`
	StartLine   int    `json:"start_line"`
	EndLine     int    `json:"end_line"`
	StartColumn int    `json:"start_column,omitempty"`
	EndColumn   int    `json:"end_column,omitempty"`
	Level       string `json:"annotation_level"`
	Message     string `json:"message"`
	Title       string `json:"title,omitempty"`
	RawDetails  string `json:"raw_details,omitempty"`
}

// CheckRun is a finished check run to report: on which commit, under
// which name, what it concluded, and what it found.
type CheckRun struct {
	// Owner and Repo are the repository; HeadSHA the commit.
	Owner, Repo, HeadSHA string
	// Name is the check's name, as branch protection requires it.
	Name string
	// ExternalID identifies this run on our side: a create whose answer
	// was lost is looked for by it before it is sent again.
	ExternalID string
	// DetailsURL is where the full report is (the workflow run); "" for
	// none.
	DetailsURL string
	// Conclusion is ConclusionSuccess, ConclusionFailure or
	// ConclusionNeutral.
	Conclusion string
	// Title and Summary are the output's; Summary is Markdown, cut to
	// MaxCheckRunSummary.
	Title, Summary string
	Annotations    []Annotation
	// StartedAt is when the run began; zero leaves it to GitHub.
	StartedAt time.Time
}

// CheckRunResult is the check run made: its id and page.
type CheckRunResult struct {
	ID      int64  `json:"id"`
	HTMLURL string `json:"html_url"`
	// Requests is how many create and update requests it took.
	Requests int `json:"-"`
}

// checkOutput is a create or update's output.
type checkOutput struct {
	Title       string       `json:"title"`
	Summary     string       `json:"summary"`
	Annotations []Annotation `json:"annotations,omitempty"`
}

// checkBody is a create or update's body: HeadSHA only on create,
// Conclusion and CompletedAt only with the last batch.
type checkBody struct {
	Name        string      `json:"name,omitempty"`
	HeadSHA     string      `json:"head_sha,omitempty"`
	ExternalID  string      `json:"external_id,omitempty"`
	DetailsURL  string      `json:"details_url,omitempty"`
	Status      string      `json:"status"`
	StartedAt   string      `json:"started_at,omitempty"`
	Conclusion  string      `json:"conclusion,omitempty"`
	CompletedAt string      `json:"completed_at,omitempty"`
	Output      checkOutput `json:"output"`
}

// CreateCheckRun reports run as one completed check run: a create
// (POST /repos/{owner}/{repo}/check-runs) with the first
// MaxAnnotationsPerRequest annotations, and an update (PATCH
// /repos/{owner}/{repo}/check-runs/{id}) for each further batch, the
// last of which completes it with its conclusion. Every request carries
// the output's title and summary, which the update requires with
// annotations.
//
// Updates are retried after a 5xx as every repeatable request is: at
// worst, an update whose answer was lost appends its batch twice. A
// create is not repeatable, since a second one would leave a second run;
// after a transient failure it is looked for by its external id (GET
// /repos/{owner}/{repo}/commits/{sha}/check-runs) and sent again only
// when it did not land. A 403 that is not a rate limit is
// ErrCheckRunForbidden.
func (in *Integration) CreateCheckRun(ctx context.Context, run CheckRun) (CheckRunResult, error) {
	ref := run.Owner + "/" + run.Repo
	if in.transport == nil {
		return CheckRunResult{}, fmt.Errorf("github %s %s: %w", opCheckRun, ref, in.unavailable)
	}
	t := in.transport
	batches := annotationBatches(run.Annotations)
	out := checkOutput{Title: run.Title, Summary: cutRunes(run.Summary, MaxCheckRunSummary)}
	now := in.now().UTC().Format(time.RFC3339)
	body := func(i int) checkBody {
		o := out
		o.Annotations = batches[i]
		b := checkBody{Status: "in_progress", Output: o}
		if i == len(batches)-1 {
			b.Status, b.Conclusion, b.CompletedAt = "completed", run.Conclusion, now
		}
		return b
	}
	first := body(0)
	first.Name, first.HeadSHA, first.ExternalID, first.DetailsURL = run.Name, run.HeadSHA, run.ExternalID, run.DetailsURL
	if !run.StartedAt.IsZero() {
		first.StartedAt = run.StartedAt.UTC().Format(time.RFC3339)
	}
	repoPath := "/repos/" + url.PathEscape(run.Owner) + "/" + url.PathEscape(run.Repo)
	create := request{op: opCheckRun, ref: ref, method: http.MethodPost, path: repoPath + "/check-runs", body: first}
	var res CheckRunResult
	for attempt := 1; ; attempt++ {
		res.Requests++
		err := t.do(ctx, create, &res)
		if err == nil {
			break
		}
		if forbidden(err) {
			return res, fmt.Errorf("%w: %w", ErrCheckRunForbidden, err)
		}
		if !Transient(err) || attempt >= 3 || ctx.Err() != nil {
			return res, err
		}
		// The create may have landed though its answer was lost.
		if found, ferr := in.findCheckRun(ctx, t, repoPath, run); ferr == nil && found.ID != 0 {
			res.ID, res.HTMLURL = found.ID, found.HTMLURL
			break
		}
	}
	for i := 1; i < len(batches); i++ {
		update := request{op: opCheckRun, ref: ref, method: http.MethodPatch,
			path: fmt.Sprintf("%s/check-runs/%d", repoPath, res.ID), body: body(i), repeatable: true}
		res.Requests++
		if err := t.do(ctx, update, nil); err != nil {
			if forbidden(err) {
				return res, fmt.Errorf("%w: %w", ErrCheckRunForbidden, err)
			}
			return res, err
		}
	}
	return res, nil
}

// findCheckRun is the check run of run's name and external id on its
// commit, if GitHub has one.
func (in *Integration) findCheckRun(ctx context.Context, t transport, repoPath string, run CheckRun) (CheckRunResult, error) {
	if run.ExternalID == "" {
		return CheckRunResult{}, nil
	}
	var answer struct {
		CheckRuns []struct {
			CheckRunResult
			ExternalID string `json:"external_id"`
		} `json:"check_runs"`
	}
	r := request{op: opCheckRun, ref: run.Owner + "/" + run.Repo, method: http.MethodGet, repeatable: true,
		path: repoPath + "/commits/" + url.PathEscape(run.HeadSHA) + "/check-runs?check_name=" + url.QueryEscape(run.Name) + "&filter=all&per_page=100"}
	if err := t.do(ctx, r, &answer); err != nil {
		return CheckRunResult{}, err
	}
	for _, c := range answer.CheckRuns {
		if c.ExternalID == run.ExternalID {
			return c.CheckRunResult, nil
		}
	}
	return CheckRunResult{}, nil
}

// forbidden is a 403 that is not a rate limit.
func forbidden(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusForbidden && !e.RateLimited
}

// annotationBatches splits as into the batches the requests carry, each
// annotation held to the API's limits; there is always one batch, empty
// when there are no annotations.
func annotationBatches(as []Annotation) [][]Annotation {
	batches := [][]Annotation{nil}
	for _, a := range as {
		if len(batches[len(batches)-1]) == MaxAnnotationsPerRequest {
			batches = append(batches, nil)
		}
		batches[len(batches)-1] = append(batches[len(batches)-1], a.bounded())
	}
	return batches
}

// bounded is a held to the Checks API's rules: a line from 1, columns
// only on one line, the level one it takes, the texts within their
// sizes.
func (a Annotation) bounded() Annotation {
	a.StartLine = max(a.StartLine, 1)
	a.EndLine = max(a.EndLine, a.StartLine)
	if a.StartLine != a.EndLine || a.StartColumn <= 0 {
		a.StartColumn, a.EndColumn = 0, 0
	} else {
		a.EndColumn = max(a.EndColumn, a.StartColumn)
	}
	switch a.Level {
	case LevelNotice, LevelWarning, LevelFailure:
	default:
		a.Level = LevelNotice
	}
	a.Message = cutBytes(a.Message, maxAnnotationText)
	a.RawDetails = cutBytes(a.RawDetails, maxAnnotationText)
	a.Title = cutRunes(a.Title, maxAnnotationTitle)
	return a
}

// cutRunes is s cut to at most n characters, ending in "…" when cut.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// cutBytes is s cut to at most n bytes on a character boundary, ending in
// "…" when cut.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n-len("…")]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}
