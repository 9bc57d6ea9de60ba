package builtins

import (
	"fmt"
	"strings"

	"github.com/the-loop/the-loop/graph"
)

func init() { register("notify", notify{}) }

// defaultNotifyEvent is the event notify announces when its with: names none.
const defaultNotifyEvent = "phase-approval-pending"

// notify tells the configured roles that the work item reached a node. The
// roles come from the harness config's notifications.events.<event>, else
// from the hook's own roles parameter; with neither the hook skips. Delivery
// goes through the integration's notify operation, which fans out to every
// channel subscribed to the event; a channel being down never wedges the
// graph.
//
// With no channel at all (noChannel: the none integration, or one that does
// not perform notify) the hook skips quietly, as the original does when no
// channel is subscribed. The notify operation may answer {"subscribed":
// false} (no channel takes the event: a skip), or {"delivered": false,
// "error": "..."} (nothing delivered: degraded); an answer without those keys
// is a delivery. A call that fails is degraded.
//
// Params: event (string, default "phase-approval-pending"), roles (list of
// strings).
// Data: delivered (bool), roles ([string]); error when nothing was delivered.
type notify struct{}

var (
	_ graph.Hook         = notify{}
	_ graph.ParamChecker = notify{}
)

const notifyName = "notify"

var notifyRules = withRules{"event": withString, "roles": withStringList}

func (notify) CheckParams(params map[string]any) error {
	return notifyRules.verify(notifyName, params)
}

func (notify) Run(ctx *graph.Context) (graph.Result, error) {
	const name = notifyName
	event := obParamString(ctx.Params, "event")
	if event == "" {
		event = defaultNotifyEvent
	}
	roles := notifyRecipients(ctx, event)
	if len(roles) == 0 {
		return graph.Skip(name, fmt.Sprintf("no roles configured for %s", event)), nil
	}
	if ctx.ReadOnly {
		return graph.Skip(name, readOnlyReason), nil
	}
	text := fmt.Sprintf("the-loop: %s is at *%s* (%s). Roles: %s", ctx.WorkItem.ID, obNodeID(ctx), event, strings.Join(roles, ", "))
	res, err := callOut(ctx, opNotify, map[string]any{
		"ref":   ctx.WorkItem.Ref,
		"event": event,
		"text":  text,
		"roles": obAnyList(roles),
	})
	if subscribed, ok := res["subscribed"].(bool); noChannel(err) || ok && !subscribed {
		return graph.Skip(name, fmt.Sprintf("no channel subscribed to %s", event)), nil
	}
	if err != nil {
		obWarn(ctx, "notification not delivered", "event", event, "error", err)
		return degradedWith(name, err, map[string]any{"delivered": false, "roles": obAnyList(roles)}), nil
	}
	if delivered, ok := res["delivered"].(bool); ok && !delivered {
		msg, _ := res["error"].(string)
		if msg == "" {
			msg = "no channel delivered the notification"
		}
		obWarn(ctx, "notification not delivered", "event", event, "error", msg)
		return graph.Pass(name, map[string]any{"delivered": false, "roles": obAnyList(roles), "error": msg}), nil
	}
	return graph.Pass(name, map[string]any{"delivered": true, "roles": obAnyList(roles)}), nil
}

// notifyRecipients resolves the roles for event: the harness config's
// notifications.events mapping first, the hook's roles parameter second.
func notifyRecipients(ctx *graph.Context, event string) []string {
	if events, ok := ctx.Settings.Notifications["events"].(map[string]any); ok {
		if roles := obAnyStrings(events[event]); len(roles) > 0 {
			return roles
		}
	}
	return obAnyStrings(ctx.Params["roles"])
}

// obAnyStrings renders each element of a decoded list as a string, skipping
// empty ones; anything that is not a list yields nil.
func obAnyStrings(v any) []string {
	var items []any
	switch x := v.(type) {
	case []any:
		items = x
	case []string:
		for _, s := range x {
			items = append(items, s)
		}
	default:
		return nil
	}
	var out []string
	for _, e := range items {
		if s := fmt.Sprint(e); e != nil && s != "" {
			out = append(out, s)
		}
	}
	return out
}
