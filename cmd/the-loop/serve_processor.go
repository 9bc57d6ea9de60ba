package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/the-loop/the-loop/builtins"
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
		// the-loop's own. Asked now so that the first comment need not
		// wait; a failure is logged and asked again with the first
		// comment that needs it, never a reason not to start.
		cfg.Identity = gh.Identity
		go learnIdentity(gh, cli.AuthorizedUsers(), log)
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

// identityAtStart bounds serve's first question of who its token is.
const identityAtStart = 30 * time.Second

// learnIdentity asks GitHub who the integration's credential is, and says
// what it learned.
func learnIdentity(gh *github.Integration, authorized []string, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), identityAtStart)
	defer cancel()
	login, err := gh.Identity(ctx)
	switch {
	case err != nil:
		log.Warn("could not learn the GitHub login the-loop posts with; it is asked again with the next comment, and until then a comment by an authorized login is kept for a retry", "err", err)
	case login == "":
		log.Info("the GitHub credential is no user's: the-loop's comments are told by their marker")
	case builtins.IsAuthorized(login, authorized):
		// The usual set-up, so that the ledger's relays of chat answers
		// land; but the operator typing on GitHub as that login is not
		// heard, and should know it.
		log.Warn("the-loop posts on GitHub as "+login+", which routing.authorizedUsers names: that login's comments are the-loop's own and answer nothing (but the ledger's relays of chat answers); answer gates on GitHub from another account", "login", login)
	default:
		log.Info("the-loop posts on GitHub as "+login+": that login's comments are the-loop's own, but for the ledger's relays", "login", login)
	}
}
