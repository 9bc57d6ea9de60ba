package main

import (
	"log/slog"
	"os"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/github"
	"github.com/the-loop/the-loop/channels/inbound"
	"github.com/the-loop/the-loop/channels/ingress"
	"github.com/the-loop/the-loop/channels/route"
	"github.com/the-loop/the-loop/eventlog"
	"github.com/the-loop/the-loop/policy"
)

// served is what serve hands accepted deliveries to: the router, driving
// bound work items through the integration the operator's config declares
// (none: the graph still moves, and nothing is posted), and the Slack
// endpoint when the config has serve read Slack (nil otherwise).
type served struct {
	router *route.Router
	slack  *inbound.Endpoint
}

func newServed(events *eventlog.Log, cli *policy.CLIConfig, log *slog.Logger) (*served, error) {
	in, err := github.Configured(cli, os.Getenv)
	if err != nil {
		return nil, err
	}
	cfg := route.Config{CLI: cli, Integration: in, Log: log, Events: events}
	if gh, ok := in.(*github.Integration); ok && gh.Available() == nil {
		// the-loop posts with this credential: a comment by its login is
		// the-loop's own.
		cfg.Identity = gh.Identity
	}
	router, err := route.New(cfg)
	if err != nil {
		return nil, err
	}
	endpoint, err := inbound.ForServe(router, in, events, log)
	if err != nil {
		return nil, err
	}
	return &served{router: router, slack: endpoint}, nil
}

// processor dispatches each delivery by the channel it came from.
func (s *served) processor() channels.Processor {
	p := channels.ByChannel{"": s.router}
	if s.slack != nil {
		p[channels.ChannelSlack] = s.slack.Processor()
	}
	return p
}

// routes are the endpoints beside GitHub's webhook path.
func (s *served) routes() []ingress.Route {
	if s.slack == nil {
		return nil
	}
	return []ingress.Route{s.slack.Route()}
}
