package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/the-loop/the-loop/channels/ingress"
	mcpserver "github.com/the-loop/the-loop/channels/mcp"
	"github.com/the-loop/the-loop/policy"
)

// McpCmd is `the-loop mcp`.
type McpCmd struct{}

func (c *McpCmd) Help() string {
	return `mcp serves the repository to a coding agent as a Model Context Protocol
server over stdio, one JSON-RPC message a line, until stdin closes. Its
tools are the verbs an agent needs: list_work_items, check_work_item,
graph_show, graph_status, graph_advance, graph_complete and query_events;
each answers with the verb's --format json. None answers a human gate,
skips or forces: those are a person's. The operator's CLI config and the
repository-hook kill switch apply as on every verb, and each call reads
the repository afresh. For Claude Code:

  claude mcp add the-loop -- the-loop mcp --repo /path/to/repo

Exit codes: 0 stdin closed, 2 could not run.`
}

func (c *McpCmd) Run(g *Globals, out *Output) error {
	root, err := g.repositoryRoot()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := mcpserver.Config{Repo: root, CLIConfig: g.Config, Version: version()}
	if g.Verbose {
		cfg.Log = slog.New(slog.NewTextHandler(out.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	// JSON-RPC goes to stdout as written, as --format json does.
	return serveMCP(ctx, cfg, os.Stdin, out.raw)
}

// repositoryRoot is the repository a server serves: --repo, which must be
// a repository's root as for every verb, or the one holding the working
// directory. Only that is checked before serving: a repository whose
// configuration is broken is served, and each call says what is wrong,
// as the verb would.
func (g *Globals) repositoryRoot() (string, error) {
	if err := g.refuseNonRepository(); err != nil {
		return "", err
	}
	return policy.Locate(policy.Options{Repo: g.Repo})
}

// serveMCP runs the server over in and out until in closes.
func serveMCP(ctx context.Context, cfg mcpserver.Config, in io.Reader, out io.Writer) error {
	err := mcpserver.New(cfg).Run(ctx, mcpserver.Stdio(in, out))
	if ctx.Err() != nil {
		return nil // interrupted or terminated: as clean an end as EOF
	}
	return err
}

// mcpRoute is serve's /mcp, when the operator's CLI config names the
// variable holding its bearer token; nil when it names none. It serves
// the repository --repo names, or the working directory's.
func mcpRoute(g *Globals, out *Output, cli *policy.CLIConfig, logger *slog.Logger) (*ingress.Route, error) {
	env := cli.MCPTokenEnv()
	if env == "" {
		return nil, nil
	}
	token := os.Getenv(env)
	if token == "" {
		return nil, fmt.Errorf("service.mcp.tokenEnv names $%s, which is empty: set it to the bearer token MCP clients send, or remove the key to serve no MCP", env)
	}
	e, err := g.open(out)
	if err != nil {
		return nil, fmt.Errorf("service.mcp: %w", err)
	}
	g.opened = nil
	h, err := mcpserver.HTTPHandler(mcpserver.Config{Repo: e.Root, CLIConfig: g.Config, Version: version(), Log: logger}, token)
	if err != nil {
		return nil, err
	}
	logger.Info("serving MCP", "path", mcpserver.Path, "repo", e.Root)
	return &ingress.Route{Path: mcpserver.Path, Handler: func(*ingress.Queue) (http.Handler, error) { return h, nil }}, nil
}
