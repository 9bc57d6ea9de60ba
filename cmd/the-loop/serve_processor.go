package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/github"
	"github.com/the-loop/the-loop/channels/inbound"
	"github.com/the-loop/the-loop/channels/ingress"
	"github.com/the-loop/the-loop/channels/route"
	"github.com/the-loop/the-loop/channels/slack"
	"github.com/the-loop/the-loop/eventlog"
	"github.com/the-loop/the-loop/policy"
)

// served is what serve hands accepted deliveries to: the router, driving
// bound work items through the integration the operator's config declares
// (none: the graph still moves, and nothing is posted), and, when
// channels.slack reads through the Events API, the Slack pipeline, which
// reads graphs through the router's own link.
type served struct {
	router *route.Router
	slack  *inbound.Pipeline
	// slackSecret verifies Slack's requests.
	slackSecret []byte
}

func newServed(events *eventlog.Log, cli *policy.CLIConfig, log *slog.Logger) (*served, error) {
	in, err := github.Configured(cli, os.Getenv)
	if err != nil {
		return nil, err
	}
	router, err := route.New(route.Config{CLI: cli, Integration: in, Log: log, Events: events})
	if err != nil {
		return nil, err
	}
	s := &served{router: router}
	sc, warnings, err := slack.ConfigOf(cli)
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		log.Warn(w)
	}
	switch {
	case !sc.Enabled:
		return s, nil
	case sc.ReadMode != slack.ReadEvents:
		log.Warn("channels.slack is enabled, but serve reads Slack only through the Events API: set channels.slack.read.mode to events", "read.mode", sc.ReadMode)
		return s, nil
	}
	secret, err := slack.TokenFrom(sc.SigningSecretEnv)
	if err != nil {
		return nil, fmt.Errorf("channels.slack reads the Events API, whose requests are verified with the app's signing secret: %w (named by channels.slack.signingSecretEnv)", err)
	}
	token, err := slack.TokenFrom(sc.BotTokenEnv)
	if err != nil {
		log.Warn("no Slack bot token: messages are taken in, but not acknowledged with reactions", "err", err)
	}
	s.slack, err = inbound.NewSlack(inbound.SlackOptions{Link: router.Link, Slack: sc, Ledger: in, Token: token, Events: events, Log: log})
	if err != nil {
		return nil, err
	}
	s.slackSecret = []byte(secret)
	return s, nil
}

// processor dispatches each delivery by the channel it came from.
func (s *served) processor() channels.Processor {
	p := channels.ByChannel{"": s.router}
	if s.slack != nil {
		p[channels.ChannelSlack] = inbound.Processor{Pipeline: s.slack}
	}
	return p
}

// routes are the endpoints beside GitHub's webhook path.
func (s *served) routes(events *eventlog.Log, log *slog.Logger) []ingress.Route {
	if s.slack == nil {
		return nil
	}
	store := s.router.Link.Bindings()
	return []ingress.Route{{Path: slack.EventsPath, Handler: func(q *ingress.Queue) (http.Handler, error) {
		return slack.NewHandler(slack.HandlerOptions{Secret: s.slackSecret, Accept: q.AcceptSigned, Log: events, Logger: log,
			ItemOf: func(r channels.Reply) string {
				if b, ok, err := store.ByThread(r.ChannelID, r.Thread); err == nil && ok {
					return b.Ref
				}
				return ""
			}})
	}}}
}
