package slack_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/channels/slack"
	"github.com/the-loop/the-loop/channels/slack/slacktest"
)

const token = "xoxb-1234-5678-secretbottoken"

func TestAddReaction(t *testing.T) {
	srv := slacktest.NewServer()
	defer srv.Close()
	srv.SetToken(token)
	c := slack.NewClient(srv.URL+"/", token, nil)
	if err := c.AddReaction(context.Background(), "C0123", "1700000100.000200", "eyes"); err != nil {
		t.Fatal(err)
	}
	want := []slacktest.Reaction{{Channel: "C0123", TS: "1700000100.000200", Name: "eyes"}}
	if got := srv.Reactions(); len(got) != 1 || got[0] != want[0] {
		t.Errorf("reactions %+v, want %+v", got, want)
	}
	call := srv.Calls()[0]
	if call.Method != "reactions.add" || call.Authorization != "Bearer "+token || call.ContentType != "application/json; charset=utf-8" {
		t.Errorf("call %+v, want a JSON reactions.add with the bot token", call)
	}
	var body map[string]string
	if err := json.Unmarshal([]byte(call.Body), &body); err != nil ||
		body["channel"] != "C0123" || body["timestamp"] != "1700000100.000200" || body["name"] != "eyes" || len(body) != 3 {
		t.Errorf("body %s, want channel, timestamp and name", call.Body)
	}
}

func TestAddReactionAlreadyThereIsSuccess(t *testing.T) {
	srv := slacktest.NewServer()
	defer srv.Close()
	c := slack.NewClient(srv.URL, token, nil)
	for range 2 {
		if err := c.AddReaction(context.Background(), "C0123", "1.0", "white_check_mark"); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(srv.Calls()); n != 2 {
		t.Errorf("%d calls, want 2", n)
	}
	if n := len(srv.Reactions()); n != 1 {
		t.Errorf("%d reactions, want 1", n)
	}
}

func TestAddReactionFailures(t *testing.T) {
	tests := []struct {
		name  string
		setup func(*slacktest.Server)
		token string
		code  string // Slack's error code, "" when none
		want  string
	}{
		{name: "a token without the scope carries Slack's code", setup: func(s *slacktest.Server) { s.Fail("missing_scope") },
			code: "missing_scope", want: "slack reactions.add: missing_scope"},
		{name: "a wrong token is invalid_auth", setup: func(s *slacktest.Server) { s.SetToken("xoxb-the-right-one") },
			code: "invalid_auth", want: "invalid_auth"},
		{name: "an HTTP error is an error", setup: func(s *slacktest.Server) { s.FailStatus(http.StatusBadGateway) },
			want: "HTTP 502"},
		{name: "a rate limit says when to retry", setup: func(s *slacktest.Server) { s.FailStatus(http.StatusTooManyRequests) },
			want: "retry after 1 s"},
		{name: "no token makes no call", token: "-", want: "no bot token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := slacktest.NewServer()
			defer srv.Close()
			if tt.setup != nil {
				tt.setup(srv)
			}
			tok := token
			if tt.token == "-" {
				tok = ""
			}
			err := slack.NewClient(srv.URL, tok, nil).AddReaction(context.Background(), "C0123", "1.0", "eyes")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("AddReaction = %v, want an error saying %q", err, tt.want)
			}
			var ae *slack.APIError
			if got := errors.As(err, &ae); got != (tt.code != "") || (got && ae.Code != tt.code) {
				t.Errorf("AddReaction = %#v, want an APIError with code %q", err, tt.code)
			}
			if strings.Contains(err.Error(), token) || strings.Contains(err.Error(), "secretbottoken") {
				t.Errorf("the error %q carries the token", err)
			}
			if len(srv.Reactions()) != 0 {
				t.Errorf("a failed call added %v", srv.Reactions())
			}
			if tt.token == "-" && len(srv.Calls()) != 0 {
				t.Errorf("a call was made without a token")
			}
		})
	}
}

func TestAddReactionRefusesWhatSlackCannotAnswer(t *testing.T) {
	tests := []struct {
		name   string
		answer func(w http.ResponseWriter)
		want   string
	}{
		{"a redirect is not followed", func(w http.ResponseWriter) {
			w.Header().Set("Location", "https://elsewhere.example/steal")
			w.WriteHeader(http.StatusTemporaryRedirect)
		}, "HTTP 307"},
		{"an answer over 64 KiB", func(w http.ResponseWriter) {
			w.Write([]byte(`{"ok":true,"pad":"` + strings.Repeat("x", 64<<10) + `"}`))
		}, "answer over 65536 bytes"},
		{"an answer that is not JSON", func(w http.ResponseWriter) { w.Write([]byte("<html>proxy error</html>")) }, "not Slack's JSON"},
		{"ok false without a code", func(w http.ResponseWriter) { w.Write([]byte(`{"ok":false}`)) }, "unknown_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hits int
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits++
				tt.answer(w)
			}))
			defer srv.Close()
			err := slack.NewClient(srv.URL, token, srv.Client()).AddReaction(context.Background(), "C0123", "1.0", "eyes")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("AddReaction = %v, want an error saying %q", err, tt.want)
			}
			if hits != 1 {
				t.Errorf("%d requests, want 1", hits)
			}
			if strings.Contains(err.Error(), token) {
				t.Errorf("the error %q carries the token", err)
			}
		})
	}
}

func TestAddReactionNeedsAMessageAndAName(t *testing.T) {
	srv := slacktest.NewServer()
	defer srv.Close()
	c := slack.NewClient(srv.URL, token, nil)
	for _, args := range [][3]string{{"", "1.0", "eyes"}, {"C1", "", "eyes"}, {"C1", "1.0", ""}} {
		if err := c.AddReaction(context.Background(), args[0], args[1], args[2]); err == nil {
			t.Errorf("AddReaction%q: want an error", args)
		}
	}
	if len(srv.Calls()) != 0 {
		t.Errorf("calls were made: %v", srv.Calls())
	}
}

func TestAddReactionHonoursTheContext(t *testing.T) {
	srv := slacktest.NewServer()
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := slack.NewClient(srv.URL, token, nil).AddReaction(ctx, "C1", "1.0", "eyes")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("AddReaction = %v, want context.Canceled", err)
	}
}

func TestNewClientLeavesTheCallersClientAlone(t *testing.T) {
	hc := &http.Client{}
	slack.NewClient("https://slack.com/api", token, hc)
	if hc.CheckRedirect != nil {
		t.Error("NewClient changed the http.Client it was given")
	}
}

func TestTokenFrom(t *testing.T) {
	t.Setenv("SLACKTEST_BOT_TOKEN", " "+token+"\n")
	t.Setenv("SLACKTEST_BLANK", "  ")
	tests := []struct {
		name string
		env  string
		want string
		err  string
	}{
		{name: "a token set is read, trimmed", env: "SLACKTEST_BOT_TOKEN", want: token},
		{name: "an unset variable is named", env: "SLACKTEST_UNSET_VARIABLE", err: "$SLACKTEST_UNSET_VARIABLE is not set"},
		{name: "a blank variable is unset", env: "SLACKTEST_BLANK", err: "$SLACKTEST_BLANK is not set"},
		{name: "no variable named", env: "", err: "no environment variable named"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := slack.TokenFrom(tt.env)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("TokenFrom = %q, %v; want an error saying %q", got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("TokenFrom = %q, %v; want the token", got, err)
			}
		})
	}
}
