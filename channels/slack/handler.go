package slack

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"time"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/ingress"
	"github.com/the-loop/the-loop/eventlog"
)

// EventsPath is where `the-loop serve` mounts the handler: the Request URL
// the Slack app's Event Subscriptions point at is this path on serve's
// address.
const EventsPath = "/slack/events"

// Reasons slack.rejected gives for a request answered with an error.
const (
	RejectMethod           = "method-not-allowed"
	RejectTooLarge         = "too-large"
	RejectMediaType        = "unsupported-media-type"
	RejectInvalidSignature = "invalid-signature"
	RejectInvalidPayload   = "invalid-payload"
	RejectUnavailable      = "unavailable"
)

// ErrNoSecret is NewHandler asked for without a signing secret. There is
// no insecure mode: anyone who can reach the endpoint could otherwise speak
// as anyone in the workspace.
var ErrNoSecret = errors.New("no Slack signing secret: events could not be verified")

// HandlerOptions configure NewHandler. Secret and Accept are required.
type HandlerOptions struct {
	// Secret is the Slack app's signing secret.
	Secret []byte
	// Accept takes a verified event in, durably, before it is answered:
	// (*ingress.Queue).AcceptSigned.
	Accept func(channels.Delivery) (ingress.Receipt, error)
	// ItemOf is the bound work item of a reply's thread, "" when none: the
	// queue processes the deliveries of one item in order. Nil names none.
	ItemOf func(r channels.Reply) string
	// Log receives slack.rejected; nil discards it.
	Log ingress.EventLog
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Now is the clock signatures are checked against; nil is time.Now.
	Now func() time.Time
}

type handler struct {
	opts    HandlerOptions
	bodies  *ingress.BodyReader
	rejects *ingress.Sampler
}

// NewHandler returns the Events API endpoint, which serve mounts at
// EventsPath. It refuses to build without a Secret (ErrNoSecret) or an
// Accept. The handler is safe for concurrent use.
//
// A request is answered, in this order of checks:
//
//   - 405 (with Allow: POST) for a method other than POST;
//   - 413 when its Content-Length is over MaxBody, before any of it is
//     read, or once MaxBody bytes have been;
//   - 415 when its Content-Type is not application/json;
//   - 401 when its signature fails Verify (checked on the headers before
//     the body is read, then on the body);
//   - 400 when the body is not an Events API request (ParseEvent);
//   - 200 {"challenge": ...} for url_verification;
//   - 200 {"status":"accepted"} once Accept has recorded an
//     event_callback, a duplicate included: Slack retries an event it
//     thinks went unanswered with the same event_id, and the queue
//     de-duplicates on it;
//   - 200 {"status":"ignored"} for app_rate_limited, logged as a warning:
//     Slack dropped events;
//   - 503 when Accept says ingress.ErrQueueFull or ingress.ErrClosed, or
//     no body slot came free in time, 500 for any other Accept error.
//
// Every event_callback is queued, a message or not, an edit or a new one:
// the handler carries requests, and the processor, which reads the event
// with ReplyOf, drops what is not a new message with its reason, so that
// every event Slack sent has one recorded outcome. Only a message's
// delivery names a work item (ItemOf).
//
// Every refusal is logged as slack.rejected with its reason, at most
// ingress.RejectsPerSecond a second; the next line says how many went unsaid.
func NewHandler(opts HandlerOptions) (http.Handler, error) {
	if len(opts.Secret) == 0 {
		return nil, ErrNoSecret
	}
	if opts.Accept == nil {
		return nil, errors.New("slack events handler: no Accept to take events in")
	}
	if opts.ItemOf == nil {
		opts.ItemOf = func(channels.Reply) string { return "" }
	}
	if opts.Log == nil {
		opts.Log = eventlog.Discard
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &handler{opts: opts, bodies: ingress.NewBodyReader(MaxBody), rejects: ingress.NewSampler(ingress.RejectsPerSecond)}, nil
}

// response is the JSON body of an answer.
type response struct {
	Status  string `json:"status"`
	Dropped string `json:"dropped,omitempty"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var eventID string
	reject := func(code int, reason, msg string) {
		// Anyone can be refused, as often as they like: the logs hear of
		// it at a bounded rate, and of how many refusals went unsaid.
		if unsaid, ok := h.rejects.Allow(); ok {
			f := map[string]any{"reason": reason, "remote": r.RemoteAddr}
			if eventID != "" {
				f["event_id"] = eventID
			}
			if n := r.Header.Get(HeaderRetryNum); n != "" {
				f["retry_num"] = clip(n)
			}
			if unsaid > 0 {
				f["unlogged"] = unsaid
			}
			if err := h.opts.Log.Emit("slack.rejected", "", f); err != nil {
				h.opts.Logger.Error("cannot write the event log", "err", err)
			}
			h.opts.Logger.Warn("slack request refused", "status", code, "reason", reason, "event_id", eventID, "remote", r.RemoteAddr, "why", clip(msg), "unlogged", unsaid)
		}
		writeJSON(w, code, response{Status: msg})
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		reject(http.StatusMethodNotAllowed, RejectMethod, "method not allowed")
		return
	}
	if r.ContentLength > MaxBody {
		// Refused unread: the server closes the connection rather than
		// drain what is left.
		reject(http.StatusRequestEntityTooLarge, RejectTooLarge, fmt.Sprintf("body over %d bytes", MaxBody))
		return
	}
	if ct := r.Header.Get("Content-Type"); !isJSON(ct) {
		reject(http.StatusUnsupportedMediaType, RejectMediaType, fmt.Sprintf("content type %q is not accepted; the Events API sends application/json", clip(ct)))
		return
	}
	// What can be told without the body (a stale or missing timestamp, a
	// missing signature) is, before it is read.
	if _, _, err := signedHeaders(r.Header, h.opts.Now()); err != nil {
		reject(http.StatusUnauthorized, RejectInvalidSignature, err.Error())
		return
	}
	body, release, berr := h.bodies.Read(w, r)
	if berr != nil {
		reject(berr.Status, berr.Reason, berr.Msg)
		return
	}
	defer release()
	now := h.opts.Now()
	if err := Verify(h.opts.Secret, r.Header, body, now); err != nil {
		reject(http.StatusUnauthorized, RejectInvalidSignature, err.Error())
		return
	}
	env, err := ParseEvent(body)
	if err != nil {
		reject(http.StatusBadRequest, RejectInvalidPayload, err.Error())
		return
	}
	switch env.Type {
	case TypeURLVerification:
		writeJSON(w, http.StatusOK, struct {
			Challenge string `json:"challenge"`
		}{env.Challenge})
		return
	case TypeAppRateLimited:
		h.opts.Logger.Warn("Slack is holding events back from this app for the rest of the minute; those are not sent again", "team_id", env.TeamID)
		writeJSON(w, http.StatusOK, response{Status: "ignored"})
		return
	}
	eventID = env.EventID
	d := channels.Delivery{
		ID:       "slack:" + env.EventID,
		Event:    env.EventType,
		Channel:  channels.ChannelSlack,
		Body:     body,
		Received: now.UTC(),
	}
	if reply, why := ReplyOf(env); why == "" {
		d.Item = h.opts.ItemOf(reply)
	}
	if n := r.Header.Get(HeaderRetryNum); n != "" {
		h.opts.Logger.Debug("Slack retried an event", "event_id", env.EventID, "retry_num", clip(n), "reason", clip(r.Header.Get("X-Slack-Retry-Reason")))
	}
	rc, err := h.opts.Accept(d)
	switch {
	case errors.Is(err, ingress.ErrQueueFull), errors.Is(err, ingress.ErrClosed):
		reject(http.StatusServiceUnavailable, RejectUnavailable, err.Error())
		return
	case err != nil:
		h.opts.Logger.Error("cannot record a Slack event", "event_id", env.EventID, "err", err)
		reject(http.StatusInternalServerError, RejectUnavailable, "the event could not be recorded")
		return
	}
	writeJSON(w, http.StatusOK, response{Status: "accepted", Dropped: rc.Dropped})
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

// clip bounds a value an unverified caller chose before it is logged or
// put in an error.
func clip(s string) string {
	if len(s) > 128 {
		return s[:128] + "…"
	}
	return s
}
