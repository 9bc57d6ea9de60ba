package main

import (
	"context"
	"io"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	mcpserver "github.com/the-loop/the-loop/channels/mcp"
	"github.com/the-loop/the-loop/policy"
)

// BenchmarkCheckWorkItemCorpus1000 is one item's check in a repository of
// 1,000, each op the next item: through MCP (the SDK's client over an
// in-memory transport; the server opens the repository per call, as a
// CLI invocation does), through the CLI in-process (without the process
// start), and through the engine, opened per call and once.
func BenchmarkCheckWorkItemCorpus1000(b *testing.B) {
	root := corpusRepo(b, 1000)
	b.Setenv("HOME", b.TempDir())
	b.Setenv("THE_LOOP_CLI_CONFIG", "")
	item := func(i int) string { return "issue-" + strconv.Itoa(i%1000+1) }

	b.Run("mcp", func(b *testing.B) {
		ctx := context.Background()
		st, ct := mcp.NewInMemoryTransports()
		ss, err := mcpserver.New(mcpserver.Config{Repo: root}).Connect(ctx, st, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer ss.Close()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "check_work_item", Arguments: map[string]any{"work_item": item(i)}})
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
			i++
		}
	})
	b.Run("cli", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if code := run([]string{"check", item(i), "--repo", root, "--format", "json"}, io.Discard, io.Discard); code == 2 {
				b.Fatalf("exit %d", code)
			}
			i++
		}
	})
	b.Run("engine-per-call", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			e, err := policy.Open(policy.Options{Repo: root, ReloadHooks: true})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := e.Check([]string{item(i)}, false, policy.Selector{}); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("engine-once", func(b *testing.B) {
		e, err := policy.Open(policy.Options{Repo: root})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := e.Check([]string{item(i)}, false, policy.Selector{}); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
