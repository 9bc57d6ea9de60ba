package route

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/bindings"
	"github.com/the-loop/the-loop/channels/deliver"
	"github.com/the-loop/the-loop/eventlog"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/policy"
)

// Link is the seam between what is heard about a work item and its
// process graph, as the original's GraphLink with the dispatcher's
// arguments: the operator's routing config, the bindings (the checkout
// each work item is driven in, and its control record), the control
// vocabulary and the allow-list. The router drives graphs through it; the
// inbound pipeline of a chat channel only reads through it ([Link.Gate]).
// Both are built by NewLink from one Config, so the two can never read a
// work item's graph under different guards: that drift, a reader built
// without the control record, is the original's issue 321.
type Link struct {
	cli         *policy.CLIConfig
	integration graph.Integration
	log         *slog.Logger
	events      graph.Emitter
	bindings    *bindings.Store
	vocabulary  channels.Vocabulary
	// host is the GitHub host a bound checkout's origin must be on
	// (policy.CLIConfig.GitHubHost).
	host string
	// deliver hands a comment to a work item's target.
	deliver deliverFunc
}

// NewLink builds the link cfg describes: the one constructor of the
// router's link and the pipeline's reader.
func NewLink(cfg Config) (*Link, error) {
	if cfg.CLI == nil {
		return nil, errors.New("route: no CLI config")
	}
	host, err := cfg.CLI.GitHubHost()
	if err != nil {
		return nil, fmt.Errorf("route: %w", err)
	}
	l := &Link{
		cli:         cfg.CLI,
		integration: cfg.Integration,
		log:         cfg.Log,
		events:      cfg.Events,
		bindings:    cfg.Bindings,
		vocabulary:  channels.VocabularyOf(cfg.CLI),
		host:        host,
	}
	if l.integration == nil {
		l.integration = graph.NoIntegration{}
	}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	if l.events == nil {
		l.events = eventlog.Discard
	}
	if l.bindings == nil {
		l.bindings = bindings.Open(cfg.CLI.StateRoot())
	}
	if l.deliver = cfg.Deliver; l.deliver == nil {
		root := cfg.CLI.StateRoot()
		l.deliver = func(ctx context.Context, b bindings.Binding, m deliver.Message) (deliver.Result, error) {
			return deliver.Deliver(ctx, root, b, m)
		}
	}
	return l, nil
}

// Settings is what a Link reads a work item's graph under: what must be
// the same for every reader of one config.
type Settings struct {
	// Bindings is the bindings file: the checkouts and control records.
	Bindings string
	// AuthorizedUsers are the GitHub logins whose word counts.
	AuthorizedUsers []string
	// GraphEnabled, ControlEnabled and RequireStart are routing.graph.
	// enabled, routing.control.enabled and its requireStartCommand.
	GraphEnabled, ControlEnabled, RequireStart bool
	// Commands are the control commands the vocabulary recognises, each
	// with its keyword.
	Commands map[string]string
	// GitHubHost is the host a bound checkout's origin must be on.
	GitHubHost string
}

// Settings reports what l reads graphs under.
func (l *Link) Settings() Settings {
	s := Settings{
		Bindings:        l.bindings.Path(),
		AuthorizedUsers: l.cli.AuthorizedUsers(),
		GraphEnabled:    l.cli.GraphEnabled(),
		ControlEnabled:  l.cli.ControlEnabled(),
		RequireStart:    l.cli.RequireStartCommand(),
		Commands:        map[string]string{},
		GitHubHost:      l.host,
	}
	for _, c := range channels.Commands {
		if l.vocabulary.Recognises(c) {
			s.Commands[c] = l.cli.ControlKeyword(c)
		}
	}
	return s
}

// Bindings is the store the link reads bindings from.
func (l *Link) Bindings() *bindings.Store { return l.bindings }

// Vocabulary is the control keywords the link recognises.
func (l *Link) Vocabulary() channels.Vocabulary { return l.vocabulary }

// CLI is the operator's configuration the link was built from.
func (l *Link) CLI() *policy.CLIConfig { return l.cli }

// GateRead is the answer of [Link.Gate]: the gate word and, unless the
// graph answered, why it could not.
type GateRead struct {
	Gate channels.Gate
	// Node is the node the work item stands at, when the graph was read.
	Node string
	// Why says why the read is not the graph's answer ("" when it is).
	Why string
}

// Gate reads whether work waits at a human gate, as the router would find
// it before handing a comment to the gate, and changes nothing: it opens
// the bound checkout without adopting it, reads the work item's state and
// runs no hook.
//
//   - GateNone: routing.graph.enabled is false (nothing drives a graph, so
//     nothing waits at a gate), or the graph says the work item stands at
//     a node no person answers.
//   - GateOpen: the graph says it stands at a human gate.
//   - GateUnknown: the read could not be made. The work item is not bound,
//     or bound to a thread and no checkout; its bindings cannot be read;
//     the router would not drive it (held: not started, paused, stopped);
//     its checkout is missing, empty or not the work item's repository; it
//     has no spec folder or has not entered its loop; its state cannot be
//     read.
//
// A fault is GateUnknown with the fault in Why, never an error: a reader
// that cannot tell says so, and the caller decides who judges instead.
func (l *Link) Gate(work channels.Ref) (read GateRead) {
	unknown := func(why string) GateRead { return GateRead{Gate: channels.GateUnknown, Why: why} }
	defer func() {
		// A reader's panic is a read that could not be made, not a crash
		// of the process that asked.
		if p := recover(); p != nil {
			read = unknown(fmt.Sprintf("the read failed: %v", p))
		}
		if read.Why != "" {
			l.log.Debug("could not read the graph", "work_item", work, "why", read.Why)
		}
	}()
	if work.IsZero() {
		return GateRead{Gate: channels.GateNone, Why: "no work item"}
	}
	if !l.cli.GraphEnabled() {
		return GateRead{Gate: channels.GateNone, Why: "routing.graph.enabled is false"}
	}
	b, ok, err := l.bindings.Lookup(work)
	switch {
	case err != nil:
		return unknown("the bindings could not be read: " + err.Error())
	case !ok:
		return unknown("the work item is not bound")
	case !b.HasCheckout():
		return unknown("the work item is bound to no checkout")
	}
	if why := l.held(b); why != "" {
		return unknown("the work item is held: " + why)
	}
	t := &target{work: work, binding: b}
	if err := checkoutThere(t); err != nil {
		return unknown(err.Error())
	}
	if origin, ok := l.owned(t); !ok {
		if origin == "" {
			origin = "no GitHub origin remote"
		}
		return unknown("the bound checkout is not the work item's repository (" + origin + ")")
	}
	e, err := l.open(t)
	if err != nil {
		return unknown("the checkout could not be opened: " + err.Error())
	}
	pos, err := e.Position(work.ItemID(), policy.Selector{Ref: work.String()})
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return unknown("the work item has no spec folder")
	case err != nil:
		return unknown("the state could not be read: " + err.Error())
	case !pos.Entered:
		return unknown("the work item has not entered its loop")
	case pos.Human:
		return GateRead{Gate: channels.GateOpen, Node: pos.Node}
	}
	return GateRead{Gate: channels.GateNone, Node: pos.Node}
}
