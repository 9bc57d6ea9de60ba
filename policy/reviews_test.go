package policy

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/the-loop/the-loop/graph"
)

// reviewing answers list-comments and list-reviews of a pull request from
// fixed listings, and fails list-reviews when failing is set.
type reviewing struct {
	mu       sync.Mutex
	calls    []string
	comments []any
	reviews  []any
	diff     []any
	failing  error
}

func (f *reviewing) Name() string { return "fake" }

func (f *reviewing) Call(op string, params map[string]any) (map[string]any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, op+" "+params["ref"].(string))
	if op == opListReviews {
		if f.failing != nil {
			return nil, f.failing
		}
		return map[string]any{"reviews": f.reviews}, nil
	}
	if op == opListReviewComments {
		return map[string]any{"comments": f.diff}, nil
	}
	return map[string]any{"comments": f.comments}, nil
}

// prLoopRepo is repliesRepo with issue-3's pull request 30 at pr-approval,
// entered at 10:49.
func prLoopRepo(t *testing.T) (root, cli string) {
	root, cli = repliesRepo(t)
	p := filepath.Join(root, "docs", "specs", "issue-3", "pr-loops", "pr-30", "graph-state.json")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte(`{"version": 1, "currentNode": "pr-approval", "loop": "pdlc-pr-loop",
  "nodes": {"pr-approval": {"attempts": 1, "enteredAt": "2026-03-09T10:49:00+00:00"}}}`), 0o644)
	return root, cli
}

func prGate(t *testing.T, rep *graph.StatusReport) graph.NodeReport {
	t.Helper()
	for _, n := range rep.Nodes {
		if n.Node == "pr-approval" {
			return n
		}
	}
	t.Fatalf("%s has no pr-approval", rep.WorkItem)
	return graph.NodeReport{}
}

func TestCheckReadsAPullRequestsReviewsForItsInnerLoop(t *testing.T) {
	for _, tc := range []struct {
		name     string
		comments []any
		reviews  []any
		diff     []any
		status   string
		outcome  string
	}{
		{"an approval with no words", nil, []any{
			map[string]any{"author": "alice", "body": "", "state": "APPROVED", "submitted_at": "2026-03-09T11:00:00Z"},
		}, nil, "pass", "approved"},
		{"a request for changes outranks an earlier approving comment", []any{
			map[string]any{"author": "alice", "body": "approved", "created_at": "2026-03-09T10:55:00Z"},
		}, []any{
			map[string]any{"author": "alice", "body": "one more thing", "state": "CHANGES_REQUESTED", "submitted_at": "2026-03-09T11:00:00Z"},
		}, nil, "block", "changes-requested"},
		{"a review before the gate opened answered something else", nil, []any{
			map[string]any{"author": "alice", "body": "", "state": "APPROVED", "submitted_at": "2026-03-09T10:00:00Z"},
		}, nil, "wait", ""},
		{"dismissed and pending reviews are not read, nor a silent comment", nil, []any{
			map[string]any{"author": "alice", "body": "LGTM", "state": "DISMISSED", "submitted_at": "2026-03-09T11:00:00Z"},
			map[string]any{"author": "alice", "body": "LGTM", "state": "PENDING"},
			map[string]any{"author": "alice", "body": " ", "state": "COMMENTED", "submitted_at": "2026-03-09T11:01:00Z"},
		}, nil, "wait", ""},
		{"an approval by someone not on the allowlist", nil, []any{
			map[string]any{"user": map[string]any{"login": "mallory"}, "body": "", "state": "APPROVED", "submitted_at": "2026-03-09T11:00:00Z"},
		}, nil, "wait", ""},
		{"a comment on the diff, read by its words", nil, nil, []any{
			map[string]any{"author": "alice", "body": "LGTM", "created_at": "2026-03-09T11:00:00Z"},
		}, "pass", "approved"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, cli := prLoopRepo(t)
			fake := &reviewing{comments: tc.comments, reviews: tc.reviews, diff: tc.diff}
			e, err := Open(Options{Repo: root, CLIConfig: cli, Events: discard{}, Replies: fake})
			if err != nil {
				t.Fatal(err)
			}
			reports, err := e.Check([]string{"issue-3"}, false, Selector{PR: 30})
			if err != nil {
				t.Fatal(err)
			}
			n := prGate(t, reports[0])
			if n.Status != tc.status || (tc.outcome != "" && n.Outcome != tc.outcome) {
				t.Errorf("got %s %s (%v), want %s %s", n.Status, n.Outcome, n.Messages, tc.status, tc.outcome)
			}
			if want := []string{"list-comments github:acme/shop#30", "list-reviews github:acme/shop#30", "list-review-comments github:acme/shop#30"}; !slices.Equal(fake.calls, want) {
				t.Errorf("calls %v, want %v", fake.calls, want)
			}
		})
	}
}

func TestTheWorkItemsOwnLoopReadsNoReviews(t *testing.T) {
	root, cli := prLoopRepo(t)
	fake := &reviewing{}
	e, err := Open(Options{Repo: root, CLIConfig: cli, Events: discard{}, Replies: fake})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Check([]string{"issue-3"}, false, Selector{}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fake.calls, []string{"list-comments github:acme/shop#3"}) {
		t.Errorf("calls %v", fake.calls)
	}
}

func TestReviewsThatCannotBeReadFailTheItem(t *testing.T) {
	root, cli := prLoopRepo(t)
	fake := &reviewing{failing: errors.New("github list-reviews github:acme/shop#30: 502 Bad Gateway")}
	e, err := Open(Options{Repo: root, CLIConfig: cli, Events: discard{}, Replies: fake})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Check([]string{"issue-3"}, false, Selector{PR: 30})
	var failed ItemsError
	var re *ReplyError
	if !errors.As(err, &failed) || !errors.As(failed[0].Err, &re) || re.Ref != "github:acme/shop#30" || !strings.Contains(err.Error(), "list-reviews") {
		t.Errorf("got %v, want a ReplyError naming the reviews listing", err)
	}
}

func TestRepliesAndReviewsMergeInTimeOrder(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 3, 9, 11, m, 0, 0, time.UTC) }
	comments := []graph.Reply{{Comment: graph.Comment{Body: "c1"}, At: at(1)}, {Comment: graph.Comment{Body: "c3"}, At: at(3)}}
	reviews := []graph.Reply{{Comment: graph.Comment{Body: "r1", Review: "approved"}, At: at(1)}, {Comment: graph.Comment{Body: "r2"}, At: at(2)}}
	var got []string
	for _, r := range mergeReplies(comments, reviews) {
		got = append(got, r.Body)
	}
	if want := []string{"c1", "r1", "r2", "c3"}; !slices.Equal(got, want) {
		t.Errorf("merged %v, want %v", got, want)
	}
}
