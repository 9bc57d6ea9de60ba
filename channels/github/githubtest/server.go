// Package githubtest is a fake of the part of GitHub's REST API the-loop
// uses: issue comments, labels and reactions, review requests, a pull
// request's reviews and diff comments, the authenticated user (GET
// /user: who the token is), and check runs (create, update, and the
// listing on a commit; CheckRuns returns them). It
// keeps its issues in memory, records every call, and can be told to fail
// a request the way GitHub does (a rate limit, a 404, a 5xx), so that the
// GitHub integration and the commands built on it are tested without the
// network.
//
//	srv := githubtest.NewServer()
//	defer srv.Close()
//	srv.AddIssue("acme/shop#3", githubtest.Issue{Labels: []string{"bug"}})
//	... point the integration at srv.URL ...
//	calls := srv.Calls()
//
// Every comment the server is asked to create is posted as the token's
// user, whose login is DefaultLogin unless SetLogin says another: as on
// GitHub, what the-loop posts is authored by whoever its token is.
//
// A Server is safe for concurrent use.
package githubtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Issue is one issue or pull request the server knows.
type Issue struct {
	Labels   []string  `json:"labels"`
	Comments []Comment `json:"comments"`
	// Reactions are the reactions on the issue itself, by content.
	Reactions []string `json:"reactions"`
	// Reviewers and TeamReviewers are the review requests of a pull
	// request, in the order they were made.
	Reviewers     []string `json:"reviewers"`
	TeamReviewers []string `json:"teamReviewers"`
	// Reviews are a pull request's reviews, as its reviews listing
	// answers them, and ReviewComments the comments on its diff.
	Reviews        []Review  `json:"reviews"`
	ReviewComments []Comment `json:"reviewComments"`
}

// Review is one pull request review. Its State is GitHub's REST spelling,
// upper case (APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED, PENDING);
// a nil Body is answered as null, and a zero SubmittedAt (a pending
// review) leaves submitted_at out.
type Review struct {
	ID          int64     `json:"id"`
	Author      string    `json:"author"`
	Body        *string   `json:"body"`
	State       string    `json:"state"`
	SubmittedAt time.Time `json:"submitted_at"`
}

// Comment is one comment on an issue. The server numbers a comment it is
// given without an ID, and dates one given without a time.
type Comment struct {
	ID        int64     `json:"id"`
	Author    string    `json:"author"`
	Body      string    `json:"body"`
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is when it was last edited; zero answers created_at, as
	// GitHub dates a comment never edited.
	UpdatedAt time.Time `json:"updated_at"`
	Reactions []string  `json:"reactions"`
}

// Call is one request the server received.
type Call struct {
	Method string
	// Path is the request's escaped path, below Prefix.
	Path  string
	Query url.Values
	Body  string
	// Authorization is the request's Authorization header.
	Authorization string
}

func (c Call) String() string {
	s := c.Method + " " + c.Path
	if len(c.Query) > 0 {
		s += "?" + c.Query.Encode()
	}
	if c.Body != "" {
		s += " " + c.Body
	}
	return s
}

// Fault makes the server answer matching requests with Status, Header
// and Body instead of serving them. Method and Path ("" matches any)
// select requests; Times is how many it answers (0 is once).
type Fault struct {
	Method string
	Path   string
	Status int
	Header map[string]string
	Body   string
	Times  int
	// Applied serves the request before it answers with the fault: the
	// comment is posted, and the caller still hears a 502, as when GitHub
	// did the work and the proxy in front of it gave up waiting.
	Applied bool
}

// DefaultLogin is the login of the token's user on a new Server.
const DefaultLogin = "the-loop-bot"

// Server is the fake.
type Server struct {
	// URL is the API's base URL: the server's address followed by the
	// prefix it was started with.
	URL string

	token  string
	login  string
	log    io.Writer
	srv    *httptest.Server
	prefix string
	mu     sync.Mutex
	issues map[string]*Issue
	calls  []Call
	faults []*Fault
	lastID int64
	clock  time.Time
	runs   []*CheckRun
}

// NewServer starts a server with no issues, its API at the root.
func NewServer() *Server { return NewServerAt("") }

// NewServerAt starts a server whose API is under prefix, as a GitHub
// Enterprise host serves it under /api/v3.
func NewServerAt(prefix string) *Server {
	s := &Server{issues: map[string]*Issue{}, prefix: strings.TrimRight(prefix, "/"), login: DefaultLogin,
		clock: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + s.prefix
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Fixture is what Load reads: the token, the login of its user ("" keeps
// DefaultLogin), and the issues, by "owner/repo#number".
type Fixture struct {
	Token  string           `json:"token"`
	Login  string           `json:"login,omitempty"`
	Issues map[string]Issue `json:"issues"`
	// Faults are installed as Fail installs them, in order.
	Faults []Fault `json:"faults,omitempty"`
}

// Load adds a JSON Fixture's issues and sets its token.
func (s *Server) Load(r io.Reader) error {
	var f Fixture
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("githubtest fixture: %w", err)
	}
	s.SetToken(f.Token)
	if f.Login != "" {
		s.SetLogin(f.Login)
	}
	for ref, is := range f.Issues {
		s.AddIssue(ref, is)
	}
	for _, fault := range f.Faults {
		s.Fail(fault)
	}
	return nil
}

// SetToken makes token the one bearer token the server accepts; any
// other is answered 401. "" accepts any.
func (s *Server) SetToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = token
}

// SetLogin makes login the token's user: the author of every comment
// created from now on, and what GET /user answers.
func (s *Server) SetLogin(login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.login = login
}

// SetClock dates the comments created from now on without a time: the
// next one a minute after at, each after it a minute later. A new server
// dates them from 2026-01-01T00:00Z, which is the past to a work item
// that entered its gate today, and whose gate would read them as written
// before it.
func (s *Server) SetClock(at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = at.UTC().Truncate(time.Second)
}

// SetLog has every call written to w as one line (Call.String).
func (s *Server) SetLog(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = w
}

// AddIssue adds (or replaces) the issue ref names: "owner/repo#number",
// with or without the "github:" prefix.
func (s *Server) AddIssue(ref string, is Issue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is.Labels = slices.Clone(is.Labels)
	is.Comments = slices.Clone(is.Comments)
	for i := range is.Comments {
		s.number(&is.Comments[i])
	}
	is.ReviewComments = slices.Clone(is.ReviewComments)
	for i := range is.ReviewComments {
		s.number(&is.ReviewComments[i])
	}
	s.issues[strings.TrimPrefix(ref, "github:")] = &is
}

func (s *Server) number(c *Comment) {
	if c.ID == 0 {
		s.lastID++
		c.ID = 1000 + s.lastID
	}
	if c.CreatedAt.IsZero() {
		s.clock = s.clock.Add(time.Minute)
		c.CreatedAt = s.clock
	}
}

// Issue returns a copy of the issue ref names, and whether it exists.
func (s *Server) Issue(ref string) (Issue, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is, ok := s.issues[strings.TrimPrefix(ref, "github:")]
	if !ok {
		return Issue{}, false
	}
	out := *is
	out.Labels = slices.Clone(is.Labels)
	out.Comments = slices.Clone(is.Comments)
	return out, true
}

// Calls returns every request received so far, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Fail installs a fault; faults are tried in the order installed.
func (s *Server) Fail(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.Times == 0 {
		f.Times = 1
	}
	s.faults = append(s.faults, &f)
}

var (
	issuePath    = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/issues/(\d+)/(comments|labels|reactions)$`)
	labelPath    = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/issues/(\d+)/labels/([^/]+)$`)
	commentPath  = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/issues/comments/(\d+)/reactions$`)
	reviewerPath = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/pulls/(\d+)/requested_reviewers$`)
	reviewsPath  = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/pulls/(\d+)/(reviews|comments)$`)
)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	path, ok := strings.CutPrefix(r.URL.EscapedPath(), s.prefix)
	if !ok {
		path = r.URL.EscapedPath()
	}
	call := Call{Method: r.Method, Path: path, Query: r.URL.Query(), Body: string(body), Authorization: r.Header.Get("Authorization")}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, call)
	if s.log != nil {
		fmt.Fprintln(s.log, call.String())
	}
	f := s.fault(call)
	if f == nil || f.Applied {
		out := http.ResponseWriter(httptest.NewRecorder())
		if f == nil {
			out = w
		}
		switch m := match(path); {
		case s.token != "" && call.Authorization != "Bearer "+s.token:
			answer(out, http.StatusUnauthorized, map[string]any{"message": "Bad credentials"})
		case path == "/user" && r.Method == http.MethodGet:
			answer(out, http.StatusOK, map[string]any{"login": s.login, "id": 1, "type": "User"})
		case checkRunsPath.MatchString(path) || checkRunPath.MatchString(path) || commitRunsPath.MatchString(path):
			s.checks(out, r, path, body)
		case m.kind == "":
			notFound(out)
		case m.kind != "comment-reactions" && s.issues[m.key] == nil:
			notFound(out)
		default:
			s.route(out, r, m, call)
		}
		if f == nil {
			return
		}
	}
	for k, v := range f.Header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(f.Status)
	io.WriteString(w, f.Body)
}

// fault is the first installed fault matching call, used up by one.
func (s *Server) fault(call Call) *Fault {
	for i, f := range s.faults {
		if (f.Method == "" || f.Method == call.Method) && (f.Path == "" || f.Path == call.Path) {
			f.Times--
			if f.Times <= 0 {
				s.faults = slices.Delete(s.faults, i, i+1)
			}
			return f
		}
	}
	return nil
}

type route struct {
	kind  string // comments, labels, reactions, label, comment-reactions, reviewers, reviews, review-comments
	key   string // owner/repo#number, for the issue routes
	slug  string
	extra string // a label name, or a comment id
}

func match(path string) route {
	if m := issuePath.FindStringSubmatch(path); m != nil {
		return route{kind: m[4], key: m[1] + "/" + m[2] + "#" + m[3], slug: m[1] + "/" + m[2]}
	}
	if m := labelPath.FindStringSubmatch(path); m != nil {
		name, err := url.PathUnescape(m[4])
		if err != nil {
			return route{}
		}
		return route{kind: "label", key: m[1] + "/" + m[2] + "#" + m[3], extra: name}
	}
	if m := reviewerPath.FindStringSubmatch(path); m != nil {
		return route{kind: "reviewers", key: m[1] + "/" + m[2] + "#" + m[3]}
	}
	if m := reviewsPath.FindStringSubmatch(path); m != nil {
		kind := "reviews"
		if m[4] == "comments" {
			kind = "review-comments"
		}
		return route{kind: kind, key: m[1] + "/" + m[2] + "#" + m[3]}
	}
	if m := commentPath.FindStringSubmatch(path); m != nil {
		return route{kind: "comment-reactions", slug: m[1] + "/" + m[2], extra: m[3]}
	}
	return route{}
}

func (s *Server) route(w http.ResponseWriter, r *http.Request, m route, call Call) {
	is := s.issues[m.key]
	var in struct {
		Body          string   `json:"body"`
		Labels        []string `json:"labels"`
		Content       string   `json:"content"`
		Reviewers     []string `json:"reviewers"`
		TeamReviewers []string `json:"team_reviewers"`
	}
	if call.Body != "" && json.Unmarshal([]byte(call.Body), &in) != nil {
		answer(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON"})
		return
	}
	switch r.Method + " " + m.kind {
	case "GET comments":
		out := make([]any, len(is.Comments))
		for i, c := range is.Comments {
			out[i] = commentJSON(c)
		}
		s.page(w, r, out)
	case "POST comments":
		if in.Body == "" {
			answer(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed"})
			return
		}
		c := Comment{Author: s.login, Body: in.Body}
		s.number(&c)
		is.Comments = append(is.Comments, c)
		answer(w, http.StatusCreated, commentJSON(c))
	case "GET labels":
		s.page(w, r, labelsJSON(is.Labels))
	case "POST labels":
		for _, l := range in.Labels {
			if !slices.Contains(is.Labels, l) {
				is.Labels = append(is.Labels, l)
			}
		}
		answer(w, http.StatusOK, labelsJSON(is.Labels))
	case "PUT labels":
		is.Labels = slices.Clone(in.Labels)
		answer(w, http.StatusOK, labelsJSON(is.Labels))
	case "DELETE label":
		i := slices.Index(is.Labels, m.extra)
		if i < 0 {
			answer(w, http.StatusNotFound, map[string]any{"message": "Label does not exist"})
			return
		}
		is.Labels = slices.Delete(is.Labels, i, i+1)
		answer(w, http.StatusOK, labelsJSON(is.Labels))
	case "POST reactions":
		is.Reactions = append(is.Reactions, in.Content)
		answer(w, http.StatusCreated, map[string]any{"id": 1, "content": in.Content})
	case "POST comment-reactions":
		c := s.comment(m.slug, m.extra)
		if c == nil {
			notFound(w)
			return
		}
		c.Reactions = append(c.Reactions, in.Content)
		answer(w, http.StatusCreated, map[string]any{"id": 1, "content": in.Content})
	case "GET reviews":
		out := make([]any, len(is.Reviews))
		for i, rv := range is.Reviews {
			out[i] = reviewJSON(rv)
		}
		s.page(w, r, out)
	case "GET review-comments":
		out := make([]any, len(is.ReviewComments))
		for i, c := range is.ReviewComments {
			out[i] = commentJSON(c)
		}
		s.page(w, r, out)
	case "POST reviewers":
		is.Reviewers = append(is.Reviewers, in.Reviewers...)
		is.TeamReviewers = append(is.TeamReviewers, in.TeamReviewers...)
		answer(w, http.StatusCreated, map[string]any{"number": 1})
	default:
		answer(w, http.StatusMethodNotAllowed, map[string]any{"message": "Method Not Allowed"})
	}
}

// comment is the comment with id on one of slug's issues, or nil.
func (s *Server) comment(slug, id string) *Comment {
	n, _ := strconv.ParseInt(id, 10, 64)
	for key, is := range s.issues {
		if !strings.HasPrefix(key, slug+"#") {
			continue
		}
		for i := range is.Comments {
			if is.Comments[i].ID == n {
				return &is.Comments[i]
			}
		}
	}
	return nil
}

// page answers one page of items as GitHub does: per_page (default 30,
// at most 100) from page (default 1), with a Link header to the next.
func (s *Server) page(w http.ResponseWriter, r *http.Request, items []any) {
	q := r.URL.Query()
	per, err := strconv.Atoi(q.Get("per_page"))
	if err != nil || per <= 0 {
		per = 30
	}
	per = min(per, 100)
	page, err := strconv.Atoi(q.Get("page"))
	if err != nil || page <= 0 {
		page = 1
	}
	from := min((page-1)*per, len(items))
	to := min(from+per, len(items))
	if to < len(items) {
		next := *r.URL
		next.Scheme, next.Host = "http", r.Host
		nq := next.Query()
		nq.Set("page", strconv.Itoa(page+1))
		nq.Set("per_page", strconv.Itoa(per))
		next.RawQuery = nq.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next"`, next.String()))
	}
	answer(w, http.StatusOK, items[from:to])
}

func commentJSON(c Comment) map[string]any {
	updated := c.UpdatedAt
	if updated.IsZero() {
		updated = c.CreatedAt
	}
	return map[string]any{"id": c.ID, "user": map[string]any{"login": c.Author}, "body": c.Body,
		"created_at": c.CreatedAt.UTC().Format(time.RFC3339), "updated_at": updated.UTC().Format(time.RFC3339)}
}

func reviewJSON(r Review) map[string]any {
	m := map[string]any{"id": r.ID, "user": map[string]any{"login": r.Author}, "body": r.Body, "state": r.State}
	if !r.SubmittedAt.IsZero() {
		m["submitted_at"] = r.SubmittedAt.UTC().Format(time.RFC3339)
	}
	return m
}

func labelsJSON(labels []string) []any {
	out := make([]any, len(labels))
	for i, l := range labels {
		out[i] = map[string]any{"name": l}
	}
	return out
}

func notFound(w http.ResponseWriter) {
	answer(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
}

func answer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
