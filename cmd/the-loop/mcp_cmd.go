package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/signal"

	mcpserver "github.com/the-loop/the-loop/channels/mcp"
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
	// The repository is opened once to refuse a --repo that is none, as
	// every verb does; each tool call opens it again.
	e, err := g.open(out)
	if err != nil {
		return err
	}
	g.opened = nil // its notes are no answer: the calls carry their own
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg := mcpserver.Config{Repo: e.Root, CLIConfig: g.Config, Version: version()}
	if g.Verbose {
		cfg.Log = slog.New(slog.NewTextHandler(out.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	// JSON-RPC goes to stdout as written, as --format json does.
	return serveMCP(ctx, cfg, os.Stdin, out.raw)
}

// serveMCP runs the server over in and out until in closes.
func serveMCP(ctx context.Context, cfg mcpserver.Config, in io.Reader, out io.Writer) error {
	err := mcpserver.New(cfg).Run(ctx, mcpserver.Stdio(in, out))
	if ctx.Err() != nil {
		return nil // interrupted: as clean an end as EOF
	}
	return err
}
