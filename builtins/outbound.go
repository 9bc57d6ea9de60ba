package builtins

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/the-loop/the-loop/graph"
)

// Outbound hooks act on the world through ctx.Integration, each as the
// original's does when it cannot:
//
//   - The GitHub hooks (set-phase-label, request-review, publish-artifact,
//     post-goal-request, post-phase-selection) and log-entry are best-effort:
//     a failed call, the none integration or a missing credential is a
//     passing result carrying data["error"], which the runtime surfaces as a
//     warning and a graph.hook_degraded event.
//   - notify and deliver-assignment skip quietly when nothing is wired to
//     carry them (see noChannel): on the CLI path that is the normal case,
//     not a failure. notify degrades when its channels fail; a failed
//     assignment delivery is a skip with the reason.
//   - mcp-call blocks: its result is the tool's answer, and a call that
//     could not be made has none.
//
// Under ctx.ReadOnly (check, status) no outbound hook makes a call.

// The integration operations the shipped hooks use. The first three are the
// GitHub integration's; the others are served by whatever transport the
// operator wires in (channels for notify, the session dispatcher for
// deliver-assignment, the harness for mcp-call).
const (
	opAddComment        = "add-comment"   // {ref, body}
	opListComments      = "list-comments" // {ref} -> {comments: [{author|user, body}]}
	opSetLabels         = "set-labels"    // {ref, labels, replacePrefix}
	opNotify            = "notify"        // {ref, event, text, roles}
	opDeliverAssignment = "deliver-assignment"
	opMCPCall           = "mcp-call"
)

// readOnlyReason is the skip reason of every outbound hook under check.
const readOnlyReason = "read-only evaluation"

// callOut performs op through the context's integration. A context with no
// integration behaves as the none integration.
func callOut(ctx *graph.Context, op string, params map[string]any) (map[string]any, error) {
	res, err := integrationOf(ctx).Call(op, params)
	if err != nil {
		return nil, err
	}
	if res == nil {
		res = map[string]any{}
	}
	return res, nil
}

// integrationOf is ctx's integration, the none integration when it has none.
func integrationOf(ctx *graph.Context) graph.Integration {
	if ctx.Integration == nil {
		return graph.NoIntegration{}
	}
	return ctx.Integration
}

// noChannel reports whether err says that nothing is wired to carry an
// operation at all: the none integration (graph.ErrIntegrationUnavailable),
// or an integration that does not perform the operation
// (errors.ErrUnsupported, as the GitHub integration answers notify,
// deliver-assignment and mcp-call). It is the one place that decides "no
// delivery channel" for the hooks whose transport is not GitHub; the original
// decides it by whether a delivery callable or a subscribed channel exists.
//
// An integration that does serve an operation, but cannot reach its service
// this time (an outage, a Slack token that is not set), must answer with any
// other error: that is a failed call, not a missing channel.
func noChannel(err error) bool {
	return errors.Is(err, graph.ErrIntegrationUnavailable) || errors.Is(err, errors.ErrUnsupported)
}

// degradedWith is graph.Degraded with extra facts beside data["error"].
func degradedWith(hook string, err error, data map[string]any) graph.Result {
	out := maps.Clone(data)
	if out == nil {
		out = map[string]any{}
	}
	out["error"] = err.Error()
	return graph.Pass(hook, out)
}

// obWarn logs a best-effort failure when the context has a logger.
func obWarn(ctx *graph.Context, msg string, args ...any) {
	if ctx.Log != nil {
		ctx.Log.Warn(msg, args...)
	}
}

// threadComments lists the work item's thread through the integration.
func threadComments(ctx *graph.Context) ([]graph.Comment, error) {
	res, err := callOut(ctx, opListComments, map[string]any{"ref": ctx.WorkItem.Ref})
	if err != nil {
		return nil, err
	}
	return commentsFromListing(res), nil
}

// threadCarries reports whether any comment on the thread contains marker.
// An unreadable thread reads as "no": the caller then posts, and a duplicate
// request is cheaper than a gate nobody was asked to answer.
func threadCarries(ctx *graph.Context, marker string) bool {
	comments, err := threadComments(ctx)
	if err != nil {
		if ctx.Log != nil {
			ctx.Log.Debug("could not list comments", "ref", ctx.WorkItem.Ref, "error", err)
		}
		return false
	}
	return carriesMarker(comments, marker)
}

// carriesMarker reports whether any of comments contains marker.
func carriesMarker(comments []graph.Comment, marker string) bool {
	return slices.ContainsFunc(comments, func(c graph.Comment) bool { return strings.Contains(c.Body, marker) })
}

// obNodeID is the id of the node the chain runs for, "" when unknown.
func obNodeID(ctx *graph.Context) string {
	if ctx.Node == nil {
		return ""
	}
	return ctx.Node.ID
}

// withKind is the type a with: parameter must have.
type withKind int

const (
	withString     withKind = iota // a string
	withStringList                 // a list of strings
	withPositive                   // a number greater than zero
	withMapping                    // a mapping
	withCommand                    // a string or a list of strings
)

func (k withKind) want() string {
	switch k {
	case withString:
		return "a string"
	case withStringList:
		return "a list of strings"
	case withPositive:
		return "a number greater than zero"
	case withMapping:
		return "a mapping"
	case withCommand:
		return "a command string or a list of argument strings"
	}
	return "a value"
}

// withRules declares the with: parameters a hook accepts.
type withRules map[string]withKind

// verify checks params against the rules: unknown keys are refused naming the
// accepted ones, and each known key must have its kind.
func (rules withRules) verify(hook string, params map[string]any) error {
	for _, key := range slices.Sorted(maps.Keys(params)) {
		kind, ok := rules[key]
		if !ok {
			if len(rules) == 0 {
				return fmt.Errorf("with.%s: unknown parameter; %s takes no parameters", key, hook)
			}
			return fmt.Errorf("with.%s: unknown parameter; %s accepts: %s", key, hook, strings.Join(slices.Sorted(maps.Keys(rules)), ", "))
		}
		if !kind.accepts(params[key]) {
			return fmt.Errorf("with.%s: got %s, want %s", key, obRenderValue(params[key]), kind.want())
		}
	}
	return nil
}

func (k withKind) accepts(v any) bool {
	switch k {
	case withString:
		_, ok := v.(string)
		return ok
	case withStringList:
		_, ok := obStringList(v)
		return ok
	case withPositive:
		n, ok := obNumber(v)
		return ok && n > 0
	case withMapping:
		_, ok := v.(map[string]any)
		return ok
	case withCommand:
		if _, ok := v.(string); ok {
			return true
		}
		_, ok := obStringList(v)
		return ok
	}
	return false
}

// obStringList converts a list of strings in any of the shapes a decoder
// produces.
func obStringList(v any) ([]string, bool) {
	switch x := v.(type) {
	case []string:
		return x, true
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// obNumber converts any numeric value a decoder produces.
func obNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// obRenderValue renders a parameter value for an error message.
func obRenderValue(v any) string {
	b, err := json.Marshal(v)
	s := string(b)
	if err != nil {
		s = fmt.Sprintf("%v", v)
	}
	if r := []rune(s); len(r) > 60 {
		s = string(r[:57]) + "..."
	}
	return s
}

// obParamString is params[key] when it is a non-empty string.
func obParamString(params map[string]any, key string) string {
	s, _ := params[key].(string)
	return s
}

// obAnyList is ss as a JSON-natural list.
func obAnyList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
