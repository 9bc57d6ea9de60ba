package github

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/the-loop/the-loop/builtins"
	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/github/githubtest"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/policy"
)

// userCalls counts the GET /user requests srv received.
func userCalls(srv *githubtest.Server) int {
	n := 0
	for _, c := range srv.Calls() {
		if c.Method == "GET" && c.Path == "/user" {
			n++
		}
	}
	return n
}

func withState(root string) func(*Options) { return func(o *Options) { o.StateRoot = root } }

func TestIdentityIsAskedOnceAndKeptInTheStateRoot(t *testing.T) {
	srv := fakeGitHub(t, githubtest.Issue{})
	srv.SetLogin("Operator")
	root := filepath.Join(t.TempDir(), "state")
	in, _ := apiTo(t, srv.URL, withState(root))
	for range 3 {
		if got, err := in.Identity(context.Background()); err != nil || got != "Operator" {
			t.Fatalf("Identity = %q, %v; want Operator", got, err)
		}
	}
	if n := userCalls(srv); n != 1 {
		t.Errorf("GET /user asked %d times, want once", n)
	}
	path := filepath.Join(root, IdentityFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("%s is %v, want 0600: the state root is the operator's", path, fi.Mode().Perm())
	}
	if strings.Contains(string(data), token) || !strings.Contains(string(data), `"login": "Operator"`) {
		t.Errorf("the identity file holds the token, or not the login:\n%s", data)
	}

	// Another process with the same credential reads it, and does not ask.
	again, _ := apiTo(t, srv.URL, withState(root))
	if got, err := again.Identity(context.Background()); err != nil || got != "Operator" || userCalls(srv) != 1 {
		t.Errorf("a second integration: %q, %v after %d questions; want Operator from the file", got, err, userCalls(srv))
	}

	// Another token may be another account: it is asked, and both are kept.
	srv.SetToken("")
	srv.SetLogin("someone-else")
	other, _ := apiTo(t, srv.URL, withState(root), func(o *Options) { o.Env = env(map[string]string{"GH_TOKEN": "ghp_another"}) })
	if got, err := other.Identity(context.Background()); err != nil || got != "someone-else" || userCalls(srv) != 2 {
		t.Errorf("another token: %q, %v after %d questions; want someone-else, asked", got, err, userCalls(srv))
	}
	doc, err := readIdentities(root)
	if err != nil || len(doc.Identities) != 2 || doc.Identities[0].Login != "someone-else" || doc.Identities[1].Login != "Operator" {
		t.Errorf("kept %+v, %v; want both credentials, the latest first", doc, err)
	}
}

func TestAnIdentityThatCannotBeLearnedIsNotKeptAndAskedAgain(t *testing.T) {
	srv := fakeGitHub(t, githubtest.Issue{Comments: []githubtest.Comment{{Author: "the-loop-bot", Body: "approved"}}})
	root := t.TempDir()
	in, _ := apiTo(t, srv.URL, withState(root), func(o *Options) { o.MaxAttempts = 1 })
	for _, f := range []githubtest.Fault{
		{Path: "/user", Status: 502, Body: `{"message": "Server Error"}`},
		{Path: "/user", Status: 401, Body: `{"message": "Bad credentials"}`},
		{Path: "/user", Status: 200, Body: `{"id": 1}`},
	} {
		srv.Fail(f)
		if got, err := in.Identity(context.Background()); err == nil {
			t.Errorf("GET /user answered %d %s: Identity = %q, want an error", f.Status, f.Body, got)
		}
		if _, err := os.Stat(filepath.Join(root, IdentityFile)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a failed question was kept: %v", err)
		}
	}
	// A listing needs the identity: it fails closed rather than hand a
	// gate the-loop's own comment as a person's.
	srv.Fail(githubtest.Fault{Path: "/user", Status: 503})
	_, err := in.Call(OpListComments, map[string]any{"ref": "github:acme/shop#3"})
	if err == nil || !strings.Contains(err.Error(), "the token's own login is not known") || !strings.Contains(err.Error(), "GET /user: 503") {
		t.Errorf("list-comments without an identity: %v, want it refused, naming GET /user", err)
	}
	// GitHub is back: asked again, and kept.
	res, err := in.Call(OpListComments, map[string]any{"ref": "github:acme/shop#3"})
	if err != nil {
		t.Fatal(err)
	}
	if c := res["comments"].([]any)[0].(map[string]any); c["self"] != true {
		t.Errorf("the token's own comment is not self: %v", c)
	}
	if _, err := os.Stat(filepath.Join(root, IdentityFile)); err != nil {
		t.Errorf("the identity learned is not kept: %v", err)
	}
}

func TestACredentialThatIsNoUsersHasNoLogin(t *testing.T) {
	srv := fakeGitHub(t, githubtest.Issue{Comments: []githubtest.Comment{{Author: "the-loop-bot", Body: "approved"}}})
	// What GitHub answers a GitHub App's installation token.
	srv.Fail(githubtest.Fault{Path: "/user", Status: 403, Body: `{"message": "Resource not accessible by integration"}`})
	root := t.TempDir()
	in, _ := apiTo(t, srv.URL, withState(root))
	if got, err := in.Identity(context.Background()); err != nil || got != "" {
		t.Fatalf("Identity = %q, %v; want no login, no error", got, err)
	}
	res, err := in.Call(OpListComments, map[string]any{"ref": "github:acme/shop#3"})
	if err != nil {
		t.Fatal(err)
	}
	if c := res["comments"].([]any)[0].(map[string]any); c["self"] != nil {
		t.Errorf("a comment is self by a credential that is no user's: %v", c)
	}
	again, _ := apiTo(t, srv.URL, withState(root))
	if got, err := again.Identity(context.Background()); err != nil || got != "" || userCalls(srv) != 1 {
		t.Errorf("the answer is not kept: %q, %v after %d questions", got, err, userCalls(srv))
	}
}

func TestAnIdentityFileThatDoesNotReadIsAskedAgainAndReplaced(t *testing.T) {
	srv := fakeGitHub(t, githubtest.Issue{})
	root := t.TempDir()
	path := filepath.Join(root, IdentityFile)
	os.MkdirAll(filepath.Dir(path), 0o700)
	for _, bad := range []string{`{"version": 1, "identities": [{"login": "x"}]}`, `{"version": 9, "identities": []}`, `{"version": 1, "extra": 1}`, `not json`} {
		os.WriteFile(path, []byte(bad), 0o600)
		var log bytes.Buffer
		in, _ := apiTo(t, srv.URL, withState(root), func(o *Options) { o.Log = slog.New(slog.NewTextHandler(&log, nil)) })
		if got, err := in.Identity(context.Background()); err != nil || got != githubtest.DefaultLogin {
			t.Errorf("%s: Identity = %q, %v", bad, got, err)
		}
		if !strings.Contains(log.String(), "could not read the kept GitHub identity") {
			t.Errorf("%s: not logged:\n%s", bad, log.String())
		}
		if doc, err := readIdentities(root); err != nil || len(doc.Identities) != 1 {
			t.Errorf("%s: not replaced: %+v, %v", bad, doc, err)
		}
	}
}

func TestAStateRootThatCannotBeWrittenStillAnswers(t *testing.T) {
	srv := fakeGitHub(t, githubtest.Issue{})
	file := filepath.Join(t.TempDir(), "not-a-directory")
	os.WriteFile(file, nil, 0o600)
	var log bytes.Buffer
	in, _ := apiTo(t, srv.URL, withState(file), func(o *Options) { o.Log = slog.New(slog.NewTextHandler(&log, nil)) })
	for range 2 {
		if got, err := in.Identity(context.Background()); err != nil || got != githubtest.DefaultLogin {
			t.Fatalf("Identity = %q, %v", got, err)
		}
	}
	if userCalls(srv) != 1 || !strings.Contains(log.String(), "could not keep the GitHub identity") {
		t.Errorf("asked %d times; log:\n%s", userCalls(srv), log.String())
	}
}

func TestIdentityIsAskedOnceBetweenConcurrentCallers(t *testing.T) {
	srv := fakeGitHub(t, githubtest.Issue{})
	in, _ := apiTo(t, srv.URL)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			_, err := in.Identity(context.Background())
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if n := userCalls(srv); n != 1 {
		t.Errorf("asked %d times, want once", n)
	}
}

func TestAnUnavailableIntegrationHasNoIdentity(t *testing.T) {
	in, err := New(Options{Transport: TransportAPI, Env: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := in.Identity(ctx); !errors.Is(err, graph.ErrIntegrationUnavailable) {
		t.Errorf("got %v, want ErrIntegrationUnavailable", err)
	}
}

func TestFromConfigKeepsTheIdentityInTheStateRoot(t *testing.T) {
	srv := fakeGitHub(t, githubtest.Issue{})
	root := t.TempDir()
	cli := &policy.CLIConfig{Doc: map[string]any{
		"state":        map[string]any{"root": root},
		"integrations": map[string]any{"github": map[string]any{"transport": "api", "api": map[string]any{"baseUrl": srv.URL}}},
	}}
	in, err := FromConfig(cli, env(map[string]string{"GH_TOKEN": token}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Identity(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, IdentityFile)); err != nil {
		t.Errorf("not kept in the config's state root: %v", err)
	}
}

func TestListCommentsSaysWhichAreTheTokensOwn(t *testing.T) {
	srv := fakeGitHub(t, githubtest.Issue{Comments: []githubtest.Comment{
		{Author: "alice", Body: "approved"},
		{Author: "The-Loop-Bot", Body: "approved"},
	}})
	in, _ := apiTo(t, srv.URL)
	res, err := in.Call(OpListComments, map[string]any{"ref": "github:acme/shop#3"})
	if err != nil {
		t.Fatal(err)
	}
	var self []any
	for _, c := range res["comments"].([]any) {
		self = append(self, c.(map[string]any)["self"])
	}
	if !slices.Equal(self, []any{nil, true}) {
		t.Errorf("self %v, want only the token's own login's comment (logins are case-insensitive)", self)
	}
}

func TestARelayIsPostedUnmarkedAndNothingElseIs(t *testing.T) {
	srv := fakeGitHub(t, githubtest.Issue{})
	in, _ := apiTo(t, srv.URL)
	work, _ := channels.ParseRef("github:acme/shop#3")
	l := NewLedger(in, &policy.CLIConfig{Doc: map[string]any{}})
	relay, err := l.Body(Entry{Work: work, Type: channels.EventGateFeedback, Source: "slack", Author: "U0456", Text: "approved", Gate: channels.GateOpen})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Call(OpAddComment, map[string]any{"ref": work.String(), "body": relay, ParamRelay: true}); err != nil {
		t.Fatal(err)
	}
	is, _ := srv.Issue("acme/shop#3")
	if len(is.Comments) != 1 || is.Comments[0].Body != relay {
		t.Fatalf("the relay went up as %+v, want its body unchanged", is.Comments)
	}
	for _, tc := range []struct {
		name  string
		body  string
		relay any
	}{
		{"a plain text", "approved", true},
		{"a marked relay", builtins.MarkSelfAuthored(relay), true},
		{"a reply record", builtins.StampEnvelope("> approved", builtins.Envelope{Type: channels.EventReply, Source: "slack"}), true},
		{"a relay flag that is not a boolean", relay, "yes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := in.Call(OpAddComment, map[string]any{"ref": work.String(), "body": tc.body, ParamRelay: tc.relay})
			if err == nil || !strings.Contains(err.Error(), "params.relay") {
				t.Errorf("got %v, want it refused", err)
			}
		})
	}
	if is, _ := srv.Issue("acme/shop#3"); len(is.Comments) != 1 {
		t.Errorf("a refused relay was posted: %+v", is.Comments[1:])
	}
	// relay false is an ordinary comment: marked.
	if _, err := in.Call(OpAddComment, map[string]any{"ref": work.String(), "body": relay, ParamRelay: false}); err != nil {
		t.Fatal(err)
	}
	if is, _ := srv.Issue("acme/shop#3"); !builtins.IsSelfAuthored(is.Comments[1].Body) {
		t.Errorf("relay false posted unmarked:\n%s", is.Comments[1].Body)
	}
}

func TestTheLedgerPostsOnlyARelayUnmarked(t *testing.T) {
	srv := fakeGitHub(t, githubtest.Issue{})
	in, _ := apiTo(t, srv.URL)
	work, _ := channels.ParseRef("github:acme/shop#3")
	l := NewLedger(in, &policy.CLIConfig{Doc: map[string]any{}})
	for _, typ := range []string{channels.EventGateFeedback, channels.EventControl, channels.EventReply} {
		if _, err := l.Record(context.Background(), Entry{Work: work, Type: typ, Source: "slack", Author: "U0456", Text: "approved"}); err != nil {
			t.Fatal(err)
		}
	}
	is, _ := srv.Issue("acme/shop#3")
	var marked []bool
	for _, c := range is.Comments {
		marked = append(marked, builtins.IsSelfAuthored(c.Body))
	}
	if !slices.Equal(marked, []bool{false, false, true}) {
		t.Errorf("marked %v, want the gate answer and the command unmarked, the reply marked", marked)
	}
}
