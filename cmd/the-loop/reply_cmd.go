package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/github"
	"github.com/the-loop/the-loop/channels/inbound"
	"github.com/the-loop/the-loop/channels/route"
	"github.com/the-loop/the-loop/eventlog"
	"github.com/the-loop/the-loop/policy"
)

// ReplyCmd is `the-loop reply`.
type ReplyCmd struct {
	Channel string `required:"" enum:"slack" help:"The channel the message was written on, as the CLI config names it under channels: slack." placeholder:"NAME"`
	Thread  string `required:"" help:"The thread it replies in, CHANNEL_ID:THREAD_TS (as sessions bind --slack takes it)." placeholder:"THREAD"`
	Author  string `required:"" help:"The author's id on the channel (a Slack member id)." placeholder:"ID"`
	Text    string `required:"" help:"The message as written." placeholder:"TEXT"`
	TS      string `name:"ts" help:"The message's own id on the channel (Slack's ts), if it has one." placeholder:"TS"`
}

func (c *ReplyCmd) Help() string {
	return `reply takes one message heard on a chat channel through the pipeline serve
runs for Slack's events, and prints what it decided as one JSON object:
outcome (processed, or why it was dropped), event (work-item.reply,
gate.feedback, control.command), gate (open, none, unknown, n/a), workItem,
mirrored (recorded on the work item's issue), delivered (handed to its
session) and error. It is for scripts and chat tools the-loop has no
endpoint for. What it decides goes to the event log (eventLog.path) as the
channel.* events serve writes.

The thread must be bound (sessions bind REF --slack CHANNEL_ID:THREAD_TS),
the author a person in routing.authorizedUsers with an id on the channel,
and what the message becomes granted by channels.<name>.publish. Exit 0:
processed; 1: dropped; 2: could not run.`
}

func (c *ReplyCmd) Run(g *Globals, out *Output) error {
	channelID, thread, ok := strings.Cut(c.Thread, ":")
	if !ok || channelID == "" || thread == "" {
		return fmt.Errorf("--thread: got %q, want CHANNEL_ID:THREAD_TS, such as C0123ABC:1712345678.000100", c.Thread)
	}
	cli, err := policy.LoadCLIConfig(g.Config)
	if err != nil {
		return err
	}
	in, err := github.Configured(cli, os.Getenv)
	if err != nil {
		return err
	}
	// What the pipeline decides is in the event log, as it is when serve
	// runs it, and as every other verb's events are.
	events := eventlog.Discard
	if cli.EventLogEnabled() {
		events = eventlog.OpenFile(cli.EventLogPath(), "cli")
	}
	link, err := route.NewLink(route.Config{CLI: cli, Integration: in, Events: events})
	if err != nil {
		return err
	}
	p, warnings, err := inbound.ForReply(link, in, events)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintf(out.Stderr, "the-loop: warning: %s\n", w)
	}
	res, err := p.Process(context.Background(), channels.Reply{Channel: c.Channel, ChannelID: channelID, Thread: thread,
		TS: c.TS, Author: c.Author, Text: c.Text})
	if err != nil {
		res = inbound.Result{Outcome: "error", Error: err.Error()}
	}
	if werr := writeJSON(out, res); werr != nil {
		return werr
	}
	switch {
	case err != nil:
		return exitCode(2)
	case res.Outcome != inbound.OutcomeProcessed:
		return exitCode(1)
	}
	return nil
}
