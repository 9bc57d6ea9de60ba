package route

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/the-loop/the-loop/channels"
)

// octokit is one of GitHub's example payloads (testdata/octokit, from
// octokit/webhooks), moved to acme/shop: the pull request (or issue) is
// number, its description closes #12, every login is actor, and whatever
// it carries (a comment, a review) is dated now.
func octokit(t *testing.T, file string, number int, actor string) *delivery {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "octokit", filepath.FromSlash(file)))
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	event := filepath.Dir(filepath.FromSlash(file))
	p["repository"].(map[string]any)["full_name"] = "acme/shop"
	p["sender"].(map[string]any)["login"] = actor
	now := time.Now().UTC().Format(time.RFC3339)
	for _, key := range []string{"pull_request", "issue"} {
		if m, ok := p[key].(map[string]any); ok {
			m["number"] = number
			m["body"] = "Rate limits.\n\nCloses #12"
		}
	}
	if c, ok := p["comment"].(map[string]any); ok {
		c["id"] = 9000 + commentIDs.Add(1)
		c["user"].(map[string]any)["login"] = actor
		c["created_at"] = now
	}
	if r, ok := p["review"].(map[string]any); ok {
		r["id"] = 9000 + commentIDs.Add(1)
		r["user"].(map[string]any)["login"] = actor
		r["submitted_at"] = now
	}
	return &delivery{id: file + "@" + now, event: event, p: p}
}

// review sets the review's state and body (nil for none).
func (d *delivery) review(state string, body any) *delivery {
	r := d.p["review"].(map[string]any)
	r["state"], r["body"] = state, body
	return d
}

// withID gives the delivery another delivery id.
func (d *delivery) withID(id string) *delivery {
	c := *d
	c.id = id
	return &c
}

// innerLoopAt writes the inner loop state of pull request pr of issue-12,
// standing at node since when.
func (e *env) innerLoopAt(pr int, node string, when time.Time) string {
	e.t.Helper()
	rel := filepath.ToSlash(filepath.Join("docs", "specs", "issue-12", "pr-loops", "pr-"+strconv.Itoa(pr), "graph-state.json"))
	st := map[string]any{
		"version": 1, "workItem": "issue-12", "currentNode": node,
		"nodes": map[string]any{node: map[string]any{"attempts": 0, "outcome": "",
			"enteredAt": when.UTC().Format(time.RFC3339), "exitedAt": "", "lastBlock": "", "forced": false}},
		"decisions": map[string]any{}, "forced": []any{}, "parked": nil, "completions": map[string]any{},
		"skips": map[string]any{}, "optIns": map[string]any{}, "surface": "", "loop": "pdlc-pr-loop",
	}
	data, _ := json.MarshalIndent(st, "", "  ")
	writeFile(e.t, filepath.Join(e.checkout, filepath.FromSlash(rel)), string(data))
	return rel
}

// started binds issue-12 started, with pull request 30's inner loop at
// pr-approval since a minute ago.
func startedAtPRApproval(t *testing.T) (*env, string) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", channels.CommandStart)
	return e, e.innerLoopAt(30, "pr-approval", time.Now().Add(-time.Minute))
}
