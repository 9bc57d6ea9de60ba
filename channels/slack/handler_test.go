package slack_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/ingress"
	"github.com/the-loop/the-loop/channels/slack"
	"github.com/the-loop/the-loop/channels/slack/slacktest"
	"github.com/the-loop/the-loop/eventlog"
)

var (
	secret = []byte("test-signing-secret")
	clock  = time.Date(2026, 3, 1, 12, 0, 0, 0, time.FixedZone("CET", 3600))
)

// acceptor is a fake queue: it records what it is handed and answers
// receipt and err.
type acceptor struct {
	mu      sync.Mutex
	got     []channels.Delivery
	receipt ingress.Receipt
	err     error
}

func (a *acceptor) deliveries() []channels.Delivery {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.got)
}

func (a *acceptor) accept(d channels.Delivery) (ingress.Receipt, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.got = append(a.got, d)
	return a.receipt, a.err
}

// emitted is a fake event log.
type emitted struct {
	mu     sync.Mutex
	events []map[string]any
}

func (e *emitted) Emit(event, level string, fields map[string]any) error {
	if _, ok := eventlog.Lookup(event); !ok {
		return errors.New("not in the catalog: " + event)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	f := map[string]any{"event": event}
	for k, v := range fields {
		f[k] = v
	}
	e.events = append(e.events, f)
	return nil
}

func (e *emitted) Path() string { return "" }

func (e *emitted) all() []map[string]any {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.events
}

// rig is a handler with a fake queue and event log, at clock.
type rig struct {
	h       http.Handler
	acc     *acceptor
	log     *emitted
	replies []channels.Reply // what ItemOf was asked about
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{acc: &acceptor{}, log: &emitted{}}
	h, err := slack.NewHandler(slack.HandlerOptions{
		Secret: secret,
		Accept: r.acc.accept,
		ItemOf: func(rp channels.Reply) string {
			r.replies = append(r.replies, rp)
			if rp.Thread == "1700000000.000100" {
				return "github:acme/shop#7"
			}
			return ""
		},
		Log: r.log,
		Now: func() time.Time { return clock },
	})
	if err != nil {
		t.Fatal(err)
	}
	r.h = h
	return r
}

func (r *rig) serve(req *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	r.h.ServeHTTP(w, req)
	return w
}

// signed is a request of body signed at clock.
func signed(body []byte) *http.Request { return slacktest.SignedRequestAt(secret, body, clock) }

var message = slacktest.MessageEvent("Ev0PV52K21", slacktest.Message{
	Channel: "C0123", User: "U0456", Text: "looks good", TS: "1700000100.000200", ThreadTS: "1700000000.000100",
})

// readCounter is a body that counts the bytes read from it.
type readCounter struct {
	r io.Reader
	n int
}

func (c *readCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestHandlerRefuses(t *testing.T) {
	big := bytes.Repeat([]byte("x"), slack.MaxBody+1)
	tests := []struct {
		name   string
		req    func() *http.Request
		code   int
		reason string
		unread bool // the body must not be read at all
	}{
		{name: "a GET, with the one method allowed", code: http.StatusMethodNotAllowed, reason: slack.RejectMethod,
			req: func() *http.Request { return httptest.NewRequest(http.MethodGet, slack.EventsPath, nil) }},
		{name: "a body over MaxBody by its length, unread", code: http.StatusRequestEntityTooLarge, reason: slack.RejectTooLarge, unread: true,
			req: func() *http.Request {
				r := signed(message)
				r.ContentLength = slack.MaxBody + 1
				return r
			}},
		{name: "a body over MaxBody sent without a length, once that much is read", code: http.StatusRequestEntityTooLarge, reason: slack.RejectTooLarge,
			req: func() *http.Request {
				r := signed(big)
				r.ContentLength = -1
				return r
			}},
		{name: "a form-encoded body", code: http.StatusUnsupportedMediaType, reason: slack.RejectMediaType,
			req: func() *http.Request {
				r := signed(message)
				r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				return r
			}},
		{name: "a body with no content type", code: http.StatusUnsupportedMediaType, reason: slack.RejectMediaType,
			req: func() *http.Request {
				r := signed(message)
				r.Header.Del("Content-Type")
				return r
			}},
		{name: "an unsigned request", code: http.StatusUnauthorized, reason: slack.RejectInvalidSignature,
			req: func() *http.Request {
				r := httptest.NewRequest(http.MethodPost, slack.EventsPath, bytes.NewReader(message))
				r.Header.Set("Content-Type", "application/json")
				return r
			}},
		{name: "a request signed with another secret", code: http.StatusUnauthorized, reason: slack.RejectInvalidSignature,
			req: func() *http.Request { return slacktest.SignedRequestAt([]byte("not-the-secret"), message, clock) }},
		{name: "a tampered body", code: http.StatusUnauthorized, reason: slack.RejectInvalidSignature,
			req: func() *http.Request {
				r := signed(message)
				tampered := bytes.Replace(message, []byte("U0456"), []byte("U0999"), 1)
				r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(tampered)), int64(len(tampered))
				return r
			}},
		{name: "a request signed over 5 minutes ago", code: http.StatusUnauthorized, reason: slack.RejectInvalidSignature,
			req: func() *http.Request {
				return slacktest.SignedRequestAt(secret, message, clock.Add(-5*time.Minute-time.Second))
			}},
		{name: "a request signed over 5 minutes ahead", code: http.StatusUnauthorized, reason: slack.RejectInvalidSignature,
			req: func() *http.Request {
				return slacktest.SignedRequestAt(secret, message, clock.Add(5*time.Minute+time.Second))
			}},
		{name: "a malformed timestamp", code: http.StatusUnauthorized, reason: slack.RejectInvalidSignature,
			req: func() *http.Request {
				r := signed(message)
				r.Header.Set(slack.HeaderTimestamp, "yesterday")
				return r
			}},
		{name: "a url_verification with a bad signature gets no challenge", code: http.StatusUnauthorized, reason: slack.RejectInvalidSignature,
			req: func() *http.Request {
				return slacktest.SignedRequestAt([]byte("guess"), slacktest.URLVerification("c-123"), clock)
			}},
		{name: "a signed body that is not JSON", code: http.StatusBadRequest, reason: slack.RejectInvalidPayload,
			req: func() *http.Request { return signed([]byte("payload=%7B%7D")) }},
		{name: "a signed body of another kind", code: http.StatusBadRequest, reason: slack.RejectInvalidPayload,
			req: func() *http.Request { return signed([]byte(`{"type":"block_actions","actions":[]}`)) }},
		{name: "an event_callback with a malformed event_id", code: http.StatusBadRequest, reason: slack.RejectInvalidPayload,
			req: func() *http.Request {
				return signed(slacktest.MessageEvent("Ev 1", slacktest.Message{Channel: "C1", User: "U1", TS: "1.0"}))
			}},
		{name: "an event_callback with an event_id over 128 bytes", code: http.StatusBadRequest, reason: slack.RejectInvalidPayload,
			req: func() *http.Request {
				return signed(slacktest.MessageEvent(strings.Repeat("E", 129), slacktest.Message{Channel: "C1", User: "U1", TS: "1.0"}))
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rg := newRig(t)
			req := tt.req()
			var body *readCounter
			if tt.unread {
				body = &readCounter{r: req.Body}
				req.Body = io.NopCloser(body)
			}
			w := rg.serve(req)
			if w.Code != tt.code {
				t.Fatalf("status %d (%s), want %d", w.Code, w.Body, tt.code)
			}
			if tt.code == http.StatusMethodNotAllowed && w.Header().Get("Allow") != http.MethodPost {
				t.Errorf("Allow %q, want POST", w.Header().Get("Allow"))
			}
			if body != nil && body.n != 0 {
				t.Errorf("%d bytes of the body were read; a body too large by its length is refused unread", body.n)
			}
			if strings.Contains(w.Body.String(), "challenge") {
				t.Errorf("a refusal answered %s", w.Body)
			}
			if len(rg.acc.got) != 0 {
				t.Errorf("a refused request reached the queue: %+v", rg.acc.got)
			}
			evs := rg.log.all()
			if len(evs) != 1 || evs[0]["event"] != "slack.rejected" || evs[0]["reason"] != tt.reason {
				t.Fatalf("logged %v, want one slack.rejected with reason %s", evs, tt.reason)
			}
			if strings.Contains(w.Body.String(), string(secret)) || strings.Contains(evs[0]["reason"].(string), string(secret)) {
				t.Error("the secret is in the answer")
			}
		})
	}
}

func TestHandlerAnswersTheHandshake(t *testing.T) {
	rg := newRig(t)
	w := rg.serve(signed(slacktest.URLVerification("3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P")))
	if w.Code != http.StatusOK {
		t.Fatalf("status %d (%s), want 200", w.Code, w.Body)
	}
	var got struct{ Challenge string }
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || got.Challenge != "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" {
		t.Errorf("answer %s (%v), want the challenge echoed", w.Body, err)
	}
	if len(rg.acc.got) != 0 || len(rg.log.all()) != 0 {
		t.Errorf("the handshake was queued or logged: %v %v", rg.acc.got, rg.log.all())
	}
}

func TestHandlerQueuesEvents(t *testing.T) {
	tests := []struct {
		name  string
		body  []byte
		event string
		item  string
		reply *channels.Reply // what ItemOf is asked about; nil when not asked
	}{
		{name: "a reply in a bound thread names the thread's work item", body: message, event: "message", item: "github:acme/shop#7",
			reply: &channels.Reply{Channel: "slack", ChannelID: "C0123", Thread: "1700000000.000100", TS: "1700000100.000200", Author: "U0456", Text: "looks good"}},
		{name: "a top-level message is its own thread", event: "message",
			body:  slacktest.MessageEvent("Ev2", slacktest.Message{Channel: "C0123", User: "U0456", Text: "hello", TS: "1700000200.000300"}),
			reply: &channels.Reply{Channel: "slack", ChannelID: "C0123", Thread: "1700000200.000300", TS: "1700000200.000300", Author: "U0456", Text: "hello", TopLevel: true}},
		{name: "a bot's message is queued, marked a bot's", event: "message", item: "github:acme/shop#7",
			body:  slacktest.MessageEvent("Ev3", slacktest.Message{Channel: "C0123", BotID: "B0789", Text: "a question", TS: "1700000300.000400", ThreadTS: "1700000000.000100"}),
			reply: &channels.Reply{Channel: "slack", ChannelID: "C0123", Thread: "1700000000.000100", TS: "1700000300.000400", Text: "a question", Bot: true}},
		{name: "an edit is queued for the processor to drop, naming no work item", event: "message",
			body: slacktest.EventCallback("Ev4", map[string]any{"type": "message", "subtype": "message_changed", "channel": "C0123", "ts": "1700000400.0",
				"message": map[string]any{"user": "U0456", "text": "edited", "ts": "1700000100.000200", "thread_ts": "1700000000.000100"}})},
		{name: "an event of another type is queued, naming no work item", event: "reaction_added",
			body: slacktest.EventCallback("Ev5", map[string]any{"type": "reaction_added", "user": "U0456", "reaction": "eyes"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rg := newRig(t)
			w := rg.serve(signed(tt.body))
			if w.Code != http.StatusOK || strings.TrimSpace(w.Body.String()) != `{"status":"accepted"}` {
				t.Fatalf("answer %d %s, want 200 accepted", w.Code, w.Body)
			}
			if len(rg.acc.got) != 1 {
				t.Fatalf("queued %d deliveries, want 1", len(rg.acc.got))
			}
			d := rg.acc.got[0]
			env, _ := slack.ParseEvent(tt.body)
			want := channels.Delivery{ID: "slack:" + env.EventID, Event: tt.event, Channel: channels.ChannelSlack, Item: tt.item, Received: clock.UTC()}
			if d.ID != want.ID || d.Event != want.Event || d.Channel != want.Channel || d.Item != want.Item ||
				!d.Received.Equal(want.Received) || d.Received.Location() != time.UTC {
				t.Errorf("delivery %+v, want %+v", d, want)
			}
			if !bytes.Equal(d.Body, tt.body) {
				t.Errorf("the body queued is not the body signed")
			}
			switch {
			case tt.reply == nil && len(rg.replies) != 0:
				t.Errorf("ItemOf asked about %+v; nothing is a reply", rg.replies)
			case tt.reply != nil && (len(rg.replies) != 1 || rg.replies[0] != *tt.reply):
				t.Errorf("ItemOf asked about %+v, want %+v", rg.replies, *tt.reply)
			}
			if len(rg.log.all()) != 0 {
				t.Errorf("logged %v", rg.log.all())
			}
		})
	}
}

func TestHandlerAcceptsWithinTheWindowBothWays(t *testing.T) {
	for _, skew := range []time.Duration{-5 * time.Minute, 5 * time.Minute, -4*time.Minute - 59*time.Second, 4*time.Minute + 59*time.Second} {
		rg := newRig(t)
		if w := rg.serve(slacktest.SignedRequestAt(secret, message, clock.Add(skew))); w.Code != http.StatusOK {
			t.Errorf("signed %s from now: status %d (%s), want 200", skew, w.Code, w.Body)
		}
	}
}

func TestHandlerIgnoresRateLimitNotices(t *testing.T) {
	rg := newRig(t)
	w := rg.serve(signed([]byte(`{"type":"app_rate_limited","team_id":"T1","minute_rate_limited":1518467820,"api_app_id":"A1"}`)))
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "ignored") {
		t.Errorf("answer %d %s, want 200 ignored", w.Code, w.Body)
	}
	if len(rg.acc.got) != 0 {
		t.Errorf("a rate-limit notice was queued")
	}
}

func TestHandlerWhenTheQueueFails(t *testing.T) {
	tests := []struct {
		name string
		err  error
		code int
	}{
		{"a full queue is a 503, for Slack to retry", ingress.ErrQueueFull, http.StatusServiceUnavailable},
		{"a closing queue is a 503", ingress.ErrClosed, http.StatusServiceUnavailable},
		{"a queue that cannot be written is a 500", errors.New("disk full"), http.StatusInternalServerError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rg := newRig(t)
			rg.acc.err = tt.err
			w := rg.serve(signed(message))
			if w.Code != tt.code {
				t.Fatalf("status %d (%s), want %d", w.Code, w.Body, tt.code)
			}
			if strings.Contains(w.Body.String(), "disk full") {
				t.Errorf("the answer %s tells the caller about the disk", w.Body)
			}
			evs := rg.log.all()
			if len(evs) != 1 || evs[0]["reason"] != slack.RejectUnavailable || evs[0]["event_id"] != "Ev0PV52K21" {
				t.Errorf("logged %v, want one slack.rejected unavailable naming the event", evs)
			}
		})
	}
}

func TestNewHandlerRefusesToRunUnverified(t *testing.T) {
	acc := &acceptor{}
	if _, err := slack.NewHandler(slack.HandlerOptions{Accept: acc.accept}); !errors.Is(err, slack.ErrNoSecret) {
		t.Errorf("no secret: got %v, want ErrNoSecret", err)
	}
	if _, err := slack.NewHandler(slack.HandlerOptions{Secret: secret}); err == nil {
		t.Error("no Accept: got a handler, want an error")
	}
}

func TestHandlerBoundsTheRefusalsLogged(t *testing.T) {
	rg := newRig(t)
	const n = 40
	for range n {
		rg.serve(httptest.NewRequest(http.MethodGet, slack.EventsPath, nil))
	}
	// Within one second ten are logged; a run straddling a second boundary
	// may log ten more.
	if got := len(rg.log.all()); got > 20 {
		t.Errorf("%d refusals logged of %d; want them bounded", got, n)
	}
}

// TestSlacksRetryIsADuplicate drives a real queue: Slack retries an event
// it thinks went unanswered with the same event_id, and the retry is
// answered 200 and dropped as a duplicate, so the event is processed once.
func TestSlacksRetryIsADuplicate(t *testing.T) {
	dir := t.TempDir()
	log := eventlog.OpenFile(filepath.Join(dir, "events.jsonl"), "serve")
	q, err := ingress.OpenQueue(filepath.Join(dir, "queue.db"), ingress.Options{Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	var accepted []ingress.Receipt
	h, err := slack.NewHandler(slack.HandlerOptions{
		Secret: secret,
		Accept: func(d channels.Delivery) (ingress.Receipt, error) {
			rc, err := q.AcceptSigned(d)
			accepted = append(accepted, rc)
			return rc, err
		},
		Log: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	first := slacktest.SignedRequest(secret, message)
	retry := slacktest.SignedRequest(secret, message)
	retry.Header.Set(slack.HeaderRetryNum, "1")
	retry.Header.Set("X-Slack-Retry-Reason", "http_timeout")
	for _, req := range []*http.Request{first, retry} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Fatalf("status %d (%s), want 200", w.Code, w.Body)
		}
	}
	if len(accepted) != 2 || accepted[0].Dropped != "" || accepted[1].Dropped != channels.DropDuplicateDelivery {
		t.Fatalf("receipts %+v, want the retry a duplicate", accepted)
	}
	if q.Len() != 1 {
		t.Errorf("%d queued, want 1", q.Len())
	}
	var received, dups int
	for _, l := range readLog(t, log.Path()) {
		switch {
		case l["event"] == "webhook.received":
			received++
			if l["verified"] != true || l["channel"] != "slack" || l["delivery_id"] != "slack:Ev0PV52K21" || l["channel_event"] != "message" {
				t.Errorf("webhook.received %v, want a verified slack message", l)
			}
		case l["event"] == "routing.dropped" && l["reason"] == channels.DropDuplicateDelivery:
			dups++
		}
	}
	if received != 2 || dups != 1 {
		t.Errorf("logged %d received and %d duplicates, want 2 and 1", received, dups)
	}

	// A queue that has closed answers 503, and Slack retries later.
	q.Close()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, slacktest.SignedRequest(secret, slacktest.MessageEvent("Ev9", slacktest.Message{Channel: "C1", User: "U1", TS: "9.0"})))
	if w.Code != http.StatusServiceUnavailable {
		t.Errorf("a closed queue: status %d (%s), want 503", w.Code, w.Body)
	}
}

func readLog(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l map[string]any
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	return out
}

// TestHandlerOverTheNetwork sends a request signed with slacktest.SignHeader
// through a real server, as serve's end-to-end tests do.
func TestHandlerOverTheNetwork(t *testing.T) {
	acc := &acceptor{}
	h, err := slack.NewHandler(slack.HandlerOptions{Secret: secret, Accept: acc.accept})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, err := http.NewRequest(http.MethodPost, srv.URL+slack.EventsPath, bytes.NewReader(message))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	slacktest.SignHeader(req.Header, secret, message, time.Now())
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got := acc.deliveries(); resp.StatusCode != http.StatusOK || len(got) != 1 || got[0].ID != "slack:Ev0PV52K21" {
		t.Errorf("status %d, queued %+v; want the event accepted", resp.StatusCode, got)
	}
}
