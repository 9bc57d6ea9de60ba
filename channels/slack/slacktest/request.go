package slacktest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"

	"github.com/the-loop/the-loop/channels/slack"
)

// SignedRequest is an Events API request of body to slack.EventsPath,
// signed with secret now, as Slack sends it, for a handler's ServeHTTP. To
// send one over the network, build the request and sign it with
// SignHeader.
func SignedRequest(secret, body []byte) *http.Request {
	return SignedRequestAt(secret, body, time.Now())
}

// SignedRequestAt is SignedRequest signed at the time at.
func SignedRequestAt(secret, body []byte, at time.Time) *http.Request {
	r := httptest.NewRequest(http.MethodPost, slack.EventsPath, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	SignHeader(r.Header, secret, body, at)
	return r
}

// SignHeader sets X-Slack-Request-Timestamp to at and X-Slack-Signature to
// body's signature under secret at that time.
func SignHeader(h http.Header, secret, body []byte, at time.Time) {
	ts := strconv.FormatInt(at.Unix(), 10)
	h.Set(slack.HeaderTimestamp, ts)
	h.Set(slack.HeaderSignature, slack.Sign(secret, ts, body))
}

// Message is a message event's fields; those left "" are left out.
type Message struct {
	Channel  string
	User     string
	BotID    string
	Subtype  string
	Text     string
	TS       string
	ThreadTS string
}

// MessageEvent is the body of an event_callback carrying m, in workspace
// T0000TEST.
func MessageEvent(eventID string, m Message) []byte {
	ev := map[string]any{"type": "message"}
	for k, v := range map[string]string{"channel": m.Channel, "user": m.User, "bot_id": m.BotID,
		"subtype": m.Subtype, "text": m.Text, "ts": m.TS, "thread_ts": m.ThreadTS} {
		if v != "" {
			ev[k] = v
		}
	}
	return EventCallback(eventID, ev)
}

// EventCallback is the body of an event_callback carrying event, in
// workspace T0000TEST.
func EventCallback(eventID string, event map[string]any) []byte {
	return mustJSON(map[string]any{
		"token": "legacy-verification-token", "team_id": "T0000TEST", "api_app_id": "A0000TEST",
		"type": slack.TypeEventCallback, "event_id": eventID, "event_time": 1767225600, "event": event,
	})
}

// URLVerification is the body of the handshake Slack sends when the
// Request URL is set.
func URLVerification(challenge string) []byte {
	return mustJSON(map[string]any{"token": "legacy-verification-token", "type": slack.TypeURLVerification, "challenge": challenge})
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
