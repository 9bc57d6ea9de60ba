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
and what the message becomes granted by channels.<name>.publish.

reply moves no work item itself: a gate answer or a control command acts
once the webhook ingress reads its record on the issue, so its record is
its whole effect. A record over the 65,536 characters GitHub takes in a
comment is refused before it is sent. With --ts, the record is looked for
on the issue before it is posted, so running the same reply again never
records it twice.

Exit codes follow the effect:
  0  done: recorded on the issue, and a work-item.reply delivered too;
  1  not done, and running it again would not help: dropped (outcome says
     why; unrecorded when GitHub refused the record of a gate answer or
     control command, which then changed nothing), or a work-item.reply
     processed in part (mirrored or delivered false; error says which);
  2  could not run, or GitHub failed for now (outcome error): nothing was
     delivered, and the record is not known to be on the issue; run it
     again.`
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
	process := p.Process
	if c.TS != "" {
		// The caller's retry is the retry: a run whose answer from GitHub
		// was lost may have posted the record.
		process = p.ProcessAgain
	}
	res, err := process(context.Background(), channels.Reply{Channel: c.Channel, ChannelID: channelID, Thread: thread,
		TS: c.TS, Author: c.Author, Text: c.Text})
	if err != nil {
		failed := inbound.Failed(err, c.TS != "")
		res.Outcome, res.Error = failed.Outcome, failed.Error
	}
	if werr := writeJSON(out, res); werr != nil {
		return werr
	}
	switch {
	case err != nil:
		return exitCode(2)
	case !res.Done():
		return exitCode(1)
	}
	return nil
}
