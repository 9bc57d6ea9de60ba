// Package slacktest fakes the parts of Slack the-loop talks to, so that
// the Slack channel and the packages wiring it into serve are tested
// without the network.
//
// [Server] is the Web API: it records every reactions.add, keeps the
// reactions on each message (a second add of one answers already_reacted,
// as Slack does), checks the bot token when given one, and can be told to
// fail every call with a Slack error code or an HTTP status.
//
//	srv := slacktest.NewServer()
//	defer srv.Close()
//	client := slack.NewClient(srv.URL, "xoxb-test", nil)
//	... act ...
//	got := srv.Reactions()
//
// [SignedRequest] and [SignHeader] make the requests Slack's Events API
// sends, signed with a secret, and [MessageEvent] and [URLVerification]
// their bodies.
//
// A Server is safe for concurrent use.
package slacktest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Reaction is one reaction reactions.add put on a message.
type Reaction struct {
	Channel string // the channel id
	TS      string // the message's ts
	Name    string // the reaction, without colons
}

// Call is one request the server received.
type Call struct {
	// Method is the Web API method: the path without its slash
	// (reactions.add).
	Method        string
	Authorization string
	ContentType   string
	Body          string
}

// Server is the fake Web API. Its zero value is not usable: call NewServer.
type Server struct {
	// URL is the API root to give a client (Config.APIBaseURL).
	URL string

	srv       *httptest.Server
	mu        sync.Mutex
	token     string
	failCode  string
	failHTTP  int
	calls     []Call
	reactions []Reaction
}

// NewServer starts a server that accepts any token and fails nothing.
func NewServer() *Server {
	s := &Server{}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// SetToken makes token the one bot token the server accepts; a call with
// any other is answered invalid_auth, one with none not_authed. "" accepts
// any.
func (s *Server) SetToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = token
}

// Fail makes every call from now on answer HTTP 200 with ok false and the
// Slack error code (missing_scope, ratelimited, ...), changing nothing;
// "" stops failing.
func (s *Server) Fail(code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failCode = code
}

// FailStatus makes every call from now on answer the HTTP status, changing
// nothing; 0 stops failing. A 429 carries Retry-After: 1.
func (s *Server) FailStatus(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failHTTP = status
}

// Calls are the requests received, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Reactions are the reactions added, in the order they were.
func (s *Server) Reactions() []Reaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reactions)
}

var reactionName = regexp.MustCompile(`^[a-z0-9_+'-]{1,100}$`)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	method := strings.TrimPrefix(r.URL.Path, "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, Call{Method: method, Authorization: r.Header.Get("Authorization"),
		ContentType: r.Header.Get("Content-Type"), Body: string(body)})
	if s.failHTTP != 0 {
		if s.failHTTP == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
		}
		http.Error(w, http.StatusText(s.failHTTP), s.failHTTP)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	auth := r.Header.Get("Authorization")
	switch tok, ok := strings.CutPrefix(auth, "Bearer "); {
	case auth == "":
		answer(w, "not_authed")
		return
	case !ok || (s.token != "" && tok != s.token):
		answer(w, "invalid_auth")
		return
	}
	if s.failCode != "" {
		answer(w, s.failCode)
		return
	}
	switch method {
	case "reactions.add":
		answer(w, s.addReaction(r, body))
	default:
		answer(w, "unknown_method")
	}
}

// addReaction does reactions.add, answering "" or Slack's error code.
func (s *Server) addReaction(r *http.Request, body []byte) string {
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		return "invalid_arguments"
	}
	var p struct {
		Channel   string `json:"channel"`
		Timestamp string `json:"timestamp"`
		Name      string `json:"name"`
	}
	if json.Unmarshal(body, &p) != nil {
		return "invalid_json"
	}
	switch {
	case p.Channel == "":
		return "channel_not_found"
	case p.Timestamp == "":
		return "no_item_specified"
	case !reactionName.MatchString(p.Name):
		return "invalid_name"
	}
	rx := Reaction{Channel: p.Channel, TS: p.Timestamp, Name: p.Name}
	if slices.Contains(s.reactions, rx) {
		return "already_reacted"
	}
	s.reactions = append(s.reactions, rx)
	return ""
}

// answer writes Slack's answer: ok, or ok false with the code.
func answer(w http.ResponseWriter, code string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if code == "" {
		fmt.Fprint(w, `{"ok":true}`)
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": code})
}
