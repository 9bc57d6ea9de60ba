package policy

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/the-loop/the-loop/builtins"
	"github.com/the-loop/the-loop/graph"
)

// threads is an integration that answers list-comments from a fixed
// thread per ref and records every call.
type threads struct {
	mu      sync.Mutex
	calls   []string
	byRef   map[string][]any
	failing error
}

func (f *threads) Name() string { return "fake" }

func (f *threads) Call(op string, params map[string]any) (map[string]any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, op+" "+params["ref"].(string))
	if f.failing != nil {
		return nil, f.failing
	}
	return map[string]any{"comments": f.byRef[params["ref"].(string)]}, nil
}

const approvalState = `{"version": 1, "currentNode": "requirements-approval", "loop": "pdlc-work-item-loop",
  "decisions": {"phase-selection": {"at": "2026-03-09T10:11:00+00:00"}},
  "nodes": {
    "phase-selection": {"attempts": 1, "outcome": "selected", "enteredAt": "2026-03-09T10:05:00+00:00", "exitedAt": "2026-03-09T10:11:00+00:00"},
    "requirements-approval": {"attempts": 1, "enteredAt": "2026-03-09T10:49:00+00:00"}}}`

const lockedRequirements = "---\nstatus: approved\n---\n# Requirements\n\n## Requirements\n\n- R1 it works.\n\n## Security considerations\n\nNone.\n"

// repliesRepo is a repository on acme/shop with issue-3 at its
// requirements approval and notes-1, an item with no ref, beside it; the
// CLI config authorizes alice.
func repliesRepo(t *testing.T) (root, cli string) {
	t.Helper()
	root = t.TempDir()
	files := map[string]string{
		".the-loop/harness-config.yaml":       "version: \"0.2.0\"\nticketing:\n  system: github\n  github: {owner: acme, repo: shop}\n",
		"docs/specs/issue-3/requirements.md":  lockedRequirements,
		"docs/specs/issue-3/graph-state.json": approvalState,
		"docs/specs/notes-1/requirements.md":  lockedRequirements,
		"docs/specs/notes-1/graph-state.json": approvalState,
		"../cli.yaml":                         "routing:\n  authorizedUsers: [alice]\n",
	}
	for p, body := range files {
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, filepath.Join(filepath.Dir(root), "cli.yaml")
}

func gate(t *testing.T, rep *graph.StatusReport) graph.NodeReport {
	t.Helper()
	for _, n := range rep.Nodes {
		if n.Node == "requirements-approval" {
			return n
		}
	}
	t.Fatalf("%s has no requirements-approval", rep.WorkItem)
	return graph.NodeReport{}
}

func TestCheckHandsTheGatesTheRepliesOnEachItemsThread(t *testing.T) {
	root, cli := repliesRepo(t)
	fake := &threads{byRef: map[string][]any{"github:acme/shop#3": {
		map[string]any{"author": "mallory", "body": "Approved", "created_at": "2026-03-09T10:50:00Z"},
		map[string]any{"author": "alice", "body": "Approved", "created_at": "2026-03-09T10:55:00Z"},
	}}}
	before := snapshot(t, root)
	e, err := Open(Options{Repo: root, CLIConfig: cli, Events: discard{}, Replies: fake})
	if err != nil {
		t.Fatal(err)
	}
	reports, err := e.Check([]string{"issue-3", "notes-1"}, false, Selector{})
	if err != nil {
		t.Fatal(err)
	}
	if n := gate(t, reports[0]); n.Status != "pass" || n.Outcome != "approved" {
		t.Errorf("issue-3: %+v, want alice's approval read", n)
	}
	if n := gate(t, reports[1]); n.Status != "wait" {
		t.Errorf("notes-1: %+v, want wait: it has no thread", n)
	}
	if !slices.Equal(fake.calls, []string{"list-comments github:acme/shop#3"}) {
		t.Errorf("calls %v, want one listing of issue-3's thread and nothing else", fake.calls)
	}
	notes := e.Notes()
	if len(notes) != 1 || !strings.Contains(notes[0], "no replies read for notes-1: no GitHub ref") {
		t.Errorf("notes %q, want notes-1 named", notes)
	}
	if snapshot(t, root) != before {
		t.Error("check wrote to the repository")
	}
}

func TestCheckCountsOnlyAllowListedAuthors(t *testing.T) {
	root, cli := repliesRepo(t)
	fake := &threads{byRef: map[string][]any{"github:acme/shop#3": {
		map[string]any{"user": map[string]any{"login": "mallory"}, "body": "Approved", "created_at": "2026-03-09T10:50:00Z"},
	}}}
	e, err := Open(Options{Repo: root, CLIConfig: cli, Events: discard{}, Replies: fake})
	if err != nil {
		t.Fatal(err)
	}
	reports, err := e.Check([]string{"issue-3"}, false, Selector{})
	if err != nil {
		t.Fatal(err)
	}
	n := gate(t, reports[0])
	if n.Status != "wait" || !strings.Contains(strings.Join(n.Messages, " "), "1 reply(s) not read") {
		t.Errorf("got %+v, want a wait that says a reply was not read", n)
	}
}

// The operator is on the allowlist, and the-loop posts with their
// token: what the integration says its own identity posted is the-loop's,
// marker or not, and answers nothing; a ledger relay it posted is read as
// the person's words it records.
func TestCheckDoesNotReadTheLoopsOwnCommentsAsTheOperators(t *testing.T) {
	relay := builtins.StampEnvelope("💬 **the-loop** recorded an answer to the open gate from `jc1993`:\n\n> approved",
		builtins.Envelope{Type: "gate.feedback", Source: "slack", Actor: map[string]string{"github": "jc1993"}})
	for _, tc := range []struct {
		name     string
		comments []any
		status   string
	}{
		{"an unmarked comment by the token's login", []any{
			map[string]any{"author": "alice", "body": "forced transition requirements -> design by alice. Reason: approved at the meeting.", "created_at": "2026-03-09T10:55:00Z", "self": true},
		}, "wait"},
		{"a marked comment", []any{
			map[string]any{"author": "alice", "body": builtins.MarkSelfAuthored("approved"), "created_at": "2026-03-09T10:55:00Z"},
		}, "wait"},
		{"a relay by the token's login", []any{
			map[string]any{"author": "alice", "body": relay, "created_at": "2026-03-09T10:55:00Z", "self": true},
		}, "pass"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, _ := repliesRepo(t)
			cli := filepath.Join(t.TempDir(), "cli.yaml")
			os.WriteFile(cli, []byte("routing:\n  authorizedUsers: [alice, jc1993]\n"), 0o644)
			fake := &threads{byRef: map[string][]any{"github:acme/shop#3": tc.comments}}
			e, err := Open(Options{Repo: root, CLIConfig: cli, Events: discard{}, Replies: fake})
			if err != nil {
				t.Fatal(err)
			}
			reports, err := e.Check([]string{"issue-3"}, false, Selector{})
			if err != nil {
				t.Fatal(err)
			}
			n := gate(t, reports[0])
			if string(n.Status) != tc.status {
				t.Fatalf("got %+v, want %s", n, tc.status)
			}
			if tc.status == "pass" && n.Outcome != "approved" {
				t.Errorf("got %+v, want the relayed approval", n)
			}
			if tc.status == "wait" && strings.Contains(strings.Join(n.Messages, " "), "not read") {
				t.Errorf("the-loop's own comment is counted as a person's not read: %v", n.Messages)
			}
		})
	}
}

func TestAThreadThatCannotBeReadFailsItsItemOnly(t *testing.T) {
	root, cli := repliesRepo(t)
	fake := &threads{failing: errors.New("github list-comments github:acme/shop#3: 404 Not Found")}
	e, err := Open(Options{Repo: root, CLIConfig: cli, Events: discard{}, Replies: fake})
	if err != nil {
		t.Fatal(err)
	}
	reports, err := e.Check([]string{"issue-3", "notes-1"}, false, Selector{})
	var failed ItemsError
	var re *ReplyError
	if !errors.As(err, &failed) || len(failed) != 1 || !errors.As(failed[0].Err, &re) || re.Ref != "github:acme/shop#3" {
		t.Fatalf("got %v, want issue-3 failed with a ReplyError", err)
	}
	if !strings.Contains(err.Error(), "issue-3: read the replies on github:acme/shop#3: github list-comments") {
		t.Errorf("error %q does not name the item, the ref and the cause", err)
	}
	if len(reports) != 1 || reports[0].WorkItem != "notes-1" {
		t.Errorf("reports %v, want notes-1's", reports)
	}
}

// A review by the token's own login is the-loop's, as its comments are:
// the listing says so, and no gate reads it.
func TestAReviewByTheTokensLoginIsTheLoopsOwn(t *testing.T) {
	got := listedReviews(map[string]any{"reviews": []any{
		map[string]any{"author": "alice", "body": "", "state": "APPROVED", "submitted_at": "2026-03-09T10:55:00Z", "self": true},
		map[string]any{"author": "bob", "body": "", "state": "APPROVED", "submitted_at": "2026-03-09T10:56:00Z"},
	}})
	if len(got) != 2 || !builtins.IsSelfAuthoredComment(got[0].Comment) || builtins.IsSelfAuthoredComment(got[1].Comment) {
		t.Errorf("reviews %+v, want alice's alone the-loop's own", got)
	}
}
