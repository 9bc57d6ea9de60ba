package route

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/policy"
)

// The GHES host of octokit's ghes-35 example payloads.
const ghesHost = "octocoders.github.io"

// ghesFixture is the gate fixture as a checkout of Codertocat/Hello-World
// whose origin is origin: its issue-12 is issue-1, the issue octokit's
// GHES payloads comment on, waiting at requirements-approval.
func (e *env) ghesFixture(origin string) string {
	e.t.Helper()
	dir := e.copyFixture(origin)
	specs := filepath.Join(dir, "docs", "specs")
	if err := os.Rename(filepath.Join(specs, "issue-12"), filepath.Join(specs, "issue-1")); err != nil {
		e.t.Fatal(err)
	}
	state := filepath.Join(specs, "issue-1", "graph-state.json")
	data, err := os.ReadFile(state)
	if err != nil {
		e.t.Fatal(err)
	}
	writeFile(e.t, state, strings.Replace(string(data), `"issue-12"`, `"issue-1"`, 1))
	return dir
}

// ghesComment is octokit's GHES issue_comment created payload, as GitHub
// Enterprise Server sends it, with the comment's body, id and time set.
func ghesComment(t *testing.T, id, body string) channels.Delivery {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "octokit", "ghes-35", "issue_comment", "created.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	if html := p["repository"].(map[string]any)["html_url"]; html != "https://"+ghesHost+"/Codertocat/Hello-World" {
		t.Fatalf("the fixture is not on %s: %v", ghesHost, html)
	}
	c := p["comment"].(map[string]any)
	c["body"], c["id"], c["created_at"] = body, 9000+commentIDs.Add(1), time.Now().UTC().Format(time.RFC3339)
	out, _ := json.Marshal(p)
	return channels.Delivery{ID: id, Event: "issue_comment", Body: out, Item: channels.ItemOf(out)}
}

func TestAGHESDeliveryRoutesAsGitHubComsDoes(t *testing.T) {
	const users = "routing:\n  authorizedUsers: [Codertocat]\n"
	configs := map[string]string{
		"baseUrl":     users + "integrations:\n  github:\n    api:\n      baseUrl: https://" + ghesHost + "/api/v3\n",
		"defaultHost": users + "  workspace:\n    defaultHost: " + ghesHost + "\n",
		"both, agreeing, any case": users + "  workspace:\n    defaultHost: OctoCoders.GitHub.io\n" +
			"integrations:\n  github:\n    api:\n      baseUrl: https://" + ghesHost + "/api/v3/\n",
		"defaultHost beside a proxy's baseUrl": users + "  workspace:\n    defaultHost: " + ghesHost + "\n" +
			"integrations:\n  github:\n    api:\n      baseUrl: https://gh-proxy.corp.example/api/v3\n",
	}
	origins := []string{
		"https://" + ghesHost + "/Codertocat/Hello-World.git",
		"git@" + ghesHost + ":Codertocat/Hello-World.git",
		"ssh://git@" + ghesHost + ":2222/codertocat/hello-world",
	}
	for name, config := range configs {
		for _, origin := range origins {
			t.Run(name+" "+origin, func(t *testing.T) {
				e := newEnv(t, config)
				e.checkout = e.ghesFixture(origin)
				e.bind("github:Codertocat/Hello-World#1", "")
				out, err := e.process(ghesComment(t, "g1", "the-loop start"))
				if f := wantRouted(t, out, err); f["effect"] != "started" {
					t.Fatalf("start: %v", f)
				}
				out, err = e.process(ghesComment(t, "g2", "Approved"))
				if f := wantRouted(t, out, err); f["to"] != "design" {
					t.Errorf("fields = %v", f)
				}
				if got := e.state("docs/specs/issue-1/graph-state.json").CurrentNode; got != "design" {
					t.Errorf("currentNode = %s", got)
				}
				// and an ordinary comment at the agent's node is delivered
				out, err = e.process(ghesComment(t, "g3", "Working on it?"))
				if f := wantRouted(t, out, err); f["delivery"] != "inbox" || f["node"] != "design" {
					t.Errorf("fields = %v", f)
				}
			})
		}
	}
}

// The host trusted is the operator's: an origin on any other (github.com
// under a GHES config, another GHES, a look-alike) stays foreign, and so
// does a GHES origin under a github.com config.
func TestAnOriginOnAnotherHostStaysForeign(t *testing.T) {
	ghes := "routing:\n  authorizedUsers: [Codertocat]\nintegrations:\n  github:\n    api:\n      baseUrl: https://" + ghesHost + "/api/v3\n"
	for _, tc := range []struct{ name, config, origin string }{
		{"github.com under a GHES config", ghes, "https://github.com/Codertocat/Hello-World.git"},
		{"github.com scp-like under a GHES config", ghes, "git@github.com:Codertocat/Hello-World.git"},
		{"another GHES", ghes, "https://ghe.other.example/Codertocat/Hello-World.git"},
		{"a look-alike host", ghes, "https://" + ghesHost + ".evil.example/Codertocat/Hello-World.git"},
		{"the GHES host under a github.com config", "routing:\n  authorizedUsers: [Codertocat]\n", "https://" + ghesHost + "/Codertocat/Hello-World.git"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.config)
			e.checkout = e.ghesFixture(tc.origin)
			e.bind("github:Codertocat/Hello-World#1", channels.CommandStart)
			before := e.read("docs/specs/issue-1/graph-state.json")
			out, err := e.process(ghesComment(t, "g1", "Approved"))
			wantDropped(t, out, err, DropForeignCheckout)
			if e.read("docs/specs/issue-1/graph-state.json") != before || e.read(".the-loop/harness-config.yaml") != "" {
				t.Error("a foreign checkout was written")
			}
		})
	}
}

// Which host is trusted is read once, from the operator's CLI config: a
// defaultHost that is no host name refuses to build a router at all.
func TestABadDefaultHostRefusesTheRouter(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cli.yaml")
	writeFile(t, path, "routing:\n  workspace:\n    defaultHost: https://"+ghesHost+"\n")
	cli, err := policy.LoadCLIConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(Config{CLI: cli})
	var ce *graph.ConfigError
	if !errors.As(err, &ce) || ce.Key != "routing.workspace.defaultHost" {
		t.Fatalf("got %v, want a config error naming routing.workspace.defaultHost", err)
	}
}
