package github

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/the-loop/the-loop/channels/github/githubtest"
	"github.com/the-loop/the-loop/graph"
)

const token = "ghp_s3cr3tT0kenValue"

// waits records what a call slept, instead of sleeping.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.d = append(w.d, d)
	return ctx.Err()
}

func (w *waits) got() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.d)
}

var testNow = time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// apiTo is the api transport on srv, with a fake clock and sleep.
func apiTo(t *testing.T, baseURL string, edit ...func(*Options)) (*Integration, *waits) {
	t.Helper()
	w := &waits{}
	o := Options{Transport: TransportAPI, BaseURL: baseURL, Env: env(map[string]string{"GH_TOKEN": token}),
		Sleep: w.sleep, Now: func() time.Time { return testNow }}
	for _, e := range edit {
		e(&o)
	}
	in, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Available(); err != nil || in.Transport() != TransportAPI {
		t.Fatalf("transport %q: %v", in.Transport(), err)
	}
	return in, w
}

// fakeGitHub is a fake GitHub with acme/shop#3 on it.
func fakeGitHub(t *testing.T, is githubtest.Issue) *githubtest.Server {
	t.Helper()
	srv := githubtest.NewServer()
	t.Cleanup(srv.Close)
	srv.SetToken(token)
	srv.AddIssue("acme/shop#3", is)
	return srv
}

func calls(srv *githubtest.Server) []string {
	var out []string
	for _, c := range srv.Calls() {
		out = append(out, c.String())
	}
	return out
}

func TestAddCommentPostsTheBodyMarkedAsTheLoopsOwnWithTheToken(t *testing.T) {
	srv := fakeGitHub(t, githubtest.Issue{})
	in, _ := apiTo(t, srv.URL)
	res, err := in.Call(OpAddComment, map[string]any{"ref": "github:acme/shop#3", "body": "hello\nthere"})
	if err != nil {
		t.Fatal(err)
	}
	marked := "hello\nthere\n\n🤖 _the-loop, autonomous comment_\n<!-- the-loop:agent-comment -->\n"
	got := srv.Calls()
	if len(got) != 1 || got[0].Method != "POST" || got[0].Path != "/repos/acme/shop/issues/3/comments" ||
		got[0].Body != `{"body":"hello\nthere\n\n🤖 _the-loop, autonomous comment_\n\u003c!-- the-loop:agent-comment --\u003e\n"}` || got[0].Authorization != "Bearer "+token {
		t.Errorf("calls %+v", got)
	}
	if res["body"] != marked || res["id"] == nil || res["created_at"] == "" {
		t.Errorf("result %v", res)
	}
}

func TestLabelsAreAddedBesideTheIssuesOwnNeverReplaced(t *testing.T) {
	srv := fakeGitHub(t, githubtest.Issue{Labels: []string{"bug", "loop:requirements", "priority/high"}})
	in, _ := apiTo(t, srv.URL)
	res, err := in.Call(OpSetLabels, map[string]any{"ref": "github:acme/shop#3", "labels": []any{"loop:design"}, "replacePrefix": "loop:"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`POST /repos/acme/shop/issues/3/labels {"labels":["loop:design"]}`,
		`DELETE /repos/acme/shop/issues/3/labels/loop:requirements`,
	}
	if got := calls(srv); !slices.Equal(got, want) {
		t.Errorf("calls\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	is, _ := srv.Issue("acme/shop#3")
	if !slices.Equal(is.Labels, []string{"bug", "priority/high", "loop:design"}) {
		t.Errorf("labels %v: the issue's own labels must stay", is.Labels)
	}
	if !reflect.DeepEqual(res["labels"], []any{"bug", "priority/high", "loop:design"}) {
		t.Errorf("result %v", res)
	}

	// add-labels only adds, whatever the prefix says.
	if _, err := in.Call(OpAddLabels, map[string]any{"ref": "github:acme/shop#3", "labels": []string{"loop:tasks"}, "replacePrefix": "loop:"}); err != nil {
		t.Fatal(err)
	}
	is, _ = srv.Issue("acme/shop#3")
	if !slices.Equal(is.Labels, []string{"bug", "priority/high", "loop:design", "loop:tasks"}) {
		t.Errorf("labels %v", is.Labels)
	}
	for _, c := range srv.Calls() {
		if c.Method == http.MethodPut {
			t.Errorf("%s replaces the issue's labels", c)
		}
	}
}

func TestALabelWithASlashIsEscapedInItsPath(t *testing.T) {
	srv := fakeGitHub(t, githubtest.Issue{Labels: []string{"area/api", "x"}})
	in, _ := apiTo(t, srv.URL)
	res, err := in.Call(OpRemoveLabel, map[string]any{"ref": "github:acme/shop#3", "label": "area/api"})
	if err != nil || !reflect.DeepEqual(res["labels"], []any{"x"}) {
		t.Fatalf("got %v, %v", res, err)
	}
	if got := calls(srv); got[0] != "DELETE /repos/acme/shop/issues/3/labels/area%2Fapi" {
		t.Errorf("calls %v", got)
	}
	_, err = in.Call(OpRemoveLabel, map[string]any{"ref": "github:acme/shop#3", "label": "area/api"})
	var ge *Error
	if !errors.As(err, &ge) || ge.Status != 404 || !strings.Contains(err.Error(), "Label does not exist") {
		t.Errorf("removing a label the issue does not carry: %v", err)
	}
}

func TestListCommentsFollowsEveryPage(t *testing.T) {
	var cs []githubtest.Comment
	for i := range 250 {
		cs = append(cs, githubtest.Comment{Author: "u" + strconv.Itoa(i), Body: "c" + strconv.Itoa(i)})
	}
	srv := fakeGitHub(t, githubtest.Issue{Comments: cs})
	in, _ := apiTo(t, srv.URL)
	res, err := in.Call(OpListComments, map[string]any{"ref": "github:acme/shop#3"})
	if err != nil {
		t.Fatal(err)
	}
	list := res["comments"].([]any)
	if len(list) != 250 {
		t.Fatalf("%d comments, want 250", len(list))
	}
	first, last := list[0].(map[string]any), list[249].(map[string]any)
	if first["author"] != "u0" || first["body"] != "c0" || first["created_at"] != "2026-01-01T00:01:00Z" || last["author"] != "u249" {
		t.Errorf("first %v, last %v", first, last)
	}
	want := []string{
		"GET /user",
		"GET /repos/acme/shop/issues/3/comments?per_page=100",
		"GET /repos/acme/shop/issues/3/comments?page=2&per_page=100",
		"GET /repos/acme/shop/issues/3/comments?page=3&per_page=100",
	}
	if got := calls(srv); !slices.Equal(got, want) {
		t.Errorf("calls %v, want %v", got, want)
	}
}

func TestAnEnterpriseBaseURLKeepsItsPathAcrossPages(t *testing.T) {
	srv := githubtest.NewServerAt("/api/v3")
	defer srv.Close()
	srv.AddIssue("acme/shop#3", githubtest.Issue{Labels: []string{"a"}, Comments: make([]githubtest.Comment, 101)})
	in, _ := apiTo(t, srv.URL+"/")
	cs, err := in.Comments(context.Background(), Ref{Owner: "acme", Repo: "shop", Number: 3})
	if err != nil || len(cs) != 101 {
		t.Fatalf("%d comments, %v", len(cs), err)
	}
}

func TestRetryAfterIsWaitedOutThenTheCallIsMade(t *testing.T) {
	srv := fakeGitHub(t, githubtest.Issue{})
	srv.Fail(githubtest.Fault{Status: 403, Header: map[string]string{"Retry-After": "7"},
		Body: `{"message": "You have exceeded a secondary rate limit."}`})
	in, w := apiTo(t, srv.URL)
	if _, err := in.Call(OpAddComment, map[string]any{"ref": "github:acme/shop#3", "body": "x"}); err != nil {
		t.Fatal(err)
	}
	if got := w.got(); !slices.Equal(got, []time.Duration{7 * time.Second}) {
		t.Errorf("waited %v, want the 7s Retry-After asked for", got)
	}
	if n := len(srv.Calls()); n != 2 {
		t.Errorf("%d requests, want the limited one and its retry", n)
	}
}

func TestASecondaryLimitWithoutATimeWaitsLongerEachTimeThenGivesUpNamingIt(t *testing.T) {
	limited := githubtest.Fault{Status: 403, Body: `{"message": "You have exceeded a secondary rate limit. Please wait a few minutes."}`, Times: 2}
	srv := fakeGitHub(t, githubtest.Issue{})
	srv.Fail(limited)
	in, w := apiTo(t, srv.URL, func(o *Options) { o.MaxWait = 5 * time.Minute })
	if _, err := in.Call(OpListLabels, map[string]any{"ref": "github:acme/shop#3"}); err != nil {
		t.Fatal(err)
	}
	if got := w.got(); !slices.Equal(got, []time.Duration{time.Minute, 2 * time.Minute}) {
		t.Errorf("waited %v, want a minute, then two", got)
	}

	srv.Fail(limited)
	in, w = apiTo(t, srv.URL) // waits a minute at most in all
	_, err := in.Call(OpListLabels, map[string]any{"ref": "github:acme/shop#3"})
	var ge *Error
	if !errors.As(err, &ge) || !ge.RateLimited || ge.Status != 403 {
		t.Fatalf("got %v, want a rate-limited Error", err)
	}
	for _, want := range []string{"github list-labels github:acme/shop#3", "GET /repos/acme/shop/issues/3/labels", "403 Forbidden", "secondary rate limit", "longer than a call waits (1m0s)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if got := w.got(); !slices.Equal(got, []time.Duration{time.Minute}) {
		t.Errorf("waited %v", got)
	}
}

func TestAnExhaustedPrimaryLimitWaitsForItsResetOrSaysWhenItIs(t *testing.T) {
	srv := fakeGitHub(t, githubtest.Issue{})
	reset := func(in time.Duration) githubtest.Fault {
		return githubtest.Fault{Status: 403, Body: `{"message": "API rate limit exceeded"}`, Header: map[string]string{
			"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": strconv.FormatInt(testNow.Add(in).Unix(), 10)}}
	}
	srv.Fail(reset(30 * time.Second))
	in, w := apiTo(t, srv.URL)
	if _, err := in.Call(OpListComments, map[string]any{"ref": "github:acme/shop#3"}); err != nil {
		t.Fatal(err)
	}
	if got := w.got(); !slices.Equal(got, []time.Duration{31 * time.Second}) {
		t.Errorf("waited %v, want until a second past the reset", got)
	}
	srv.Fail(reset(time.Hour))
	_, err := in.Call(OpListComments, map[string]any{"ref": "github:acme/shop#3"})
	if err == nil || !strings.Contains(err.Error(), "primary rate limit (it resets at 2026-03-09T13:00:00Z)") {
		t.Errorf("got %v, want the limit and its reset named", err)
	}
}

func TestAServerErrorIsRetriedOnlyForARequestThatCanBeRepeated(t *testing.T) {
	srv := fakeGitHub(t, githubtest.Issue{})
	srv.Fail(githubtest.Fault{Status: 502, Body: "bad gateway"})
	in, w := apiTo(t, srv.URL)
	if _, err := in.Call(OpListComments, map[string]any{"ref": "github:acme/shop#3"}); err != nil {
		t.Fatalf("a GET after a 502: %v", err)
	}
	if got := w.got(); !slices.Equal(got, []time.Duration{time.Second}) {
		t.Errorf("waited %v", got)
	}
	srv.Fail(githubtest.Fault{Status: 502, Body: "bad gateway"})
	_, err := in.Call(OpAddComment, map[string]any{"ref": "github:acme/shop#3", "body": "once"})
	if err == nil || !strings.Contains(err.Error(), "502 Bad Gateway") {
		t.Errorf("got %v, want the 502: a comment that may have been posted is not posted again", err)
	}
	if is, _ := srv.Issue("acme/shop#3"); len(is.Comments) != 0 {
		t.Errorf("comments %v", is.Comments)
	}
}

func TestANotFoundNamesTheOperationTheRefAndTheRequest(t *testing.T) {
	srv := fakeGitHub(t, githubtest.Issue{})
	in, w := apiTo(t, srv.URL)
	_, err := in.Call(OpListComments, map[string]any{"ref": "github:acme/shop#99"})
	want := "github list-comments github:acme/shop#99: GET /repos/acme/shop/issues/99/comments: 404 Not Found: Not Found; no such issue, pull request or repository, or the token cannot see it"
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	if len(w.got()) != 0 {
		t.Error("a 404 was retried")
	}
}

func TestTheTokenIsNeverInAnError(t *testing.T) {
	srv := fakeGitHub(t, githubtest.Issue{})
	srv.Fail(githubtest.Fault{Status: 401, Body: fmt.Sprintf(`{"message": "Bad credentials: %s"}`, token)})
	in, _ := apiTo(t, srv.URL)
	_, err := in.Call(OpAddComment, map[string]any{"ref": "github:acme/shop#3", "body": "x"})
	if err == nil || strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "GitHub refused the token in $GH_TOKEN") {
		t.Errorf("got %v", err)
	}
	dead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		panic(http.ErrAbortHandler) // the connection drops
	}))
	defer dead.Close()
	in, _ = apiTo(t, dead.URL)
	_, err = in.Call(OpListLabels, map[string]any{"ref": "github:acme/shop#3"})
	if err == nil || strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "github list-labels github:acme/shop#3: GET /repos/acme/shop/issues/3/labels") {
		t.Errorf("got %v", err)
	}
}

func TestARequestThatHangsTimesOut(t *testing.T) {
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer stuck.Close()
	in, w := apiTo(t, stuck.URL, func(o *Options) { o.RequestTimeout = 20 * time.Millisecond })
	start := time.Now()
	_, err := in.Call(OpListLabels, map[string]any{"ref": "github:acme/shop#3"})
	if err == nil || !strings.Contains(err.Error(), "no answer within 20ms") || time.Since(start) > 5*time.Second {
		t.Fatalf("got %v after %s", err, time.Since(start))
	}
	if got := w.got(); len(got) != 3 {
		t.Errorf("waited %v, want three retries before giving up", got)
	}
}

func TestAPageLinkOutsideTheAPIRootIsNotFollowed(t *testing.T) {
	srv := fakeGitHub(t, githubtest.Issue{})
	srv.Fail(githubtest.Fault{Path: "/repos/acme/shop/issues/3/comments", Status: 200, Body: `[]`, Header: map[string]string{"Link": `<https://elsewhere.example/steal?page=2>; rel="next"`}})
	in, _ := apiTo(t, srv.URL)
	_, err := in.Call(OpListComments, map[string]any{"ref": "github:acme/shop#3"})
	if err == nil || !strings.Contains(err.Error(), "is not under") {
		t.Errorf("got %v", err)
	}
}

// Go forwards the Authorization header on a redirect to the same host
// name whatever the port or scheme: a redirect out of the API root is not
// followed, and the token stays where it was sent.
func TestARedirectOutOfTheAPIRootIsNotFollowed(t *testing.T) {
	var leaked atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store(r.Header.Get("Authorization"))
		io.WriteString(w, `[{"id": 1, "user": {"login": "alice"}, "body": "approved", "created_at": "2026-05-02T09:00:00Z"}]`)
	}))
	defer other.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	in, _ := apiTo(t, redirector.URL)
	_, err := in.Call(OpListComments, map[string]any{"ref": "github:acme/shop#3"})
	if err == nil || !strings.Contains(err.Error(), "which is not under") {
		t.Errorf("got %v, want the redirect refused", err)
	}
	if got, _ := leaked.Load().(string); got != "" {
		t.Errorf("the token went to the redirect's target: %q", got)
	}
}

func TestReactionsAndReviewRequests(t *testing.T) {
	srv := fakeGitHub(t, githubtest.Issue{Comments: []githubtest.Comment{{ID: 77, Author: "alice", Body: "approved"}}})
	srv.AddIssue("acme/shop#7", githubtest.Issue{})
	in, _ := apiTo(t, srv.URL)
	for _, c := range []struct {
		op     string
		params map[string]any
	}{
		{OpAddReaction, map[string]any{"ref": "github:acme/shop#3", "commentId": float64(77), "content": "eyes"}},
		{OpAddReaction, map[string]any{"ref": "github:acme/shop#3", "content": "hooray"}},
		{OpRequestReviewers, map[string]any{"ref": "github:acme/shop#7", "reviewers": []any{"alice"}, "teamReviewers": []any{"core"}}},
	} {
		if _, err := in.Call(c.op, c.params); err != nil {
			t.Errorf("%s: %v", c.op, err)
		}
	}
	want := []string{
		`POST /repos/acme/shop/issues/comments/77/reactions {"content":"eyes"}`,
		`POST /repos/acme/shop/issues/3/reactions {"content":"hooray"}`,
		`POST /repos/acme/shop/pulls/7/requested_reviewers {"reviewers":["alice"],"team_reviewers":["core"]}`,
	}
	if got := calls(srv); !slices.Equal(got, want) {
		t.Errorf("calls\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	is, _ := srv.Issue("acme/shop#3")
	if !slices.Equal(is.Comments[0].Reactions, []string{"eyes"}) || !slices.Equal(is.Reactions, []string{"hooray"}) {
		t.Errorf("reactions: comment %v, issue %v", is.Comments[0].Reactions, is.Reactions)
	}
}

func TestCallRefusesWhatItCannotDoBeforeCallingOut(t *testing.T) {
	srv := fakeGitHub(t, githubtest.Issue{})
	in, _ := apiTo(t, srv.URL)
	for _, c := range []struct {
		op     string
		params map[string]any
		want   string
	}{
		{"notify", map[string]any{"ref": "github:acme/shop#3"}, "unsupported operation"},
		{OpAddComment, map[string]any{"ref": "issue-3", "body": "x"}, "want github:OWNER/REPO#N"},
		{OpAddComment, map[string]any{"ref": "github:acme/shop#3", "body": " "}, "params.body"},
		{OpSetLabels, map[string]any{"ref": "github:acme/shop#3", "labels": []any{}}, "params.labels"},
		{OpSetLabels, map[string]any{"ref": "github:acme/shop#3", "labels": []any{3}}, "params.labels"},
		{OpRemoveLabel, map[string]any{"ref": "github:acme/shop#3"}, "params.label"},
		{OpRequestReviewers, map[string]any{"ref": "github:acme/shop#3"}, "params.reviewers"},
		{OpAddReaction, map[string]any{"ref": "github:acme/shop#3", "content": "tada"}, `params.content: got "tada"`},
		{OpAddReaction, map[string]any{"ref": "github:acme/shop#3", "content": "eyes", "commentId": -1}, "params.commentId"},
	} {
		_, err := in.Call(c.op, c.params)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: got %v, want %q", c.op, c.params, err, c.want)
		}
	}
	if _, err := in.Call("notify", nil); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("notify: %v does not wrap errors.ErrUnsupported", err)
	}
	if got := srv.Calls(); len(got) != 0 {
		t.Errorf("called out: %v", got)
	}
}

func TestGetLabelsIsTheOriginalsNameForListLabels(t *testing.T) {
	srv := fakeGitHub(t, githubtest.Issue{Labels: []string{"a", "b"}})
	in, _ := apiTo(t, srv.URL)
	res, err := in.Call("get-labels", map[string]any{"ref": "github:acme/shop#3"})
	if err != nil || !reflect.DeepEqual(res["labels"], []any{"a", "b"}) {
		t.Errorf("got %v, %v", res, err)
	}
}

var _ graph.Integration = (*Integration)(nil)

func TestGithubMessageSaysWhatAValidationFailureIsAbout(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"message":"Not Found"}`, "Not Found"},
		// GitHub's answer to a comment over its limit (validation-error).
		{`{"message":"Validation Failed","errors":[{"resource":"IssueComment","code":"custom","field":"body","message":"body is too long (maximum is 65536 characters)"}],"documentation_url":"https://docs.github.com/rest/issues/comments#create-an-issue-comment","status":"422"}`,
			"Validation Failed: body is too long (maximum is 65536 characters)"},
		{`{"message":"Validation Failed","errors":[{"resource":"Label","field":"name","code":"missing_field"}]}`, "Validation Failed: name missing_field"},
		{`{"message":"Validation Failed","errors":"a string"}`, "Validation Failed"},
		{`not json`, ""},
	} {
		if got := githubMessage([]byte(tc.body)); got != tc.want {
			t.Errorf("githubMessage(%s) = %q, want %q", tc.body, got, tc.want)
		}
	}
}
