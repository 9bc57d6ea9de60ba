package builtins

import (
	"fmt"

	"github.com/the-loop/the-loop/graph"
)

func init() { register("mcp-call", mcpCall{}) }

// defaultMCPTimeoutSeconds bounds one delegated call when with: sets none.
const defaultMCPTimeoutSeconds = 300

// mcpCall reaches a capability only an MCP server offers. the-loop speaks no
// MCP itself: the integration's mcp-call operation delegates to the harness
// (Claude Code, Cursor), which is the MCP client with the operator's servers
// configured, and answers with a structured {"ok": bool, "result": string}.
// As in the original, every way of not getting the tool's answer blocks: its
// result is what the node waits for, and passing without it would claim an
// answer nobody gave. Nothing wired to delegate to (noChannel; the original's
// harness binary not on PATH) is a block that retrying cannot cure; a
// delegation that failed, and a tool that answered and reported failure, are
// retriable blocks.
//
// Params: tool (string, required to do anything), arguments (mapping),
// harness (string, "claude" or "cursor"; default "claude"), timeoutSeconds
// (number, default 300).
// Data: tool (string), result (string), when the tool answered ok.
type mcpCall struct{}

var (
	_ graph.Hook         = mcpCall{}
	_ graph.ParamChecker = mcpCall{}
)

const mcpCallName = "mcp-call"

var mcpCallRules = withRules{
	"tool":           withString,
	"arguments":      withMapping,
	"harness":        withString,
	"timeoutSeconds": withPositive,
}

func (mcpCall) CheckParams(params map[string]any) error {
	return mcpCallRules.verify(mcpCallName, params)
}

func (mcpCall) Run(ctx *graph.Context) (graph.Result, error) {
	const name = mcpCallName
	tool := obParamString(ctx.Params, "tool")
	if tool == "" {
		return graph.Skip(name, "no MCP tool named"), nil
	}
	if ctx.ReadOnly {
		// The preview is the verb: an integration known not to delegate
		// makes the run block, so check says so too.
		if p, ok := integrationOf(ctx).(graph.Performer); ok && !p.Performs(opMCPCall) {
			return cannotDelegate(name, integrationOf(ctx).Name()), nil
		}
		return graph.Skip(name, readOnlyReason), nil
	}
	harness := obParamString(ctx.Params, "harness")
	if harness == "" {
		harness = "claude"
	}
	timeout, ok := obNumber(ctx.Params["timeoutSeconds"])
	if !ok || timeout <= 0 {
		timeout = defaultMCPTimeoutSeconds
	}
	arguments, _ := ctx.Params["arguments"].(map[string]any)
	if arguments == nil {
		arguments = map[string]any{}
	}
	res, err := callOut(ctx, opMCPCall, map[string]any{
		"ref":            ctx.WorkItem.Ref,
		"tool":           tool,
		"arguments":      arguments,
		"harness":        harness,
		"timeoutSeconds": timeout,
	})
	switch {
	case noChannel(err):
		// Departure from the original (docs/compatibility.md#mcp-call-has-no-harness-to-delegate-to-yet): no shipped integration delegates yet, so this is every mcp-call's answer.
		r := graph.Block(name, graph.Errorf("cannot delegate an MCP call: %v", err))
		r.Retriable = false
		return r, nil
	case err != nil:
		obWarn(ctx, "MCP delegation failed", "tool", tool, "error", err)
		return graph.Block(name, graph.Errorf("MCP delegation failed: %v", err)), nil
	}
	if ok, _ := res["ok"].(bool); !ok {
		return graph.Block(name, graph.Errorf("MCP tool %q reported failure", tool)), nil
	}
	result, _ := res["result"].(string)
	if result == "" && res["result"] != nil {
		result = fmt.Sprint(res["result"])
	}
	return graph.Pass(name, map[string]any{"tool": tool, "result": result}), nil
}

// cannotDelegate is what a read-only evaluation predicts for an mcp-call
// that the integration named does not perform: the run's block.
func cannotDelegate(name, integration string) graph.Result {
	r := graph.Block(name, graph.Errorf("cannot delegate an MCP call: the %s integration does not perform %s", integration, opMCPCall))
	r.Retriable = false
	return r
}
