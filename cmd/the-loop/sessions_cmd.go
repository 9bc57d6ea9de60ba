package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/bindings"
	"github.com/the-loop/the-loop/channels/deliver"
	"github.com/the-loop/the-loop/policy"
)

// SessionsCmd groups the verbs that bind work items to checkouts and chat
// threads.
type SessionsCmd struct {
	Bind   SessionsBindCmd   `cmd:"" help:"Bind a work item to the checkout the-loop serve drives it in, or the Slack thread it is discussed in."`
	List   SessionsListCmd   `cmd:"" help:"List the bound work items."`
	Unbind SessionsUnbindCmd `cmd:"" help:"Forget a work item's binding, and its start record with it."`
	Inbox  SessionsInboxCmd  `cmd:"" help:"Print the messages kept in a work item's inbox."`
}

func (c *SessionsCmd) Help() string {
	return `A work item is driven by the-loop serve only once it is bound: its ref,
github:OWNER/REPO#N, names the checkout its spec folder (issue-N) lives in.
It may also name the Slack thread the work item is discussed in, whose
replies reach it, and where such a reply is delivered. Bindings are the
operator's, kept in the state root (state.root in the CLI config, default
~/.the-loop) at sessions/bindings.json, never in a repository. serve drives
a bound checkout only when its origin remote is OWNER/REPO, and only after
an authorized person commented the start keyword
(routing.control.requireStartCommand).`
}

// store opens the bindings of the CLI config's state root.
func (g *Globals) store() (*bindings.Store, *policy.CLIConfig, error) {
	cli, err := policy.LoadCLIConfig(g.Config)
	if err != nil {
		return nil, nil, err
	}
	return bindings.Open(cli.StateRoot()), cli, nil
}

// SessionsBindCmd is `the-loop sessions bind`.
type SessionsBindCmd struct {
	Ref            string `arg:"" help:"The work item, github:OWNER/REPO#N."`
	Slack          string `help:"The Slack thread the work item is discussed in, CHANNEL:THREAD_TS (C0123ABC:1712345678.000100)." placeholder:"CHANNEL:THREAD_TS"`
	DeliverURL     string `name:"deliver-url" help:"Deliver a reply heard for the work item by POSTing it as JSON to this http or https URL." placeholder:"URL" xor:"deliver"`
	DeliverCommand string `name:"deliver-command" help:"Deliver a reply heard for the work item by running this command with it as JSON on stdin; split on whitespace, with no shell and no quoting." placeholder:"'CMD ARG...'" xor:"deliver"`
	TextFormat
}

func (c *SessionsBindCmd) Help() string {
	return `Give the checkout with the global --repo DIR, the Slack thread with --slack,
or both. A binding with a thread and no checkout records the replies heard
on the thread and drives no graph. A thread belongs to one work item:
binding it to a second is refused.

Binding a work item again changes what is given and keeps the rest.
Another checkout forgets a start given for the old one; the same values
change nothing.

A reply heard for the work item goes to its --deliver-url, which gets it
POSTed as JSON and must answer 2xx within 10 s (redirects are not
followed), or to its --deliver-command, run with the reply as JSON on
stdin, which must exit 0 within 10 s. The command is split on whitespace
into its arguments, and no shell runs it: an argument that holds a space
needs a script of its own. With neither, the reply is kept in the work
item's inbox (the-loop sessions inbox).`
}

// bindReport is what sessions bind did.
type bindReport struct {
	Ref       string            `json:"ref"`
	Repo      string            `json:"repo"`
	Slack     *bindings.Thread  `json:"slack,omitempty"`
	Deliver   *bindings.Target  `json:"deliver,omitempty"`
	Unchanged bool              `json:"unchanged"`
	Previous  *bindings.Binding `json:"previous"`
	// Origin is the checkout's GitHub origin, "" when it has none.
	Origin string `json:"origin"`
}

// options are what the flags ask of the binding.
func (c *SessionsBindCmd) options(g *Globals) (bindings.Options, error) {
	o := bindings.Options{Repo: g.Repo}
	if c.Slack != "" {
		t, err := bindings.ParseThread(c.Slack)
		var te *bindings.ThreadError
		if errors.As(err, &te) {
			return o, fmt.Errorf("--slack %s: %s", te.Value, te.Msg)
		}
		o.Slack = &t
	}
	switch {
	case c.DeliverURL != "":
		o.Deliver = &bindings.Target{URL: c.DeliverURL}
	case c.DeliverCommand != "":
		argv := strings.Fields(c.DeliverCommand)
		if len(argv) == 0 {
			return o, errors.New("--deliver-command: got only spaces, want a command")
		}
		o.Deliver = &bindings.Target{Command: argv}
	}
	if o.Repo == "" && o.Slack == nil && o.Deliver == nil {
		return o, errors.New("sessions bind needs --repo DIR (the checkout the work item is driven in), --slack CHANNEL:THREAD_TS (the thread it is discussed in), or both")
	}
	return o, nil
}

func (c *SessionsBindCmd) Run(g *Globals, out *Output) error {
	ref, err := channels.ParseRef(c.Ref)
	if err != nil {
		return err
	}
	o, err := c.options(g)
	if err != nil {
		return err
	}
	store, cli, err := g.store()
	if err != nil {
		return err
	}
	host, err := cli.GitHubHost()
	if err != nil {
		return err
	}
	ch, err := store.Set(ref, o)
	var pe *bindings.PathError
	var te *bindings.TargetError
	switch {
	case errors.As(err, &pe):
		return fmt.Errorf("--repo %s: %s", pe.Path, pe.Msg)
	case errors.As(err, &te) && te.Kind == bindings.TargetURL:
		return fmt.Errorf("--deliver-url: %s", te.Msg)
	case errors.As(err, &te):
		return fmt.Errorf("--deliver-command: %s", te.Msg)
	case errors.Is(err, bindings.ErrNotBound):
		return fmt.Errorf("%s is not bound: give --repo DIR or --slack CHANNEL:THREAD_TS to bind it", ref)
	case err != nil:
		return err
	}
	b := ch.Binding
	rep := bindReport{Ref: b.Ref, Repo: b.Repo, Slack: b.Slack, Deliver: b.Deliver, Unchanged: ch.Unchanged, Previous: ch.Previous}
	if b.HasCheckout() {
		rep.Origin, _ = policy.CheckoutOrigin(b.Repo, host)
		if !strings.EqualFold(rep.Origin, ref.Repository()) {
			// Bound all the same: the operator may be about to add the remote.
			origin := "has no origin remote on " + host
			if rep.Origin != "" {
				origin = "has the origin " + rep.Origin
			}
			fmt.Fprintf(out.Stderr, "the-loop: note: the checkout %s; serve drives %s only in a checkout of %s\n", origin, rep.Ref, ref.Repository())
		}
	}
	return c.write(out, rep, func(w io.Writer) error {
		var sb strings.Builder
		switch {
		case ch.Unchanged:
			fmt.Fprintf(&sb, "%s is already bound to %s; nothing changed\n", b.Ref, boundTo(b))
		case ch.Rebound() && ch.Previous.HasCheckout():
			fmt.Fprintf(&sb, "rebound %s to %s, replacing its binding to %s\n", b.Ref, boundTo(b), visible(ch.Previous.Repo))
		case ch.Rebound():
			fmt.Fprintf(&sb, "bound %s to %s; it had no checkout\n", b.Ref, boundTo(b))
		case ch.Previous != nil:
			fmt.Fprintf(&sb, "updated %s, bound to %s\n", b.Ref, boundTo(b))
		default:
			fmt.Fprintf(&sb, "bound %s to %s\n", b.Ref, boundTo(b))
		}
		if ch.Rebound() && ch.Previous.Control != nil {
			fmt.Fprintf(&sb, "  its last control command (%s) was for the old checkout and is forgotten: start it again\n", ch.Previous.Control.Command)
		}
		if !ch.Unchanged {
			if b.Slack != nil && b.HasCheckout() {
				fmt.Fprintf(&sb, "  slack thread %s\n", b.Slack)
			}
			if b.Slack != nil || b.Deliver != nil {
				fmt.Fprintf(&sb, "  replies go to %s\n", repliesTo(b))
			}
		}
		_, err := io.WriteString(w, sb.String())
		return err
	})
}

// boundTo says what b binds its work item to: its checkout, else its
// thread.
func boundTo(b bindings.Binding) string {
	if b.HasCheckout() || b.Slack == nil {
		return visible(b.Repo)
	}
	return "the Slack thread " + b.Slack.String() + ", with no checkout"
}

// repliesTo says where a reply heard for b's work item is delivered.
func repliesTo(b bindings.Binding) string {
	switch {
	case b.Deliver == nil:
		return "its inbox (the-loop sessions inbox " + b.Ref + ")"
	case b.Deliver.Kind() == bindings.TargetURL:
		return "the URL " + visible(b.Deliver.URL)
	}
	return "the command " + visible(b.Deliver.String())
}

// SessionsListCmd is `the-loop sessions list`.
type SessionsListCmd struct {
	TextFormat
}

// listReport is what sessions list prints under --format json.
type listReport struct {
	File     string        `json:"file"`
	Bindings []bindingView `json:"bindings"`
}

type bindingView struct {
	bindings.Binding
	// State is what the last control command left the item in.
	State string `json:"state"`
}

// stateOf names what b's last control command left it in.
func stateOf(b bindings.Binding) string {
	switch b.Command() {
	case "":
		return "not started"
	case channels.CommandStart, channels.CommandResume:
		return "started"
	case channels.CommandContribute:
		return "started (contribute)"
	case channels.CommandDo:
		return "started (do)"
	case channels.CommandPause:
		return "paused"
	case channels.CommandStop:
		return "stopped"
	case channels.CommandCleanup:
		return "cleaned up"
	}
	return b.Command()
}

func (c *SessionsListCmd) Run(g *Globals, out *Output) error {
	store, _, err := g.store()
	if err != nil {
		return err
	}
	list, err := store.List()
	if err != nil {
		return err
	}
	rep := listReport{File: store.Path(), Bindings: []bindingView{}}
	for _, b := range list {
		rep.Bindings = append(rep.Bindings, bindingView{Binding: b, State: stateOf(b)})
	}
	return c.write(out, rep, func(w io.Writer) error {
		if len(rep.Bindings) == 0 {
			_, err := fmt.Fprintln(w, "no work item is bound; bind one with `the-loop sessions bind github:OWNER/REPO#N --repo DIR`")
			return err
		}
		refW, stateW := 0, 0
		for _, b := range rep.Bindings {
			refW, stateW = max(refW, len(b.Ref)), max(stateW, len(b.State))
		}
		var sb strings.Builder
		for _, b := range rep.Bindings {
			repo := visible(b.Repo)
			if !b.HasCheckout() {
				repo = "(no checkout)"
			}
			fmt.Fprintf(&sb, "%-*s  %-*s  %s", refW, b.Ref, stateW, b.State, repo)
			if b.Slack != nil {
				fmt.Fprintf(&sb, "  slack %s", b.Slack)
			}
			if b.Deliver != nil {
				fmt.Fprintf(&sb, "  deliver %s %s", b.Deliver.Kind(), visible(b.Deliver.String()))
			}
			sb.WriteString("\n")
		}
		_, err := io.WriteString(w, sb.String())
		return err
	})
}

// SessionsUnbindCmd is `the-loop sessions unbind`.
type SessionsUnbindCmd struct {
	Ref string `arg:"" help:"The work item, github:OWNER/REPO#N."`
	TextFormat
}

func (c *SessionsUnbindCmd) Help() string {
	return `Exit codes: 0 unbound, 1 it was not bound, 2 could not run.`
}

func (c *SessionsUnbindCmd) Run(g *Globals, out *Output) error {
	ref, err := channels.ParseRef(c.Ref)
	if err != nil {
		return err
	}
	store, _, err := g.store()
	if err != nil {
		return err
	}
	gone, err := store.Unbind(ref)
	if errors.Is(err, bindings.ErrNotBound) {
		fmt.Fprintf(out.Stderr, "the-loop: %s is not bound\n", ref)
		return exitCode(1)
	}
	if err != nil {
		return err
	}
	return c.write(out, gone, func(w io.Writer) error {
		to := boundTo(gone)
		if gone.Slack != nil && gone.HasCheckout() {
			to += " and the Slack thread " + gone.Slack.String()
		}
		_, err := fmt.Fprintf(w, "unbound %s (it was bound to %s)\n", gone.Ref, to)
		return err
	})
}

// SessionsInboxCmd is `the-loop sessions inbox`.
type SessionsInboxCmd struct {
	Ref string `arg:"" help:"The work item, github:OWNER/REPO#N."`
	TextFormat
}

func (c *SessionsInboxCmd) Help() string {
	return `The messages heard for the work item that no delivery target took, oldest
first: its inbox, sessions/inbox/OWNER+REPO+N.jsonl in the state root, one
JSON object a line. The-loop only ever appends to an inbox: unbind keeps it.

Exit codes: 0 printed (an empty inbox included), 2 could not run.`
}

func (c *SessionsInboxCmd) Run(g *Globals, out *Output) error {
	ref, err := channels.ParseRef(c.Ref)
	if err != nil {
		return err
	}
	cli, err := policy.LoadCLIConfig(g.Config)
	if err != nil {
		return err
	}
	msgs, err := deliver.ReadInbox(cli.StateRoot(), ref)
	if err != nil {
		return err
	}
	if msgs == nil {
		msgs = []deliver.Message{}
	}
	return c.write(out, msgs, func(w io.Writer) error {
		if len(msgs) == 0 {
			_, err := fmt.Fprintf(w, "the inbox of %s is empty\n", ref)
			return err
		}
		var sb strings.Builder
		for _, m := range msgs {
			fmt.Fprintf(&sb, "%s %s %s", m.At.UTC().Format(time.RFC3339), orDash(m.Channel), orDash(m.Author))
			if m.Thread != "" {
				fmt.Fprintf(&sb, " (thread %s)", visible(m.Thread))
			}
			fmt.Fprintf(&sb, ": %s\n", visible(m.Text))
		}
		_, err := io.WriteString(w, sb.String())
		return err
	})
}

// orDash is s made visible, "-" when it is empty, so that a line's fields
// stay apart.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return visible(s)
}
