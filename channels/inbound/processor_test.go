package inbound

import (
	"context"
	"reflect"
	"testing"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/route"
	"github.com/the-loop/the-loop/channels/slack"
	"github.com/the-loop/the-loop/channels/slack/slacktest"
)

// slackWorld is a world whose pipeline is the Slack channel's, as serve
// builds it, acknowledging through a fake Slack.
func slackWorld(t *testing.T, publish []string) (*world, *slacktest.Server, Processor) {
	t.Helper()
	w := newWorld(t, opts{publish: publish})
	api := slacktest.NewServer()
	t.Cleanup(api.Close)
	sc, _, err := slack.ConfigOf(w.cli)
	if err != nil {
		t.Fatal(err)
	}
	sc.APIBaseURL = api.URL
	link, err := route.NewLink(route.Config{CLI: w.cli, Integration: w.ledger})
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewSlack(SlackOptions{Link: link, Slack: sc, Ledger: w.ledger, Token: "xoxb-test", Events: w.events})
	if err != nil {
		t.Fatal(err)
	}
	w.p = p
	return w, api, Processor{Pipeline: p}
}

func slackDelivery(id string, m slacktest.Message) channels.Delivery {
	return channels.Delivery{ID: "slack:" + id, Event: "message", Channel: channels.ChannelSlack, Body: slacktest.MessageEvent(id, m)}
}

func TestASlackEventIsProcessedAndAcknowledgedOnItsMessage(t *testing.T) {
	w, api, proc := slackWorld(t, gateGrant)
	w.bind(workRef, w.checkout, "")
	out, err := proc.Process(context.Background(), slackDelivery("Ev1", slacktest.Message{Channel: slackChan, User: memberID,
		Text: "approved", TS: "1712345999.000200", ThreadTS: threadTS}))
	if err != nil {
		t.Fatal(err)
	}
	if !out.Routed || out.Fields["kind"] != channels.EventGateFeedback || out.Fields["gate"] != "open" || out.Fields["mirrored"] != true {
		t.Fatalf("got %+v", out)
	}
	want := []slacktest.Reaction{{Channel: slackChan, TS: "1712345999.000200", Name: "eyes"}, {Channel: slackChan, TS: "1712345999.000200", Name: "white_check_mark"}}
	if got := api.Reactions(); !reflect.DeepEqual(got, want) {
		t.Errorf("reactions = %+v, want %+v", got, want)
	}
}

func TestARefusedSlackMessageIsAcknowledgedAsAnErrorOnlyForAnAuthorizedAuthor(t *testing.T) {
	w, api, proc := slackWorld(t, replyGrant)
	w.bind(workRef, w.checkout, "")
	out, _ := proc.Process(context.Background(), slackDelivery("Ev1", slacktest.Message{Channel: slackChan, User: strangerID,
		Text: "approved", TS: "1712345999.000201", ThreadTS: threadTS}))
	if out.Routed || out.Reason != DropUnauthorized || len(api.Reactions()) != 0 {
		t.Fatalf("a stranger got %+v and reactions %v", out, api.Reactions())
	}
	out, _ = proc.Process(context.Background(), slackDelivery("Ev2", slacktest.Message{Channel: slackChan, User: memberID,
		Text: "approved", TS: "1712345999.000202", ThreadTS: threadTS}))
	if out.Routed || out.Reason != DropUnpublishable {
		t.Fatalf("got %+v", out)
	}
	if got := api.Reactions(); len(got) != 2 || got[1].Name != "warning" {
		t.Errorf("reactions = %+v, want received then error", got)
	}
}

func TestAFailingReactionChangesNothing(t *testing.T) {
	w, api, proc := slackWorld(t, gateGrant)
	w.bind(workRef, w.checkout, "")
	api.Fail("missing_scope")
	out, err := proc.Process(context.Background(), slackDelivery("Ev1", slacktest.Message{Channel: slackChan, User: memberID,
		Text: "approved", TS: "1712345999.000200", ThreadTS: threadTS}))
	if err != nil || !out.Routed {
		t.Fatalf("got %+v, %v", out, err)
	}
	if f := w.events.named("channel.reaction_failed"); len(f) != 2 {
		t.Errorf("channel.reaction_failed = %v", f)
	}
}

func TestSlackEventsThatAreNotNewMessagesAreDropped(t *testing.T) {
	w, _, proc := slackWorld(t, gateGrant)
	w.bind(workRef, w.checkout, "")
	for _, d := range []channels.Delivery{
		slackDelivery("Ev1", slacktest.Message{Channel: slackChan, User: memberID, Subtype: "message_changed", TS: "1.1", ThreadTS: threadTS}),
		{ID: "slack:Ev2", Channel: channels.ChannelSlack, Event: "reaction_added", Body: slacktest.EventCallback("Ev2", map[string]any{"type": "reaction_added"})},
		{ID: "slack:Ev3", Channel: channels.ChannelSlack, Event: "message", Body: []byte("{")},
	} {
		out, err := proc.Process(context.Background(), d)
		if err != nil || out.Routed || out.Reason != DropNotANewMessage {
			t.Errorf("%s: got %+v, %v", d.ID, out, err)
		}
	}
	if _, err := proc.Process(context.Background(), channels.Delivery{ID: "x"}); err == nil {
		t.Error("a GitHub delivery was taken as a Slack event")
	}
}
