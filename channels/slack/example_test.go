package slack_test

import (
	"fmt"

	"github.com/the-loop/the-loop/channels/slack"
	"github.com/the-loop/the-loop/channels/slack/slacktest"
)

// A processor reads a queued Slack delivery's body back into the reply it
// carries, or the reason it carries none.
func ExampleReplyOf() {
	for _, body := range [][]byte{
		slacktest.MessageEvent("Ev1", slacktest.Message{Channel: "C0123", User: "U0456", Text: "approved", TS: "1700000100.000200", ThreadTS: "1700000000.000100"}),
		slacktest.MessageEvent("Ev2", slacktest.Message{Channel: "C0123", Subtype: "message_deleted", TS: "1700000100.000200"}),
	} {
		env, err := slack.ParseEvent(body)
		if err != nil {
			fmt.Println(err)
			continue
		}
		r, why := slack.ReplyOf(env)
		if why != "" {
			fmt.Println(env.EventID, "is no reply:", why)
			continue
		}
		fmt.Printf("%s by %s in thread %s of %s: %q\n", env.EventID, r.Author, r.Thread, r.ChannelID, r.Text)
	}
	// Output:
	// Ev1 by U0456 in thread 1700000000.000100 of C0123: "approved"
	// Ev2 is no reply: not-a-new-message
}
