package slack_test

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/the-loop/the-loop/channels/slack"
	"github.com/the-loop/the-loop/channels/slack/slacktest"
)

// TestSignMatchesSlacksExample holds Sign to the worked example of Slack's
// "Verifying requests from Slack".
func TestSignMatchesSlacksExample(t *testing.T) {
	body := "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
	got := slack.Sign([]byte("8f742231b10e8888abcd99yyyzzz85a5"), "1531420618", []byte(body))
	if want := "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"; got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
}

func TestVerify(t *testing.T) {
	secret := []byte("s3cret-signing-key")
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	body := []byte(`{"type":"event_callback"}`)
	signed := func(at time.Time) http.Header {
		h := http.Header{}
		slacktest.SignHeader(h, secret, body, at)
		return h
	}
	with := func(h http.Header, key, value string) http.Header {
		if value == "" {
			h.Del(key)
		} else {
			h.Set(key, value)
		}
		return h
	}
	tests := []struct {
		name   string
		secret []byte
		hdr    http.Header
		body   []byte
		want   string // "" verifies
	}{
		{name: "a request signed now verifies", hdr: signed(now)},
		{name: "a request signed 4m59s ago verifies", hdr: signed(now.Add(-4*time.Minute - 59*time.Second))},
		{name: "a request signed 4m59s ahead verifies", hdr: signed(now.Add(4*time.Minute + 59*time.Second))},
		{name: "a request signed over 5 minutes ago is a replay", hdr: signed(now.Add(-5*time.Minute - time.Second)), want: "5m1s in the past"},
		{name: "a request signed over 5 minutes ahead is refused", hdr: signed(now.Add(5*time.Minute + time.Second)), want: "5m1s in the future"},
		{name: "a request signed a year ago is a replay", hdr: signed(now.AddDate(-1, 0, 0)), want: "in the past"},
		{name: "a missing timestamp", hdr: with(signed(now), slack.HeaderTimestamp, ""), want: "missing X-Slack-Request-Timestamp"},
		{name: "a timestamp that is not a number", hdr: with(signed(now), slack.HeaderTimestamp, "noon"), want: "malformed X-Slack-Request-Timestamp"},
		{name: "a signed timestamp", hdr: with(signed(now), slack.HeaderTimestamp, "+"+strconv.FormatInt(now.Unix(), 10)), want: "malformed X-Slack-Request-Timestamp"},
		{name: "a timestamp in milliseconds", hdr: with(signed(now), slack.HeaderTimestamp, strconv.FormatInt(now.UnixMilli(), 10)), want: "X-Slack-Request-Timestamp"},
		{name: "a timestamp too long to be seconds", hdr: with(signed(now), slack.HeaderTimestamp, strings.Repeat("9", 40)), want: "malformed X-Slack-Request-Timestamp"},
		{name: "a missing signature", hdr: with(signed(now), slack.HeaderSignature, ""), want: "missing X-Slack-Signature"},
		{name: "a signature of another version", hdr: with(signed(now), slack.HeaderSignature, "v1="+strings.Repeat("ab", 32)), want: "malformed X-Slack-Signature"},
		{name: "a signature that is not hex", hdr: with(signed(now), slack.HeaderSignature, "v0="+strings.Repeat("zz", 32)), want: "malformed X-Slack-Signature"},
		{name: "a short signature", hdr: with(signed(now), slack.HeaderSignature, "v0=abcd"), want: "malformed X-Slack-Signature"},
		{name: "a request signed with another secret", secret: []byte("another-secret"), hdr: signed(now), want: "does not match"},
		{name: "a tampered body", hdr: signed(now), body: []byte(`{"type":"event_callback" }`), want: "does not match"},
		{name: "a timestamp changed after signing", hdr: with(signed(now), slack.HeaderTimestamp, strconv.FormatInt(now.Unix()-1, 10)), want: "does not match"},
		{name: "no secret verifies nothing", secret: []byte{}, hdr: signed(now), want: "no signing secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, b := secret, body
			if tt.secret != nil {
				s = tt.secret
			}
			if tt.body != nil {
				b = tt.body
			}
			err := slack.Verify(s, tt.hdr, b, now)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Verify = %v, want an error saying %q", err, tt.want)
			}
			if !errors.Is(err, slack.ErrUnverified) {
				t.Errorf("Verify = %v, want it to wrap ErrUnverified", err)
			}
			for _, sec := range [][]byte{secret, s} {
				if len(sec) > 0 && strings.Contains(err.Error(), string(sec)) {
					t.Errorf("the error %q carries the secret", err)
				}
			}
		})
	}
}
