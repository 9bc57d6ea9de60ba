package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	mcpserver "github.com/the-loop/the-loop/channels/mcp"
)

// demoCopy is a fresh copy of the demo repository.
func demoCopy(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "demo")
	if err := os.CopyFS(dir, os.DirFS(demo)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// mcpText is the text a tool answers on root, through the SDK's client.
func mcpText(t *testing.T, root, tool string, args map[string]any) string {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcpserver.New(mcpserver.Config{Repo: root}).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("%s: got %+v, want one answer", tool, res.Content)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

func TestEachMCPToolAnswersWithItsVerbsJSONByteForByte(t *testing.T) {
	cases := []struct {
		tool string
		args map[string]any
		cli  []string
	}{
		{"check_work_item", map[string]any{"work_item": "issue-21"}, []string{"check", "issue-21"}},
		{"check_work_item", map[string]any{"work_item": "issue-31", "recompute": true}, []string{"check", "issue-31", "--recompute"}},
		{"graph_status", map[string]any{"work_item": "issue-27"}, []string{"graph", "status", "issue-27"}},
		{"graph_show", nil, []string{"graph", "show"}},
		{"graph_show", map[string]any{"loop": "pdlc-pr-loop"}, []string{"graph", "show", "--loop", "pdlc-pr-loop"}},
		{"graph_advance", map[string]any{"work_item": "issue-21"}, []string{"graph", "advance", "issue-21"}},
		{"graph_advance", map[string]any{"work_item": "issue-27"}, []string{"graph", "advance", "issue-27"}},
		{"graph_complete", map[string]any{"work_item": "issue-31"}, []string{"graph", "complete", "issue-31"}},
		{"graph_complete", map[string]any{"work_item": "issue-21", "node": "design"}, []string{"graph", "complete", "issue-21", "--node", "design"}},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			cliRepo, mcpRepo := demoCopy(t), demoCopy(t)
			want, stderr, code := runCLI(t, nil, append(c.cli, "--repo", cliRepo, "--format", "json")...)
			if code == 2 {
				t.Fatalf("the CLI could not run: %s", stderr)
			}
			if got := mcpText(t, mcpRepo, c.tool, c.args); got != want {
				t.Errorf("%s differs from the-loop %v --format json:\n--- mcp\n%s\n--- cli\n%s", c.tool, c.cli, got, want)
			}
		})
	}
}
