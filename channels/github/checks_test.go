package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// checkRunSchemas are the request bodies GitHub's REST description gives
// checks/create and checks/update (testdata/openapi/check-runs.json).
func checkRunSchemas(t *testing.T) (create, update *jsonschema.Schema) {
	t.Helper()
	f, err := os.Open("testdata/openapi/check-runs.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("check-runs.json", doc); err != nil {
		t.Fatal(err)
	}
	if create, err = c.Compile("check-runs.json#/$defs/checks-create"); err != nil {
		t.Fatal(err)
	}
	if update, err = c.Compile("check-runs.json#/$defs/checks-update"); err != nil {
		t.Fatal(err)
	}
	return create, update
}

// checksCall is one request the stand-in recorded.
type checksCall struct {
	Method, Path string
	Header       http.Header
	Body         map[string]any
}

// checksStandIn records every request, answers the Checks API's create,
// update and list, and fails a request on demand. Every body is held to
// the REST description's request schema, and every request to its
// headers: a request that breaks either is answered 422 and reported.
type checksStandIn struct {
	t              *testing.T
	create, update *jsonschema.Schema
	mu             sync.Mutex
	calls          []checksCall
	// fail answers the n-th request (from 1) with a status and body.
	fail map[int]func(w http.ResponseWriter)
	runs []map[string]any // created, for the list
	srv  *httptest.Server
}

func newChecksStandIn(t *testing.T) *checksStandIn {
	s := &checksStandIn{t: t, fail: map[int]func(http.ResponseWriter){}}
	s.create, s.update = checkRunSchemas(t)
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *checksStandIn) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, _ := io.ReadAll(r.Body)
	call := checksCall{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone()}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &call.Body); err != nil {
			s.t.Errorf("%s %s: body is not a JSON object: %v", r.Method, r.URL, err)
		}
	}
	s.calls = append(s.calls, call)
	for h, want := range map[string]string{"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": apiVersion,
		"User-Agent": userAgent, "Authorization": "Bearer " + token} {
		if got := r.Header.Get(h); got != want {
			s.t.Errorf("%s %s: header %s = %q, want %q", r.Method, r.URL, h, got, want)
		}
	}
	if f := s.fail[len(s.calls)]; f != nil {
		f(w)
		return
	}
	validate := func(sch *jsonschema.Schema) bool {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err == nil {
			err = sch.Validate(inst)
		}
		if err != nil {
			s.t.Errorf("%s %s: body does not validate against the REST description: %v\n%s", r.Method, r.URL, err, raw)
			w.WriteHeader(http.StatusUnprocessableEntity)
			return false
		}
		return true
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/repos/acme/shop/check-runs":
		if !validate(s.create) {
			return
		}
		id := 4200 + len(s.runs)
		s.runs = append(s.runs, map[string]any{"id": id, "external_id": call.Body["external_id"], "html_url": fmt.Sprintf("https://github.example/acme/shop/runs/%d", id)})
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(s.runs[len(s.runs)-1])
	case r.Method == http.MethodPatch && strings.HasPrefix(r.URL.Path, "/repos/acme/shop/check-runs/"):
		if !validate(s.update) {
			return
		}
		w.Write([]byte(`{"id": 1}`))
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/repos/acme/shop/commits/"):
		json.NewEncoder(w).Encode(map[string]any{"total_count": len(s.runs), "check_runs": s.runs})
	default:
		s.t.Errorf("unexpected request %s %s", r.Method, r.URL)
		w.WriteHeader(http.StatusNotFound)
	}
}

func (s *checksStandIn) got() []checksCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]checksCall(nil), s.calls...)
}

func annotations(n int) []Annotation {
	as := make([]Annotation, n)
	for i := range as {
		as[i] = Annotation{Path: "src/main.go", StartLine: i + 1, EndLine: i + 1, StartColumn: 3, EndColumn: 3,
			Level: LevelFailure, Message: fmt.Sprintf("finding %d", i), Title: "the-loop/x-rule"}
	}
	return as
}

func testRun(n int) CheckRun {
	return CheckRun{Owner: "acme", Repo: "shop", HeadSHA: "0123456789abcdef0123456789abcdef01234567", Name: "the-loop",
		ExternalID: "the-loop/run-1", Conclusion: ConclusionFailure, Title: "1/2 work items satisfied",
		Summary: "## the-loop check\n", Annotations: annotations(n)}
}

func batchSizes(calls []checksCall) []string {
	var got []string
	for _, c := range calls {
		out, _ := c.Body["output"].(map[string]any)
		as, _ := out["annotations"].([]any)
		got = append(got, fmt.Sprintf("%s %d %v", c.Method, len(as), c.Body["status"]))
	}
	return got
}

func TestCheckRunSendsAnnotationsInBatchesOfFifty(t *testing.T) {
	s := newChecksStandIn(t)
	in, _ := apiTo(t, s.srv.URL)
	res, err := in.CreateCheckRun(context.Background(), testRun(120))
	if err != nil {
		t.Fatal(err)
	}
	calls := s.got()
	want := []string{"POST 50 in_progress", "PATCH 50 in_progress", "PATCH 20 completed"}
	if got := batchSizes(calls); strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Fatalf("requests = %q, want %q", got, want)
	}
	if calls[1].Path != "/repos/acme/shop/check-runs/4200" || calls[2].Path != calls[1].Path {
		t.Errorf("updates went to %s and %s, want the created run's", calls[1].Path, calls[2].Path)
	}
	for _, c := range calls {
		out := c.Body["output"].(map[string]any)
		if out["title"] != "1/2 work items satisfied" || out["summary"] != "## the-loop check\n" {
			t.Errorf("%s output = %v, want the title and summary on every request", c.Method, out)
		}
	}
	last := calls[2].Body
	if last["conclusion"] != ConclusionFailure || last["completed_at"] != testNow.Format("2006-01-02T15:04:05Z") {
		t.Errorf("last update = %v, want the conclusion and completed_at", last)
	}
	if calls[0].Body["head_sha"] != testRun(0).HeadSHA || calls[0].Body["name"] != "the-loop" {
		t.Errorf("create = %v, want the name and head_sha", calls[0].Body)
	}
	if res.ID != 4200 || res.Requests != 3 {
		t.Errorf("result = %+v, want run 4200 in 3 requests", res)
	}
}

func TestCheckRunWithFewAnnotationsIsOneCompletedCreate(t *testing.T) {
	for _, n := range []int{0, 1, 50} {
		s := newChecksStandIn(t)
		in, _ := apiTo(t, s.srv.URL)
		if _, err := in.CreateCheckRun(context.Background(), testRun(n)); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("POST %d completed", n)
		if got := batchSizes(s.got()); len(got) != 1 || got[0] != want {
			t.Errorf("%d annotations: requests = %q, want %q", n, got, want)
		}
	}
}

func TestCheckRunAnnotationsKeepTheAPIsRules(t *testing.T) {
	a := Annotation{Path: "a.go", StartLine: 3, EndLine: 5, StartColumn: 2, EndColumn: 4, Level: "error",
		Message: strings.Repeat("é", 40<<10), Title: strings.Repeat("t", 300)}.bounded()
	if a.StartColumn != 0 || a.EndColumn != 0 {
		t.Errorf("columns over several lines = %d,%d, want none", a.StartColumn, a.EndColumn)
	}
	if a.Level != LevelNotice {
		t.Errorf("level = %q, want notice for one the API does not take", a.Level)
	}
	if len(a.Message) > maxAnnotationText || !strings.HasSuffix(a.Message, "…") {
		t.Errorf("message of %d bytes, want at most %d, marked as cut", len(a.Message), maxAnnotationText)
	}
	if n := len([]rune(a.Title)); n != maxAnnotationTitle {
		t.Errorf("title of %d characters, want %d", n, maxAnnotationTitle)
	}
	fileLevel := Annotation{Path: "a.go", Level: LevelWarning, StartColumn: 7}.bounded()
	if fileLevel.StartLine != 1 || fileLevel.EndLine != 1 || fileLevel.StartColumn != 7 || fileLevel.EndColumn != 7 {
		t.Errorf("no line = %+v, want line 1 with its column", fileLevel)
	}
	long := testRun(0)
	long.Summary = strings.Repeat("ü", MaxCheckRunSummary+10)
	s := newChecksStandIn(t)
	in, _ := apiTo(t, s.srv.URL)
	if _, err := in.CreateCheckRun(context.Background(), long); err != nil {
		t.Fatal(err) // the stand-in refuses a summary over maxLength
	}
}

func TestCheckRunWithoutPermissionIsForbidden(t *testing.T) {
	s := newChecksStandIn(t)
	s.fail[1] = func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/checks/runs#create-a-check-run","status":"403"}`))
	}
	in, _ := apiTo(t, s.srv.URL)
	_, err := in.CreateCheckRun(context.Background(), testRun(3))
	if !errors.Is(err, ErrCheckRunForbidden) {
		t.Fatalf("err = %v, want ErrCheckRunForbidden", err)
	}
	if !strings.Contains(err.Error(), "Resource not accessible by integration") || strings.Contains(err.Error(), token) {
		t.Errorf("err = %v, want GitHub's message and never the token", err)
	}
	if n := len(s.got()); n != 1 {
		t.Errorf("%d requests, want the one refused", n)
	}
}

func TestCheckRunUpdateIsRetriedAfterA502(t *testing.T) {
	s := newChecksStandIn(t)
	s.fail[2] = func(w http.ResponseWriter) { w.WriteHeader(http.StatusBadGateway) }
	in, w := apiTo(t, s.srv.URL)
	if _, err := in.CreateCheckRun(context.Background(), testRun(60)); err != nil {
		t.Fatal(err)
	}
	want := []string{"POST 50 in_progress", "PATCH 10 completed", "PATCH 10 completed"}
	if got := batchSizes(s.got()); strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("requests = %q, want %q", got, want)
	}
	if len(w.got()) != 1 {
		t.Errorf("waited %v, want one backoff", w.got())
	}
}

func TestCheckRunCreateAfterA502IsLookedForBeforeItIsSentAgain(t *testing.T) {
	t.Run("not landed: sent again", func(t *testing.T) {
		s := newChecksStandIn(t)
		s.fail[1] = func(w http.ResponseWriter) { w.WriteHeader(http.StatusBadGateway) }
		in, _ := apiTo(t, s.srv.URL)
		res, err := in.CreateCheckRun(context.Background(), testRun(2))
		if err != nil {
			t.Fatal(err)
		}
		calls := s.got()
		if len(calls) != 3 || calls[1].Method != http.MethodGet || calls[2].Method != http.MethodPost {
			t.Fatalf("requests = %v, want POST, GET (look for it), POST", batchSizes(calls))
		}
		if !strings.Contains(calls[1].Path, "/commits/"+testRun(0).HeadSHA+"/check-runs?check_name=the-loop") {
			t.Errorf("looked in %s", calls[1].Path)
		}
		if res.ID != 4200 {
			t.Errorf("id = %d", res.ID)
		}
	})
	t.Run("landed: not sent again", func(t *testing.T) {
		s := newChecksStandIn(t)
		// The create lands, and its answer is lost on the way back.
		s.runs = append(s.runs, map[string]any{"id": 77, "external_id": "the-loop/run-1", "html_url": "https://github.example/runs/77"})
		s.fail[1] = func(w http.ResponseWriter) { w.WriteHeader(http.StatusGatewayTimeout) }
		in, _ := apiTo(t, s.srv.URL)
		res, err := in.CreateCheckRun(context.Background(), testRun(70))
		if err != nil {
			t.Fatal(err)
		}
		calls := s.got()
		if len(calls) != 3 || calls[1].Method != http.MethodGet || calls[2].Method != http.MethodPatch ||
			calls[2].Path != "/repos/acme/shop/check-runs/77" {
			t.Fatalf("requests = %v, want POST, GET, then the update of run 77", batchSizes(calls))
		}
		if res.ID != 77 {
			t.Errorf("id = %d, want the one found", res.ID)
		}
	})
}

func TestCheckRunIsRetriedAfterARateLimit(t *testing.T) {
	s := newChecksStandIn(t)
	s.fail[1] = func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`{"message":"You have exceeded a secondary rate limit"}`))
	}
	in, w := apiTo(t, s.srv.URL)
	if _, err := in.CreateCheckRun(context.Background(), testRun(1)); err != nil {
		t.Fatal(err)
	}
	if got := batchSizes(s.got()); len(got) != 2 || got[1] != "POST 1 completed" {
		t.Errorf("requests = %q, want the create twice", got)
	}
	if d := w.got(); len(d) != 1 || d[0].Seconds() != 3 {
		t.Errorf("waited %v, want Retry-After's 3s", d)
	}
}

func TestCheckRunWithoutATokenIsUnavailable(t *testing.T) {
	in, err := New(Options{Transport: TransportAPI, Env: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.CreateCheckRun(context.Background(), testRun(1)); err == nil || !strings.Contains(err.Error(), "GH_TOKEN") {
		t.Errorf("err = %v, want it to name the token variables", err)
	}
}
