package inbound

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/ingress"
	"github.com/the-loop/the-loop/channels/route"
	"github.com/the-loop/the-loop/channels/slack"
	"github.com/the-loop/the-loop/eventlog"
	"github.com/the-loop/the-loop/graph"
)

// Slack's pipeline as the operator's CLI config describes it, for the two
// commands that run it: `the-loop reply` once, and `the-loop serve` for
// every event Slack posts.

// ForReply is the Slack pipeline `the-loop reply` runs once: channels.slack
// read from link's config, reading graphs through link, recording through
// ledger. The warnings are what the config asked for that the channel does
// less of.
func ForReply(link *route.Link, ledger graph.Integration, events *eventlog.Log) (*Pipeline, []string, error) {
	sc, warnings, err := slack.ConfigOf(link.CLI())
	if err != nil {
		return nil, nil, err
	}
	p, err := NewSlack(SlackOptions{Link: link, Slack: sc, Ledger: ledger, Events: events})
	return p, warnings, err
}

// Endpoint is the Slack channel as serve runs it: the pipeline, and the
// Events API endpoint that queues what it processes.
type Endpoint struct {
	pipeline *Pipeline
	secret   []byte
	events   *eventlog.Log
	log      *slog.Logger
}

// ForServe is the Slack channel serve runs beside the router, reading
// graphs through the router's own link; nil when channels.slack is not
// enabled, or reads Slack other than through the Events API (which is
// logged). A channel that reads the Events API without its signing secret
// is an error: there is no unsigned mode. Without a bot token, messages
// are taken in and not acknowledged.
func ForServe(router *route.Router, ledger graph.Integration, events *eventlog.Log, log *slog.Logger) (*Endpoint, error) {
	sc, warnings, err := slack.ConfigOf(router.CLI())
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		log.Warn(w)
	}
	switch {
	case !sc.Enabled:
		return nil, nil
	// Departure from the original (docs/compatibility.md#slack-is-read-through-the-events-api-only): poll and socket are not run.
	case sc.ReadMode != slack.ReadEvents:
		log.Warn("channels.slack is enabled, but serve reads Slack only through the Events API: set channels.slack.read.mode to events", "read.mode", sc.ReadMode)
		return nil, nil
	}
	secret, err := slack.TokenFrom(sc.SigningSecretEnv)
	if err != nil {
		return nil, fmt.Errorf("channels.slack reads the Events API, whose requests are verified with the app's signing secret: %w (named by channels.slack.signingSecretEnv)", err)
	}
	token, err := slack.TokenFrom(sc.BotTokenEnv)
	if err != nil {
		log.Warn("no Slack bot token: messages are taken in, but not acknowledged with reactions", "err", err)
	}
	p, err := NewSlack(SlackOptions{Link: router.Link, Slack: sc, Ledger: ledger, Token: token, Events: events, Log: log})
	if err != nil {
		return nil, err
	}
	return &Endpoint{pipeline: p, secret: []byte(secret), events: events, log: log}, nil
}

// Pipeline is the endpoint's pipeline.
func (e *Endpoint) Pipeline() *Pipeline { return e.pipeline }

// Processor takes the queued Slack events through the pipeline.
func (e *Endpoint) Processor() channels.Processor { return Processor{Pipeline: e.pipeline} }

// Route is the Events API endpoint, mounted beside GitHub's webhook path
// on the same queue; a message's thread names the work item the queue
// orders it by.
func (e *Endpoint) Route() ingress.Route {
	store := e.pipeline.Link().Bindings()
	return ingress.Route{Path: slack.EventsPath, Handler: func(q *ingress.Queue) (http.Handler, error) {
		return slack.NewHandler(slack.HandlerOptions{Secret: e.secret, Accept: q.AcceptSigned, Log: e.events, Logger: e.log,
			ItemOf: func(r channels.Reply) string {
				if b, ok, err := store.ByThread(r.ChannelID, r.Thread); err == nil && ok {
					return b.Ref
				}
				return ""
			}})
	}}
}
