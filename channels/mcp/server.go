package mcpserver

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/the-loop/the-loop/channels/github"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/internal/reportjson"
	"github.com/the-loop/the-loop/policy"
	"github.com/the-loop/the-loop/repo"
)

// Config says which repository a server serves and whose settings apply.
// The zero value serves the repository holding the working directory with
// the CLI config found by the usual resolution order, as a verb does.
type Config struct {
	// Repo is the repository root, as --repo; "" means the one holding
	// the working directory.
	Repo string
	// CLIConfig is an explicit CLI config path, as --config; "" resolves.
	CLIConfig string
	// Getenv reads the environment for the integration's token; nil is
	// os.Getenv.
	Getenv func(string) string
	// Log receives the engine's diagnostics; nil discards them.
	Log *slog.Logger
	// Version is the server's version in the initialize answer.
	Version string
	// Events reads the event log for query_events; nil reads the file the
	// operator's CLI config names (see ReadEventLog).
	Events EventQuery
}

// Tools are the names of the tools a server lists, in the order it adds
// them.
var Tools = []string{"list_work_items", "check_work_item", "graph_show", "graph_status", "graph_advance", "graph_complete", "query_events"}

// New builds the server for one repository. Every call opens the
// repository afresh, as one CLI invocation does: an edited harness config
// or .star rule applies from the next call on, and one that is broken is
// that call's error, never the server's. The server is safe for
// concurrent use: the engine serialises moves with the work item's lock.
func New(cfg Config) *mcp.Server {
	s := &server{cfg: cfg}
	if s.cfg.Getenv == nil {
		s.cfg.Getenv = os.Getenv
	}
	if s.cfg.Events == nil {
		s.cfg.Events = s.readEventLog
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "the-loop", Version: cmp.Or(cfg.Version, "devel")}, &mcp.ServerOptions{
		Instructions: "Drive one repository's work items through the-loop's process graph: list and check them, " +
			"show the loop, advance an item or claim its node complete, and read the event log. " +
			"Human gates are answered by people on the item's thread, never through these tools.",
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "list_work_items", Description: "Every work item of the repository: its id, loop, current node and whether it is satisfied up to the pointer. Writes nothing."}, guard(s.listWorkItems))
	mcp.AddTool(srv, &mcp.Tool{Name: "check_work_item", Description: "Evaluate one work item's gates against its checked-in artifacts; the answer is `the-loop check ID --format json`. Pure: writes nothing, and human gates read wait."}, guard(s.checkWorkItem))
	mcp.AddTool(srv, &mcp.Tool{Name: "graph_show", Description: "The process graph as data, nodes and edges in declaration order; the answer is `the-loop graph show --format json`."}, guard(s.graphShow))
	mcp.AddTool(srv, &mcp.Tool{Name: "graph_status", Description: "Where a work item stands, every node's verdict up to the pointer; the answer is `the-loop graph status ID --format json`. Writes nothing."}, guard(s.graphStatus))
	mcp.AddTool(srv, &mcp.Tool{Name: "graph_advance", Description: "Run the current node's exit chain and follow the edge it passes on; the answer is `the-loop graph advance ID --format json`. No reply is handed to a human gate: it waits for a person."}, guard(s.graphAdvance))
	mcp.AddTool(srv, &mcp.Tool{Name: "graph_complete", Description: "Claim a node complete: runs its exit chain under the work item's lock; the answer is `the-loop graph complete ID --format json`. A refusal, a block or busy is an answer, not an error."}, guard(s.graphComplete))
	mcp.AddTool(srv, &mcp.Tool{Name: "query_events", Description: "Records of the operator's event log, oldest first, filtered: the last `limit` (default 50; 0 is all) that match every filter given."}, guard(s.queryEvents))
	return srv
}

// guard makes a tool's error one line, as the CLI prints it, and a panic
// in a call that call's error, never the server's end.
func guard[In any](h mcp.ToolHandlerFor[In, any]) mcp.ToolHandlerFor[In, any] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, out any, err error) {
		defer func() {
			if p := recover(); p != nil {
				res, out, err = nil, nil, fmt.Errorf("internal error: %v", p)
			}
			if err != nil {
				err = errors.New(oneLine(err.Error()))
			}
		}()
		return h(ctx, req, in)
	}
}

// oneLine escapes the control characters of s, newlines among them.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case unicode.IsControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

type server struct {
	cfg Config
}

// ItemArgs name one work item.
type ItemArgs struct {
	WorkItem string `json:"work_item" jsonschema:"the work item id: its spec folder's name, e.g. issue-12"`
}

// CheckArgs are check_work_item's.
type CheckArgs struct {
	WorkItem  string `json:"work_item" jsonschema:"the work item id: its spec folder's name, e.g. issue-12"`
	Recompute bool   `json:"recompute,omitempty" jsonschema:"ignore stored graph state and derive the position from the artifacts alone"`
}

// ShowArgs are graph_show's.
type ShowArgs struct {
	Loop string `json:"loop,omitempty" jsonschema:"the shipped loop to show (default: the work-item loop), e.g. pdlc-pr-loop"`
}

// CompleteArgs are graph_complete's.
type CompleteArgs struct {
	WorkItem string `json:"work_item" jsonschema:"the work item id: its spec folder's name, e.g. issue-12"`
	Node     string `json:"node,omitempty" jsonschema:"the node the claim is about (default: the current node)"`
}

// NoArgs is the input of a tool that takes none.
type NoArgs struct{}

// Item is one line of list_work_items.
type Item struct {
	ID          string `json:"id"`
	Loop        string `json:"loop"`
	CurrentNode string `json:"currentNode"`
	OK          bool   `json:"ok"`
}

// Items is list_work_items' answer: an object, as a tool's structured
// content is, around the list.
type Items struct {
	WorkItems []Item `json:"workItems"`
}

// completer is the actor a claim made through this server records.
const completer = "mcp"

// read opens the repository for a verb that writes nothing, as check does.
func (s *server) read() (*policy.Engine, error) {
	return policy.Open(policy.Options{Repo: s.cfg.Repo, CLIConfig: s.cfg.CLIConfig, Log: s.cfg.Log, ReloadHooks: true})
}

// moving opens the repository for a verb that moves an item, as advance
// and complete do: the operator's CLI config, its integration for the
// outbound hooks, and adoption.
func (s *server) moving() (*policy.Engine, error) {
	cli, err := policy.LoadCLIConfig(s.cfg.CLIConfig)
	if err != nil {
		return nil, err
	}
	in, err := github.Configured(cli, s.cfg.Getenv)
	if err != nil {
		return nil, err
	}
	return policy.Open(policy.Options{Repo: s.cfg.Repo, CLI: cli, Integration: in, Moves: true, Log: s.cfg.Log, ReloadHooks: true})
}

// ErrNotAnItem is the error of a work item id that names no item: empty,
// or a path rather than a spec folder's name.
var ErrNotAnItem = errors.New("not a work item id")

// itemID refuses an id that is not one spec folder's name, before it
// reaches anything that would join it to a path.
func itemID(id string) error {
	if id == "" {
		return fmt.Errorf("work_item: %w: got an empty string, want a spec folder's name, e.g. issue-12", ErrNotAnItem)
	}
	if !repo.ValidID(id) {
		return fmt.Errorf("work_item %q: %w: got a path, want a spec folder's name, e.g. issue-12", id, ErrNotAnItem)
	}
	return nil
}

// existing refuses an item with no spec folder, which the CLI's moving
// verbs would start as a new one.
//
// Departure from the original (docs/compatibility.md#an-agent-moves-only-work-items-that-exist): a typo must not start a work item.
func existing(e *policy.Engine, item string) error {
	_, err := e.Checkout.Item(item)
	return err
}

// movingItem is the engine of a verb that moves item, once item names an
// item that is there (a tool does not create one, as the CLI's verbs do).
func (s *server) movingItem(item string) (*policy.Engine, error) {
	if err := itemID(item); err != nil {
		return nil, err
	}
	e, err := s.moving()
	if err != nil {
		return nil, err
	}
	if err := existing(e, item); err != nil {
		return nil, err
	}
	return e, nil
}

// answer is a tool's result: its text is the verb's --format json, written
// by the CLI's own encoder, and its structured content the same document.
func answer(v any) (*mcp.CallToolResult, any, error) {
	b, err := reportjson.Marshal(v)
	if err != nil {
		return nil, nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, json.RawMessage(bytes.TrimSpace(b)), nil
}

func (s *server) listWorkItems(_ context.Context, _ *mcp.CallToolRequest, _ NoArgs) (*mcp.CallToolResult, any, error) {
	e, err := s.read()
	if err != nil {
		return nil, nil, err
	}
	ids, err := e.Items()
	if err != nil {
		return nil, nil, err
	}
	items := Items{WorkItems: make([]Item, 0, len(ids))}
	err = e.CheckEach(ids, false, policy.Selector{}, func(r *graph.StatusReport) error {
		items.WorkItems = append(items.WorkItems, Item{ID: r.WorkItem, Loop: r.Loop, CurrentNode: r.CurrentNode, OK: r.OK})
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return answer(items)
}

func (s *server) checkWorkItem(_ context.Context, _ *mcp.CallToolRequest, in CheckArgs) (*mcp.CallToolResult, any, error) {
	return s.report(in.WorkItem, in.Recompute)
}

func (s *server) graphStatus(_ context.Context, _ *mcp.CallToolRequest, in ItemArgs) (*mcp.CallToolResult, any, error) {
	return s.report(in.WorkItem, false)
}

// report is check's and status's answer about one item: its report alone.
func (s *server) report(item string, recompute bool) (*mcp.CallToolResult, any, error) {
	if err := itemID(item); err != nil {
		return nil, nil, err
	}
	e, err := s.read()
	if err != nil {
		return nil, nil, err
	}
	reports, err := e.Check([]string{item}, recompute, policy.Selector{})
	if err != nil {
		return nil, nil, err
	}
	return answer(reports[0])
}

func (s *server) graphShow(_ context.Context, _ *mcp.CallToolRequest, in ShowArgs) (*mcp.CallToolResult, any, error) {
	e, err := s.read()
	if err != nil {
		return nil, nil, err
	}
	gr, err := e.Graph(cmp.Or(in.Loop, policy.Selector{}.Loop()))
	if err != nil {
		return nil, nil, err
	}
	return answer(policy.DescribeGraph(gr))
}

func (s *server) graphAdvance(_ context.Context, _ *mcp.CallToolRequest, in ItemArgs) (*mcp.CallToolResult, any, error) {
	e, err := s.movingItem(in.WorkItem)
	if err != nil {
		return nil, nil, err
	}
	// No inbound event: an agent's call carries no reply, so a human gate
	// classifies nothing and waits for a person.
	//
	// Departure from the original (docs/compatibility.md#no-tool-answers-a-human-gate): no ref or actor either.
	step, err := e.Advance(in.WorkItem, policy.Selector{}, nil)
	if err != nil {
		return nil, nil, err
	}
	return answer(step)
}

func (s *server) graphComplete(_ context.Context, _ *mcp.CallToolRequest, in CompleteArgs) (*mcp.CallToolResult, any, error) {
	e, err := s.movingItem(in.WorkItem)
	if err != nil {
		return nil, nil, err
	}
	res, err := e.Complete(in.WorkItem, in.Node, completer, policy.Selector{}, nil)
	if err != nil {
		return nil, nil, err
	}
	return answer(res)
}

// Departure from the original (docs/compatibility.md#query_events-filters): the filters of the-loop events, not its source.
func (s *server) queryEvents(ctx context.Context, _ *mcp.CallToolRequest, in EventFilter) (*mcp.CallToolResult, any, error) {
	q, err := in.compile()
	if err != nil {
		return nil, nil, err
	}
	res, err := s.cfg.Events(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	return answer(res)
}
