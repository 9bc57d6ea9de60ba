package github

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/the-loop/the-loop/channels/github/githubtest"
)

// reviewPage is one page of the reviews listing in the shape GitHub's REST
// description gives it ("List reviews for a pull request": id, node_id,
// user, body, state upper case, html_url, pull_request_url, _links,
// submitted_at, commit_id, author_association), one review of each state,
// a pending one with no submitted_at and a null body among them.
const reviewPage = `[
 {"id": 80, "node_id": "MDE3OlB1bGxSZXF1ZXN0UmV2aWV3ODA=", "user": {"login": "octocat", "id": 1, "type": "User", "site_admin": false},
  "body": "Here is the body for the review.", "state": "APPROVED", "html_url": "https://github.com/octocat/Hello-World/pull/12#pullrequestreview-80",
  "pull_request_url": "https://api.github.com/repos/octocat/Hello-World/pulls/12",
  "_links": {"html": {"href": "https://github.com/octocat/Hello-World/pull/12#pullrequestreview-80"}, "pull_request": {"href": "https://api.github.com/repos/octocat/Hello-World/pulls/12"}},
  "submitted_at": "2019-11-17T17:43:43Z", "commit_id": "ecdd80bb57125d7ba9641ffaa4d7d2c19d3f3091", "author_association": "COLLABORATOR"},
 {"id": 81, "user": {"login": "hubot"}, "body": "", "state": "CHANGES_REQUESTED", "submitted_at": "2019-11-17T18:00:00Z"},
 {"id": 82, "user": {"login": "hubot"}, "body": null, "state": "COMMENTED", "submitted_at": "2019-11-17T18:05:00Z"},
 {"id": 83, "user": {"login": "octocat"}, "body": "was fine", "state": "DISMISSED", "submitted_at": "2019-11-17T18:10:00Z"},
 {"id": 84, "user": {"login": "octocat"}, "body": "draft", "state": "PENDING"}
]`

func TestListReviewsReadsGitHubsShape(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/repos/acme/shop/pulls/30/reviews" || r.URL.Query().Get("per_page") != "100" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(reviewPage))
	}))
	defer srv.Close()
	in, _ := apiTo(t, srv.URL)
	res, err := in.Call(OpListReviews, map[string]any{"ref": "github:acme/shop#30"})
	if err != nil {
		t.Fatal(err)
	}
	list := res["reviews"].([]any)
	if len(list) != 5 {
		t.Fatalf("%d reviews, want 5", len(list))
	}
	want := []map[string]any{
		{"id": int64(80), "author": "octocat", "body": "Here is the body for the review.", "state": "APPROVED", "submitted_at": "2019-11-17T17:43:43Z"},
		{"id": int64(81), "author": "hubot", "body": "", "state": "CHANGES_REQUESTED", "submitted_at": "2019-11-17T18:00:00Z"},
		{"id": int64(82), "author": "hubot", "body": "", "state": "COMMENTED", "submitted_at": "2019-11-17T18:05:00Z"},
		{"id": int64(83), "author": "octocat", "body": "was fine", "state": "DISMISSED", "submitted_at": "2019-11-17T18:10:00Z"},
		{"id": int64(84), "author": "octocat", "body": "draft", "state": "PENDING"},
	}
	for i, w := range want {
		got := list[i].(map[string]any)
		if len(got) != len(w) {
			t.Errorf("review %d: %v, want %v", i, got, w)
			continue
		}
		for k, v := range w {
			if got[k] != v {
				t.Errorf("review %d: %s = %v, want %v", i, k, got[k], v)
			}
		}
	}
}

func TestListReviewsFollowsEveryPage(t *testing.T) {
	var rs []githubtest.Review
	for i := range 230 {
		rs = append(rs, githubtest.Review{ID: int64(i + 1), Author: "u" + strconv.Itoa(i), State: "COMMENTED",
			SubmittedAt: time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC)})
	}
	srv := fakeGitHub(t, githubtest.Issue{})
	srv.AddIssue("acme/shop#30", githubtest.Issue{Reviews: rs})
	in, _ := apiTo(t, srv.URL)
	res, err := in.Call(OpListReviews, map[string]any{"ref": "github:acme/shop#30"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res["reviews"].([]any)); n != 230 {
		t.Fatalf("%d reviews, want 230", n)
	}
	want := []string{
		"GET /user",
		"GET /repos/acme/shop/pulls/30/reviews?per_page=100",
		"GET /repos/acme/shop/pulls/30/reviews?page=2&per_page=100",
		"GET /repos/acme/shop/pulls/30/reviews?page=3&per_page=100",
	}
	if got := calls(srv); !slices.Equal(got, want) {
		t.Errorf("calls %v, want %v", got, want)
	}
}

func TestAReviewsListingThatIsNotOneIsAnError(t *testing.T) {
	for _, page := range []string{`[{"id": "eighty"}]`, `{"message": "not a list"}`} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/user" {
				w.Write([]byte(`{"login": "the-loop-bot"}`))
				return
			}
			w.Write([]byte(page))
		}))
		in, _ := apiTo(t, srv.URL)
		_, err := in.Call(OpListReviews, map[string]any{"ref": "github:acme/shop#30"})
		var ge *Error
		if !errors.As(err, &ge) || ge.Op != OpListReviews {
			t.Errorf("%s: got %v, want a list-reviews error", page, err)
		}
		srv.Close()
	}
	srv := fakeGitHub(t, githubtest.Issue{})
	in, _ := apiTo(t, srv.URL)
	_, err := in.Call(OpListReviews, map[string]any{"ref": "github:acme/shop#99"})
	var ge *Error
	if !errors.As(err, &ge) || ge.Status != 404 {
		t.Errorf("no such pull request: %v", err)
	}
}

func TestTheCLITransportListsReviews(t *testing.T) {
	runs := fakeGH(t, `{"login": "b"}`, `[{"id": 1, "user": {"login": "a"}, "body": null, "state": "APPROVED", "submitted_at": "2026-03-09T10:00:00Z"}]`+"\n"+
		`[{"id": 2, "user": {"login": "b"}, "body": "no", "state": "CHANGES_REQUESTED", "submitted_at": "2026-03-09T10:01:00Z"}]`)
	in, _ := cliIntegration(t)
	res, err := in.Call(OpListReviews, map[string]any{"ref": "github:acme/shop#30"})
	if err != nil {
		t.Fatal(err)
	}
	rs := res["reviews"].([]any)
	if len(rs) != 2 || rs[0].(map[string]any)["state"] != "APPROVED" || rs[1].(map[string]any)["author"] != "b" {
		t.Errorf("reviews %v", rs)
	}
	if rs[0].(map[string]any)["self"] != nil || rs[1].(map[string]any)["self"] != true {
		t.Errorf("reviews %v: want the second, by gh's own login b, self", rs)
	}
	argv, _ := run(t, runs, 2)
	want := slices.Concat([]string{"api", "--method", "GET"}, ghHeaders, []string{"--paginate", "repos/acme/shop/pulls/30/reviews?per_page=100"})
	if !slices.Equal(argv, want) {
		t.Errorf("gh %q, want %q", argv, want)
	}
}

func TestListReviewCommentsReadsThePullRequestsDiffComments(t *testing.T) {
	srv := fakeGitHub(t, githubtest.Issue{})
	srv.AddIssue("acme/shop#30", githubtest.Issue{ReviewComments: []githubtest.Comment{
		{Author: "alice", Body: "LGTM", UpdatedAt: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}}})
	in, _ := apiTo(t, srv.URL)
	res, err := in.Call(OpListReviewComments, map[string]any{"ref": "github:acme/shop#30"})
	if err != nil {
		t.Fatal(err)
	}
	cs := res["comments"].([]any)
	if len(cs) != 1 || cs[0].(map[string]any)["body"] != "LGTM" || cs[0].(map[string]any)["updated_at"] != "2026-01-02T00:00:00Z" {
		t.Errorf("comments %v", cs)
	}
	if got := calls(srv); !slices.Equal(got, []string{"GET /user", "GET /repos/acme/shop/pulls/30/comments?per_page=100"}) {
		t.Errorf("calls %v", got)
	}
}
