// Package mcpserver serves one repository to coding agents as a Model
// Context Protocol server, on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk). It is what `the-loop mcp`
// runs over stdio.
//
// # Tools
//
// New builds the server; its seven tools (listed in Tools) are the verbs
// an agent needs, each answering with the verb's --format json as its
// text (written by package reportjson, as the CLI writes it) and the same
// document as its structured content:
//
//   - list_work_items: every item's id, loop, current node and ok
//   - check_work_item (work_item, recompute): `the-loop check ID`
//   - graph_show (loop): `the-loop graph show`
//   - graph_status (work_item): `the-loop graph status ID`
//   - graph_advance (work_item): `the-loop graph advance ID`
//   - graph_complete (work_item, node): `the-loop graph complete ID`
//   - query_events (work_item, event, since, until, level, limit): the
//     operator's event log
//
// An agent is not a person: no tool takes a comment, an author or an
// event file, and none answers a human gate, skips or forces. An advance
// hands the gate no reply, so a human gate waits. A claim records the
// actor "mcp".
//
// # Errors
//
// A call that cannot be answered (an id that is a path or names no item,
// a broken harness config, an unreadable log) is a tool result with
// isError set and the one-line message the CLI would print; the server
// goes on. Stdio answers a line that is not a JSON-RPC message with a
// JSON-RPC error and reads on, and ends the session when its input ends.
//
// # Settings
//
// Config names the repository and the operator's CLI config, as --repo
// and --config do. Each call opens the repository afresh, as one CLI
// invocation does, with the CLI config, its integration and the
// repository-hook kill switch (routing.graph.repoHooks) applied as on the
// CLI.
//
// To serve a repository over stdio:
//
//	srv := mcpserver.New(mcpserver.Config{Repo: root})
//	err := srv.Run(ctx, mcpserver.Stdio(os.Stdin, os.Stdout))
//
// To test a server, connect the SDK's client over mcp.NewInMemoryTransports.
//
// The CLI also escapes, inside JSON strings, the characters that would act
// on a terminal (the C1 controls, the bidirectional overrides); a tool's
// text leaves them as encoding/json does, and is otherwise the CLI's.
package mcpserver
