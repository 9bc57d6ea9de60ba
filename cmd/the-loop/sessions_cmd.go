package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/bindings"
	"github.com/the-loop/the-loop/policy"
)

// SessionsCmd groups the verbs that bind work items to checkouts.
type SessionsCmd struct {
	Bind   SessionsBindCmd   `cmd:"" help:"Bind a work item to the checkout the-loop serve drives it in."`
	List   SessionsListCmd   `cmd:"" help:"List the bound work items."`
	Unbind SessionsUnbindCmd `cmd:"" help:"Forget a work item's binding, and its start record with it."`
}

func (c *SessionsCmd) Help() string {
	return `A work item is driven by the-loop serve only once it is bound: its ref,
github:OWNER/REPO#N, names the checkout its spec folder (issue-N) lives in.
Bindings are the operator's, kept in the state root (state.root in the CLI
config, default ~/.the-loop) at sessions/bindings.json, never in a
repository. serve drives a bound checkout only when its origin remote is
OWNER/REPO, and only after an authorized person commented the start keyword
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
	Ref string `arg:"" help:"The work item, github:OWNER/REPO#N."`
	TextFormat
}

func (c *SessionsBindCmd) Help() string {
	return `Give the checkout with the global --repo DIR (required here). Binding a work
item again to another checkout replaces its binding, and forgets a start
given for the old one; binding it to the same checkout changes nothing.`
}

// bindReport is what sessions bind did.
type bindReport struct {
	Ref       string            `json:"ref"`
	Repo      string            `json:"repo"`
	Unchanged bool              `json:"unchanged"`
	Previous  *bindings.Binding `json:"previous"`
	// Origin is the checkout's GitHub origin, "" when it has none.
	Origin string `json:"origin"`
}

func (c *SessionsBindCmd) Run(g *Globals, out *Output) error {
	ref, err := channels.ParseRef(c.Ref)
	if err != nil {
		return err
	}
	if g.Repo == "" {
		return errors.New("sessions bind needs --repo DIR: the checkout the work item is driven in")
	}
	store, _, err := g.store()
	if err != nil {
		return err
	}
	ch, err := store.Bind(ref, g.Repo)
	var pe *bindings.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("--repo %s: %s", pe.Path, pe.Msg)
	}
	if err != nil {
		return err
	}
	rep := bindReport{Ref: ch.Binding.Ref, Repo: ch.Binding.Repo, Unchanged: ch.Unchanged, Previous: ch.Previous}
	rep.Origin, _ = policy.CheckoutOrigin(ch.Binding.Repo)
	if !strings.EqualFold(rep.Origin, ref.Repository()) {
		// Bound all the same: the operator may be about to add the remote.
		origin := "has no GitHub origin remote"
		if rep.Origin != "" {
			origin = "has the origin " + rep.Origin
		}
		fmt.Fprintf(out.Stderr, "the-loop: note: the checkout %s; serve drives %s only in a checkout of %s\n", origin, rep.Ref, ref.Repository())
	}
	return c.write(out, rep, func(w io.Writer) error {
		var err error
		switch {
		case ch.Unchanged:
			_, err = fmt.Fprintf(w, "%s is already bound to %s; nothing changed\n", rep.Ref, visible(rep.Repo))
		case ch.Previous != nil:
			_, err = fmt.Fprintf(w, "rebound %s to %s, replacing its binding to %s\n", rep.Ref, visible(rep.Repo), visible(ch.Previous.Repo))
			if err == nil && ch.Previous.Control != nil {
				_, err = fmt.Fprintf(w, "  its last control command (%s) was for the old checkout and is forgotten: start it again\n", ch.Previous.Control.Command)
			}
		default:
			_, err = fmt.Fprintf(w, "bound %s to %s\n", rep.Ref, visible(rep.Repo))
		}
		return err
	})
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
			fmt.Fprintf(&sb, "%-*s  %-*s  %s\n", refW, b.Ref, stateW, b.State, visible(b.Repo))
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
		_, err := fmt.Fprintf(w, "unbound %s (it was bound to %s)\n", gone.Ref, visible(gone.Repo))
		return err
	})
}
