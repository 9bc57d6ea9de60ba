package inbound

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"time"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/github"
	"github.com/the-loop/the-loop/channels/route"
	"github.com/the-loop/the-loop/channels/slack"
	"github.com/the-loop/the-loop/eventlog"
	"github.com/the-loop/the-loop/graph"
)

// SlackOptions are what NewSlack needs. Link and Slack are required.
type SlackOptions struct {
	// Link is the router's link (Router.Link), or one route.NewLink built
	// from the route.Config the router would be built from.
	Link *route.Link
	// Slack is the channel's config (slack.ConfigOf).
	Slack slack.Config
	// Ledger is the integration the ledger posts through; nil is the
	// none integration, under which every record fails.
	Ledger graph.Integration
	// Token is the bot token reactions are added with; "" adds none.
	Token string
	// HTTP is the client of Slack's Web API; nil is slack.NewClient's.
	HTTP *http.Client
	// Events and Log are as in Config.
	Events graph.Emitter
	Log    *slog.Logger
}

// reactionTimeout bounds one acknowledgement: it is best effort, and the
// queue worker waits on it.
const reactionTimeout = 5 * time.Second

// NewSlack builds the pipeline of the Slack channel: its grants, the
// GitHub ledger, and acknowledgements as reactions on the message through
// Slack's Web API (channels.slack.reactions; none without a token).
func NewSlack(o SlackOptions) (*Pipeline, error) {
	if o.Ledger == nil {
		o.Ledger = graph.NoIntegration{}
	}
	if o.Events == nil {
		o.Events = eventlog.Discard
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	cfg := Config{
		Link:    o.Link,
		Channel: Channel{Name: channels.ChannelSlack, Enabled: o.Slack.Enabled, Publish: o.Slack.Publish},
		Events:  o.Events,
		Log:     o.Log,
	}
	if o.Link != nil {
		cfg.Ledger = github.NewLedger(o.Ledger, o.Link.CLI())
	}
	if o.Token != "" && o.Slack.Reactions.Enabled {
		client := slack.NewClient(o.Slack.APIBaseURL, o.Token, o.HTTP)
		cfg.Ack = func(r channels.Reply, moment string) {
			acknowledge(client, o.Slack.Reactions, o.Events, o.Log, r, moment)
		}
	}
	return New(cfg)
}

// acknowledge adds the reaction for moment on the message r; a failure is
// logged and recorded, never more.
func acknowledge(c *slack.Client, rs slack.Reactions, events graph.Emitter, log *slog.Logger, r channels.Reply, moment string) {
	name := rs.For(moment)
	if name == "" || r.TS == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), reactionTimeout)
	defer cancel()
	f := map[string]any{"channel": channels.ChannelSlack, "state": moment, "content": name}
	if err := c.AddReaction(ctx, r.ChannelID, r.TS, name); err != nil {
		log.Warn("could not add a reaction on Slack", "channel", r.ChannelID, "ts", r.TS, "state", moment, "err", err)
		failed := maps.Clone(f)
		failed["error"] = err.Error()
		_ = events.Emit("channel.reaction_failed", eventlog.LevelWarning, failed)
		return
	}
	_ = events.Emit("channel.reaction_added", eventlog.LevelDebug, f)
}
