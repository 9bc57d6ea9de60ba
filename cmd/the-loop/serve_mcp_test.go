package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds a token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// serveFor starts serve on repo with the CLI config cli, and returns its
// base URL and a function that stops it.
func serveFor(t *testing.T, repo, cli string) (base string, stop func()) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("THE_LOOP_CLI_CONFIG", "")
	t.Setenv("THE_LOOP_GH_WEBHOOK_SECRET", "s3cret")
	config := filepath.Join(home, "cli.yaml")
	if err := os.WriteFile(config, []byte(cli), 0o644); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	var stdout, stderr lockedBuffer
	code := make(chan int, 1)
	go func() {
		code <- run([]string{"serve", "--port", fmt.Sprint(port), "--repo", repo, "--config", config}, &stdout, &stderr)
	}()
	base = fmt.Sprintf("http://127.0.0.1:%d", port)
	waitUp(t, base, &stderr)
	return base, func() {
		if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case c := <-code:
			if c != 0 {
				t.Fatalf("exit %d, want 0\n%s", c, stderr.String())
			}
		case <-time.After(20 * time.Second):
			t.Fatal("serve did not stop on SIGTERM")
		}
	}
}

func postMCP(t *testing.T, url, auth string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestServeAnswersMCPBehindTheTokenTheConfigNames(t *testing.T) {
	t.Setenv("MCP_TOKEN", "t0ken")
	base, stop := serveFor(t, demoCopy(t), "service:\n  mcp:\n    tokenEnv: MCP_TOKEN\n")
	defer stop()
	for _, auth := range []string{"", "Bearer wrong", "Bearer t0ke", "Bearer t0ken2", "Basic t0ken", "t0ken"} {
		if code := postMCP(t, base+"/mcp", auth); code != http.StatusUnauthorized {
			t.Errorf("Authorization %q: got %d, want 401", auth, code)
		}
	}
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearer{"t0ken"}}, DisableStandaloneSSE: true, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "graph_status", Arguments: map[string]any{"work_item": "issue-27"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"currentNode": "design-approval"`) {
		t.Fatalf("graph_status over HTTP: %v %+v", err, res)
	}
}

func TestServeAnswersNoMCPWithoutATokenVariable(t *testing.T) {
	base, stop := serveFor(t, demoCopy(t), "version: \"1\"\n")
	defer stop()
	if code := postMCP(t, base+"/mcp", "Bearer anything"); code != http.StatusNotFound {
		t.Errorf("got %d, want 404: no MCP is served", code)
	}
}

func TestServeRefusesToStartWhenTheTokenVariableIsEmpty(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("THE_LOOP_GH_WEBHOOK_SECRET", "s3cret")
	t.Setenv("MCP_TOKEN", "")
	config := filepath.Join(home, "cli.yaml")
	os.WriteFile(config, []byte("service:\n  mcp:\n    tokenEnv: MCP_TOKEN\n"), 0o644)
	stdout, stderr, code := runCLI(t, nil, "serve", "--port", "0", "--repo", demoCopy(t), "--config", config)
	if code != 2 || !strings.Contains(stderr, "service.mcp.tokenEnv names $MCP_TOKEN, which is empty") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 2 naming the empty variable", code, stdout, stderr)
	}
}
