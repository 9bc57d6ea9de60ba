package ingress

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/the-loop/the-loop/channels"
)

// GitHub's headers on a delivery.
const (
	HeaderSignature256 = "X-Hub-Signature-256"
	// HeaderSignatureSHA1 is GitHub's legacy signature; it is never
	// accepted, alone or beside the SHA-256 one.
	HeaderSignatureSHA1 = "X-Hub-Signature"
	HeaderDelivery      = "X-GitHub-Delivery"
	HeaderEvent         = "X-GitHub-Event"
)

// Reasons webhook.rejected gives for a delivery answered with an error.
const (
	RejectInvalidSignature = "invalid-signature"
	RejectInvalidPayload   = "invalid-payload"
	RejectTooLarge         = "too-large"
	RejectMediaType        = "unsupported-media-type"
	RejectUnavailable      = "unavailable"
)

// maxReading bounds the deliveries whose bodies are read at once: each may
// hold MaxBody in memory before its signature can be checked, and nobody
// has to prove anything to send one. A delivery waits up to slotWait for a
// slot, and a body must arrive within bodyReadTimeout.
const (
	maxReading      = 8
	slotWait        = 2 * time.Second
	bodyReadTimeout = 10 * time.Second
)

// handler answers GitHub's deliveries and health probes.
type handler struct {
	q        *Queue
	path     string
	secret   []byte
	insecure bool
	opts     Options
	bodies   *BodyReader
	rejects  *Sampler // what a refusal may write to the logs
}

// NewHandler returns the HTTP handler of the ingress: POST to opts.Path
// takes a delivery in through q; GET /healthz (and /health, as the original
// tool serves it) answers 200 "ok".
//
// A delivery is answered:
//
//   - 413 when its body is over MaxBody (refused on its Content-Length
//     before any of it is read, else once MaxBody bytes have been);
//   - 415 when its Content-Type is not application/json (GitHub can be set
//     to send form-encoded payloads: they are refused);
//   - 401 when X-Hub-Signature-256 is missing or is not the HMAC-SHA256 of
//     the body's bytes under the secret (the SHA-1 X-Hub-Signature is never
//     enough);
//   - 400 when X-GitHub-Delivery or X-GitHub-Event is missing or malformed,
//     or the body is not a JSON object;
//   - 503 when the queue is full or closing, 500 when it cannot be written;
//   - 202 once Queue.Accept has recorded it, including a delivery dropped
//     as disabled-event or duplicate-delivery.
//
// Every refusal is logged as webhook.rejected. It returns ErrNoSecret when
// opts has no Secret and Insecure is not set.
func NewHandler(q *Queue, opts Options) (http.Handler, error) {
	opts = opts.withDefaults()
	if len(opts.Secret) == 0 && !opts.Insecure {
		return nil, ErrNoSecret
	}
	if !strings.HasPrefix(opts.Path, "/") {
		return nil, fmt.Errorf("webhook path %q: want an absolute URL path, such as %s", opts.Path, DefaultPath)
	}
	if isHealth(opts.Path) {
		return nil, fmt.Errorf("webhook path %q: taken by the health probe", opts.Path)
	}
	return &handler{q: q, path: trimSlash(opts.Path), secret: opts.Secret, insecure: opts.Insecure, opts: opts,
		bodies: newBodyReader(MaxBody, opts.Limits), rejects: NewSampler(RejectsPerSecond)}, nil
}

func trimSlash(p string) string {
	if len(p) > 1 {
		return strings.TrimSuffix(p, "/")
	}
	return p
}

func isHealth(p string) bool {
	p = trimSlash(p)
	return p == "/healthz" || p == "/health"
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 && (r.Method != http.MethodPost || trimSlash(r.URL.Path) != h.path) {
		// A body nobody reads is not waited for (see reject).
		w.Header().Set("Connection", "close")
		_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	}
	switch p := trimSlash(r.URL.Path); {
	case isHealth(p):
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			answer(w, http.StatusMethodNotAllowed, "method not allowed", "")
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if h.q.isFaulted() {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "the queue file faulted\n")
			return
		}
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "ok\n")
	case p == h.path:
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			answer(w, http.StatusMethodNotAllowed, "method not allowed", "")
			return
		}
		h.delivery(w, r)
	default:
		answer(w, http.StatusNotFound, "not found", "")
	}
}

// response is the JSON body of every answer to a delivery, which GitHub
// shows beside it in the webhook's delivery log.
type response struct {
	Status   string `json:"status"`
	Delivery string `json:"delivery,omitempty"`
	Dropped  string `json:"dropped,omitempty"`
}

func answer(w http.ResponseWriter, code int, status, delivery string) {
	writeResponse(w, code, response{Status: status, Delivery: delivery})
}

func writeResponse(w http.ResponseWriter, code int, r response) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(r)
}

func (h *handler) delivery(w http.ResponseWriter, r *http.Request) {
	id, event := r.Header.Get(HeaderDelivery), r.Header.Get(HeaderEvent)
	reject := func(code int, reason, msg string) {
		// Anyone can be refused, as often as they like: the logs hear of
		// it at a bounded rate, and of how many refusals went unsaid.
		if unsaid, ok := h.rejects.Allow(); ok {
			f := map[string]any{"reason": reason, "delivery_id": nonEmpty(clip(id)), "gh_event": nonEmpty(clip(event)), "remote": r.RemoteAddr}
			if unsaid > 0 {
				f["unlogged"] = unsaid
			}
			if err := h.opts.Log.Emit("webhook.rejected", "", f); err != nil {
				h.opts.Logger.Error("cannot write the event log", "err", err)
			}
			h.opts.Logger.Warn("delivery refused", "status", code, "reason", reason, "delivery_id", clip(id), "remote", r.RemoteAddr, "why", clip(msg), "unlogged", unsaid)
		}
		// What is left of the body is not waited for: the server would
		// read up to 256 KiB of it, at the sender's pace, to keep the
		// connection.
		w.Header().Set("Connection", "close")
		_ = http.NewResponseController(w).SetReadDeadline(time.Now())
		answer(w, code, msg, "")
	}
	if r.ContentLength > MaxBody {
		// Refused unread: the server closes the connection rather than
		// drain what is left.
		reject(http.StatusRequestEntityTooLarge, RejectTooLarge, fmt.Sprintf("payload over %d bytes", MaxBody))
		return
	}
	if ct := r.Header.Get("Content-Type"); !isJSON(ct) {
		msg := fmt.Sprintf("content type %q is not accepted; set the webhook's content type to application/json", clip(ct))
		reject(http.StatusUnsupportedMediaType, RejectMediaType, msg)
		return
	}
	if !h.insecure {
		// What can be told without the body is, before it is read.
		if msg := signatureShape(r.Header); msg != "" {
			reject(http.StatusUnauthorized, RejectInvalidSignature, msg)
			return
		}
	}
	body, release, berr := h.bodies.Read(w, r)
	if berr != nil {
		reject(berr.Status, berr.Reason, berr.Msg)
		return
	}
	defer release()
	if !h.insecure {
		if msg := verify(h.secret, body, r.Header); msg != "" {
			reject(http.StatusUnauthorized, RejectInvalidSignature, msg)
			return
		}
	}
	if !ValidID(id) {
		reject(http.StatusBadRequest, RejectInvalidPayload, "missing or malformed "+HeaderDelivery)
		return
	}
	if !ValidEvent(event) {
		reject(http.StatusBadRequest, RejectInvalidPayload, "missing or malformed "+HeaderEvent)
		return
	}
	if !isObject(body) {
		reject(http.StatusBadRequest, RejectInvalidPayload, "the payload is not a JSON object")
		return
	}
	d := channels.Delivery{ID: id, Event: event, Body: body, Item: h.opts.ItemOf(body), Received: time.Now().UTC()}
	rc, err := h.q.accept(d, !h.insecure)
	switch {
	case errors.Is(err, ErrQueueFull), errors.Is(err, ErrClosed):
		reject(http.StatusServiceUnavailable, RejectUnavailable, err.Error())
		return
	case err != nil:
		h.opts.Logger.Error("cannot record a delivery", "delivery_id", id, "err", err)
		reject(http.StatusInternalServerError, RejectUnavailable, "the delivery could not be recorded")
		return
	}
	writeResponse(w, http.StatusAccepted, response{Status: "accepted", Delivery: id, Dropped: rc.Dropped})
}

// signatureShape says why a delivery's X-Hub-Signature-256 cannot be
// right whatever its body, or "": it is there, and shaped as one.
func signatureShape(hdr http.Header) string {
	_, msg := signatureOf(hdr)
	return msg
}

// signatureOf reads X-Hub-Signature-256: its bytes, or why it has none.
func signatureOf(hdr http.Header) ([]byte, string) {
	sig := hdr.Get(HeaderSignature256)
	if sig == "" {
		if hdr.Get(HeaderSignatureSHA1) != "" {
			return nil, "X-Hub-Signature (SHA-1) is not accepted; X-Hub-Signature-256 is required"
		}
		return nil, "missing X-Hub-Signature-256"
	}
	hexSum, ok := strings.CutPrefix(sig, "sha256=")
	got, err := hex.DecodeString(hexSum)
	if !ok || err != nil || len(got) != sha256.Size {
		return nil, "malformed X-Hub-Signature-256; want sha256=<64 hex digits>"
	}
	return got, ""
}

// verify checks a delivery's X-Hub-Signature-256 against the body it
// signs, in constant time; it returns why it fails, or "".
func verify(secret, body []byte, hdr http.Header) string {
	got, msg := signatureOf(hdr)
	if msg != "" {
		return msg
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return "invalid signature"
	}
	return ""
}

// Sign is the X-Hub-Signature-256 value GitHub sends with body under secret.
func Sign(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

func isObject(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

// ValidID accepts what GitHub sends as a delivery id (a GUID), and any
// other id a channel sends that is short and printable: 1 to 128 bytes of
// printable ASCII without spaces. It is a key and a log field.
func ValidID(s string) bool { return printable(s, 128) }

// printable reports whether s is 1 to max bytes of printable ASCII with no
// space.
func printable(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// ValidEvent accepts an event type name as GitHub and Slack write them:
// lower-case words joined by _, at most 64 bytes.
func ValidEvent(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// clip bounds a header value an unverified caller chose before it is
// logged.
func clip(s string) string {
	if len(s) > 128 {
		return s[:128] + "…"
	}
	return s
}

// nonEmpty is s, or nil (a field the event log leaves out) when s is "".
func nonEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
