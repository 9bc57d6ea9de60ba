package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/the-loop/the-loop/channels/ingress"
	"github.com/the-loop/the-loop/eventlog"
	"github.com/the-loop/the-loop/policy"
)

// ServeCmd is `the-loop serve`.
type ServeCmd struct {
	Host                string `help:"Interface to listen on (default: webhooks.ghWebhook.host, 127.0.0.1)." placeholder:"HOST"`
	Port                *int   `help:"Port to listen on (default: webhooks.ghWebhook.port, 8787); 0 picks a free one." placeholder:"N"`
	InsecureNoSignature bool   `name:"insecure-no-signature" help:"Accept deliveries without verifying their signature when no secret is set: anyone who can reach the port can post events."`
}

func (c *ServeCmd) Help() string {
	return `serve receives GitHub webhooks: POST to webhooks.ghWebhook.path (default
/gh-webhook), GET /healthz for a probe. A delivery must carry a valid
X-Hub-Signature-256 for the secret in the environment variable that
webhooks.ghWebhook.secretEnv names (default THE_LOOP_GH_WEBHOOK_SECRET); with
no secret serve refuses to start unless --insecure-no-signature is given.

An accepted delivery is written to a queue in the state root
(<state.root>/serve/queue.db) before it is answered 202, then processed in
the background: one at a time per work item, in the order they arrived,
routing.maxConcurrentDispatches at once. A delivery id seen before is
answered 202 and dropped. After a crash every delivery answered 202 is
processed on the next start, and gets exactly one routing.routed or
routing.dropped in the event log. SIGTERM or SIGINT stops accepting, lets
the deliveries being processed finish, and leaves the rest queued.

With channels.slack enabled and read.mode events, serve also takes Slack's
Events API at /slack/events, verified with the app's signing secret (the
variable channels.slack.signingSecretEnv names, default
SLACK_SIGNING_SECRET; serve will not start without it), on the same queue.
A reply in a bound thread (sessions bind REF --slack CHANNEL:THREAD_TS) goes
through the inbound pipeline: see the-loop reply --help and
docs/channels.md.

When the CLI config's service.mcp.tokenEnv names an environment variable,
serve also answers MCP at /mcp (streamable HTTP) for the repository --repo
names (default: the working directory's), the tools of the-loop mcp, to
requests carrying "Authorization: Bearer <token>" with the token that
variable holds; serve will not start while it is empty. Without the key,
/mcp is not served.`
}

// reactionsAtStop bounds how long a stopping serve waits for the
// reactions still to be posted: they are best effort.
const reactionsAtStop = 10 * time.Second

func (c *ServeCmd) Run(g *Globals, out *Output) error {
	cli, err := policy.LoadCLIConfig(g.Config)
	if err != nil {
		return err
	}
	wh := cli.Webhook()
	if c.Host != "" {
		wh.Host = c.Host
	}
	if c.Port != nil {
		if *c.Port < 0 || *c.Port > 65535 {
			return fmt.Errorf("--port: got %d, want 0 to 65535", *c.Port)
		}
		wh.Port = *c.Port
	}
	level := slog.LevelInfo
	if g.Verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(out.Stderr, &slog.HandlerOptions{Level: level}))
	secret := os.Getenv(wh.SecretEnv)
	switch {
	case secret == "" && !c.InsecureNoSignature:
		return fmt.Errorf("%w: set $%s (named by webhooks.ghWebhook.secretEnv) to the secret GitHub signs with, or pass --insecure-no-signature to accept unverified deliveries", ingress.ErrNoSecret, wh.SecretEnv)
	case secret == "":
		logger.Warn("no webhook secret: deliveries are accepted without verifying their signature, so anyone who can reach the port can post events", "secretEnv", wh.SecretEnv)
	}
	for _, e := range policy.WebhookLifecycleEvents {
		if !slices.Contains(wh.Events, e) {
			logger.Warn("webhooks.ghWebhook.events omits "+e+": a closed issue or merged pull request will never arrive", "events", strings.Join(wh.Events, ","))
		}
	}
	events := eventlog.Discard
	if cli.EventLogEnabled() {
		events = eventlog.OpenFile(cli.EventLogPath(), "serve")
	}
	s, err := newServed(events, cli, logger)
	if err != nil {
		return err
	}
	routes := s.routes()
	if r, err := mcpRoute(g, out, cli, logger); err != nil {
		return err
	} else if r != nil {
		routes = append(routes, *r)
	}
	// Signals are caught before the port opens: once it answers, a
	// SIGTERM is a graceful stop.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", net.JoinHostPort(wh.Host, strconv.Itoa(wh.Port)))
	if err != nil {
		return err
	}
	err = ingress.Serve(ctx, ln, filepath.Join(cli.StateRoot(), ingress.QueueFile), s.processor(), ingress.Options{
		Path:     wh.Path,
		Secret:   []byte(secret),
		Insecure: secret == "",
		Events:   wh.Events,
		Workers:  wh.Workers,
		Keep:     wh.DedupCacheSize,
		Log:      events,
		Logger:   logger,
		ItemOf:   s.router.ItemOf,
		Routes:   routes,
	})
	if !s.router.WaitReactions(reactionsAtStop) {
		logger.Warn("stopped with reactions still unposted")
	}
	if errors.Is(err, ingress.ErrLocked) {
		return fmt.Errorf("%w: is another the-loop serve running with this state root?", err)
	}
	return err
}
