package githubtest

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
)

// CheckRun is a check run the server was asked to create, as its
// requests left it: each create or update appends its annotations.
type CheckRun struct {
	ID          int64            `json:"id"`
	Repo        string           `json:"repo"`
	Name        string           `json:"name"`
	HeadSHA     string           `json:"head_sha"`
	ExternalID  string           `json:"external_id"`
	Status      string           `json:"status"`
	Conclusion  string           `json:"conclusion"`
	CompletedAt string           `json:"completed_at"`
	Title       string           `json:"title"`
	Summary     string           `json:"summary"`
	Annotations []map[string]any `json:"annotations"`
	// Requests is how many creates and updates it took.
	Requests int `json:"requests"`
}

var (
	checkRunsPath  = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/check-runs$`)
	checkRunPath   = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/check-runs/(\d+)$`)
	commitRunsPath = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/commits/([^/]+)/check-runs$`)
)

// CheckRuns returns copies of the check runs created so far, in order.
func (s *Server) CheckRuns() []CheckRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]CheckRun, len(s.runs))
	for i, r := range s.runs {
		out[i] = *r
		out[i].Annotations = slices.Clone(r.Annotations)
	}
	return out
}

// checkBody is what a create or update sends.
type checkBody struct {
	Name        string `json:"name"`
	HeadSHA     string `json:"head_sha"`
	ExternalID  string `json:"external_id"`
	Status      string `json:"status"`
	Conclusion  string `json:"conclusion"`
	CompletedAt string `json:"completed_at"`
	Output      *struct {
		Title       string           `json:"title"`
		Summary     *string          `json:"summary"`
		Annotations []map[string]any `json:"annotations"`
	} `json:"output"`
}

// checks serves check runs: create, update (appending annotations, as
// GitHub does) and the listing on a commit. A request the Checks API
// would refuse (no name or head_sha, more than 50 annotations, an update
// with annotations but no title and summary) is answered 422.
func (s *Server) checks(w http.ResponseWriter, r *http.Request, path string, raw []byte) {
	var b checkBody
	if r.Method != http.MethodGet {
		if err := json.Unmarshal(raw, &b); err != nil {
			answer(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON"})
			return
		}
		if b.Output != nil && (len(b.Output.Annotations) > 50 || (b.Output.Title == "" || b.Output.Summary == nil)) {
			answer(w, http.StatusUnprocessableEntity, map[string]any{"message": "Invalid request.\n\noutput needs a title and summary, and at most 50 annotations"})
			return
		}
	}
	apply := func(run *CheckRun) {
		run.Requests++
		if b.Status != "" {
			run.Status = b.Status
		}
		if b.Conclusion != "" {
			run.Conclusion, run.Status = b.Conclusion, "completed"
		}
		if b.CompletedAt != "" {
			run.CompletedAt = b.CompletedAt
		}
		if b.Output != nil {
			run.Title, run.Summary = b.Output.Title, *b.Output.Summary
			run.Annotations = append(run.Annotations, b.Output.Annotations...)
		}
	}
	htmlURL := func(run *CheckRun) string {
		return "https://github.example/" + run.Repo + "/runs/" + strconv.FormatInt(run.ID, 10)
	}
	switch m := checkRunsPath.FindStringSubmatch(path); {
	case m != nil && r.Method == http.MethodPost:
		if b.Name == "" || b.HeadSHA == "" {
			answer(w, http.StatusUnprocessableEntity, map[string]any{"message": "name and head_sha are required"})
			return
		}
		s.lastID++
		run := &CheckRun{ID: 5000 + s.lastID, Repo: m[1] + "/" + m[2], Name: b.Name, HeadSHA: b.HeadSHA, ExternalID: b.ExternalID, Status: "queued"}
		apply(run)
		s.runs = append(s.runs, run)
		answer(w, http.StatusCreated, map[string]any{"id": run.ID, "html_url": htmlURL(run), "status": run.Status})
		return
	}
	if m := checkRunPath.FindStringSubmatch(path); m != nil && r.Method == http.MethodPatch {
		id, _ := strconv.ParseInt(m[3], 10, 64)
		for _, run := range s.runs {
			if run.ID == id && run.Repo == m[1]+"/"+m[2] {
				apply(run)
				answer(w, http.StatusOK, map[string]any{"id": run.ID, "html_url": htmlURL(run), "status": run.Status})
				return
			}
		}
	}
	if m := commitRunsPath.FindStringSubmatch(path); m != nil && r.Method == http.MethodGet {
		list := []map[string]any{}
		for _, run := range s.runs {
			if run.Repo == m[1]+"/"+m[2] && run.HeadSHA == m[3] && (r.URL.Query().Get("check_name") == "" || r.URL.Query().Get("check_name") == run.Name) {
				list = append(list, map[string]any{"id": run.ID, "external_id": run.ExternalID, "html_url": htmlURL(run), "name": run.Name})
			}
		}
		answer(w, http.StatusOK, map[string]any{"total_count": len(list), "check_runs": list})
		return
	}
	notFound(w)
}
