package ingress

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/the-loop/the-loop/channels"
)

var secret = []byte("It's a Secret to Everybody")

const commentBody = `{"action":"created","repository":{"full_name":"acme/shop"},"issue":{"number":12},"comment":{"body":"approved"}}`

// post builds a signed delivery; edit changes it before it is sent.
func post(body string, edit func(r *http.Request)) *http.Request {
	r := httptest.NewRequest(http.MethodPost, DefaultPath, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(HeaderDelivery, "72d3162e-cc78-11e3-81ab-4c9367dc0958")
	r.Header.Set(HeaderEvent, "issue_comment")
	r.Header.Set(HeaderSignature256, Sign(secret, []byte(body)))
	if edit != nil {
		edit(r)
	}
	return r
}

func sha1Sig(body string) string {
	m := hmac.New(sha1.New, secret)
	m.Write([]byte(body))
	return "sha1=" + hex.EncodeToString(m.Sum(nil))
}

func TestTheHandlerAnswersEachDeliveryWithItsStatus(t *testing.T) {
	for _, tc := range []struct {
		name   string
		req    *http.Request
		code   int
		reason string // webhook.rejected's reason, "" when accepted
		says   string
	}{
		{"a signed delivery", post(commentBody, nil), http.StatusAccepted, "", `"status":"accepted"`},
		{"a charset on the content type", post(commentBody, func(r *http.Request) { r.Header.Set("Content-Type", "application/json; charset=utf-8") }), http.StatusAccepted, "", "accepted"},
		{"no signature", post(commentBody, func(r *http.Request) { r.Header.Del(HeaderSignature256) }), http.StatusUnauthorized, RejectInvalidSignature, "missing X-Hub-Signature-256"},
		{"a wrong signature", post(commentBody, func(r *http.Request) { r.Header.Set(HeaderSignature256, Sign([]byte("guess"), []byte(commentBody))) }), http.StatusUnauthorized, RejectInvalidSignature, "invalid signature"},
		{"a signature that is not hex", post(commentBody, func(r *http.Request) { r.Header.Set(HeaderSignature256, "sha256=zz") }), http.StatusUnauthorized, RejectInvalidSignature, "malformed"},
		{"a SHA-1 signature under the SHA-256 header", post(commentBody, func(r *http.Request) { r.Header.Set(HeaderSignature256, sha1Sig(commentBody)) }), http.StatusUnauthorized, RejectInvalidSignature, "malformed"},
		{"the SHA-1 header alone, correct", post(commentBody, func(r *http.Request) {
			r.Header.Del(HeaderSignature256)
			r.Header.Set(HeaderSignatureSHA1, sha1Sig(commentBody))
		}), http.StatusUnauthorized, RejectInvalidSignature, "SHA-1"},
		{"a signature over other bytes of the same JSON", post(commentBody, func(r *http.Request) {
			r.Header.Set(HeaderSignature256, Sign(secret, []byte(strings.ReplaceAll(commentBody, ",", ", "))))
		}), http.StatusUnauthorized, RejectInvalidSignature, "invalid signature"},
		{"a form-encoded delivery", post("payload="+commentBody, func(r *http.Request) {
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}), http.StatusUnsupportedMediaType, RejectMediaType, "application/json"},
		{"no content type", post(commentBody, func(r *http.Request) { r.Header.Del("Content-Type") }), http.StatusUnsupportedMediaType, RejectMediaType, "application/json"},
		{"a body that is not JSON", post(`{"action":`, nil), http.StatusBadRequest, RejectInvalidPayload, "not a JSON object"},
		{"a JSON array", post(`[1,2]`, nil), http.StatusBadRequest, RejectInvalidPayload, "not a JSON object"},
		{"no delivery id", post(commentBody, func(r *http.Request) { r.Header.Del(HeaderDelivery) }), http.StatusBadRequest, RejectInvalidPayload, HeaderDelivery},
		{"a delivery id with a space", post(commentBody, func(r *http.Request) { r.Header.Set(HeaderDelivery, "a b") }), http.StatusBadRequest, RejectInvalidPayload, HeaderDelivery},
		{"no event", post(commentBody, func(r *http.Request) { r.Header.Del(HeaderEvent) }), http.StatusBadRequest, RejectInvalidPayload, HeaderEvent},
		{"a declared length over the limit", post(commentBody, func(r *http.Request) { r.ContentLength = MaxBody + 1 }), http.StatusRequestEntityTooLarge, RejectTooLarge, "payload over"},
		{"a GET of the webhook path", httptest.NewRequest(http.MethodGet, DefaultPath, nil), http.StatusMethodNotAllowed, "", "method not allowed"},
		{"another path", httptest.NewRequest(http.MethodPost, "/elsewhere", nil), http.StatusNotFound, "", "not found"},
		{"the health probe", httptest.NewRequest(http.MethodGet, "/healthz", nil), http.StatusOK, "", "ok"},
		{"the original's health probe", httptest.NewRequest(http.MethodGet, "/health", nil), http.StatusOK, "", "ok"},
		{"a POST to the health probe", httptest.NewRequest(http.MethodPost, "/healthz", nil), http.StatusMethodNotAllowed, "", "method not allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Options{})
			h, err := NewHandler(e.q, Options{Secret: secret, Log: e.log})
			if err != nil {
				t.Fatal(err)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, tc.req)
			if w.Code != tc.code || !strings.Contains(w.Body.String(), tc.says) {
				t.Fatalf("got %d %q, want %d saying %q", w.Code, w.Body, tc.code, tc.says)
			}
			queued := 0
			if tc.code == http.StatusAccepted {
				queued = 1
			}
			if e.q.Len() != queued {
				t.Errorf("got %d queued, want %d", e.q.Len(), queued)
			}
			if tc.reason != "" && e.count("webhook.rejected", tc.reason) != 1 {
				t.Errorf("no webhook.rejected %s in %v", tc.reason, e.events())
			}
		})
	}
}

func TestAnAcceptedDeliveryIsQueuedWithTheBytesSignedAndItsItem(t *testing.T) {
	e := newEnv(t, Options{})
	h, _ := NewHandler(e.q, Options{Secret: secret, Log: e.log})
	body := "{\n  \"action\": \"created\",\n  \"repository\": {\"full_name\": \"acme/shop\"},\n  \"issue\": {\"number\": 12}\n}\n"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, post(body, nil))
	if w.Code != http.StatusAccepted {
		t.Fatalf("got %d %s", w.Code, w.Body)
	}
	var got channels.Delivery
	e.run(processorFunc(func(_ context.Context, d channels.Delivery) (channels.Outcome, error) {
		got = d
		return channels.Outcome{Routed: true}, nil
	}))
	e.waitIdle()
	if string(got.Body) != body || got.Item != "github:acme/shop#12" || got.Event != "issue_comment" || got.ID == "" || got.Received.IsZero() {
		t.Fatalf("processed %+v", got)
	}
	rec := e.events()[0]
	if rec.str("event") != "webhook.received" || rec["verified"] != true || rec.str("work_item") != "github:acme/shop#12" {
		t.Fatalf("first event %v, want a verified webhook.received naming the item", rec)
	}
}

func TestADuplicateOrDisabledDeliveryIsStillAccepted(t *testing.T) {
	e := newEnv(t, Options{Events: []string{"issue_comment"}})
	h, _ := NewHandler(e.q, Options{Secret: secret, Log: e.log})
	for _, tc := range []struct {
		req     *http.Request
		dropped string
	}{
		{post(commentBody, nil), ""},
		{post(commentBody, nil), channels.DropDuplicateDelivery},
		{post(commentBody, func(r *http.Request) { r.Header.Set(HeaderEvent, "ping") }), channels.DropDisabledEvent},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, tc.req)
		var resp response
		json.Unmarshal(w.Body.Bytes(), &resp)
		if w.Code != http.StatusAccepted || resp.Dropped != tc.dropped {
			t.Errorf("got %d %s, want 202 dropping %q", w.Code, w.Body, tc.dropped)
		}
	}
}

// counter counts the bytes read from an endless body.
type counter struct{ n int64 }

func (c *counter) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	c.n += int64(len(p))
	return len(p), nil
}

func TestAnOversizeBodyIsRefusedWithoutReadingItAll(t *testing.T) {
	e := newEnv(t, Options{})
	h, _ := NewHandler(e.q, Options{Secret: secret, Log: e.log})

	declared := &counter{}
	r := post("", nil)
	r.Body, r.ContentLength = io.NopCloser(declared), MaxBody+1
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusRequestEntityTooLarge || declared.n != 0 {
		t.Fatalf("declared oversize: got %d after reading %d bytes, want 413 after none", w.Code, declared.n)
	}

	chunked := &counter{}
	r = post("", nil)
	r.Body, r.ContentLength = io.NopCloser(chunked), -1
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusRequestEntityTooLarge || chunked.n > MaxBody+1<<20 {
		t.Fatalf("undeclared oversize: got %d after reading %d bytes, want 413 after about %d", w.Code, chunked.n, MaxBody)
	}
}

func TestWithoutASecretTheHandlerIsRefusedUnlessInsecure(t *testing.T) {
	e := newEnv(t, Options{})
	if _, err := NewHandler(e.q, Options{}); !errors.Is(err, ErrNoSecret) {
		t.Fatalf("got %v, want ErrNoSecret", err)
	}
	h, err := NewHandler(e.q, Options{Insecure: true, Log: e.log})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, post(commentBody, func(r *http.Request) { r.Header.Del(HeaderSignature256) }))
	if w.Code != http.StatusAccepted {
		t.Fatalf("insecure: got %d %s, want 202", w.Code, w.Body)
	}
}

func TestTheWebhookPathMustBeAnAbsolutePathOfItsOwn(t *testing.T) {
	e := newEnv(t, Options{})
	for _, p := range []string{"gh-webhook", "/healthz"} {
		if _, err := NewHandler(e.q, Options{Secret: secret, Path: p}); err == nil {
			t.Errorf("path %q: got no error", p)
		}
	}
}

// Nobody has to prove anything to send a body: one that cannot be signed
// is refused before it is read, and only so many are read at once.
func TestAnUnsignedBodyIsNotReadAndReadingIsBounded(t *testing.T) {
	e := newEnv(t, Options{})
	hh, _ := NewHandler(e.q, Options{Secret: secret, Log: e.log, Limits: Limits{SlotWait: 100 * time.Millisecond}})
	h := hh.(*handler)

	unsigned := &counter{}
	r := post("", func(r *http.Request) { r.Header.Del(HeaderSignature256) })
	r.Body, r.ContentLength = io.NopCloser(unsigned), 1<<20
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusUnauthorized || unsigned.n != 0 {
		t.Errorf("unsigned: %d after reading %d bytes, want 401 after none", w.Code, unsigned.n)
	}

	// Slots held by reads that are done (verifying, committing): nothing
	// to cut.
	var held []*bodySlot
	for range DefaultMaxReading {
		held = append(held, h.bodies.hold("192.0.2.1", time.Now(), true))
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, post(commentBody, nil))
	if w.Code != http.StatusServiceUnavailable {
		t.Errorf("with every reading slot taken: %d, want 503", w.Code)
	}
	for _, s := range held {
		h.bodies.release(s)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, post(commentBody, nil))
	if w.Code != http.StatusAccepted {
		t.Errorf("with the slots free again: %d, want 202", w.Code)
	}
}

func TestRefusalsReachTheLogsAtABoundedRateSayingHowManyDidNot(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	s := NewSampler(3)
	s.now = func() time.Time { return now }
	var logged, unsaid int
	for range 100 {
		if n, ok := s.Allow(); ok {
			logged, unsaid = logged+1, unsaid+n
		}
	}
	if logged != 3 || unsaid != 0 {
		t.Fatalf("in one second: %d logged, want 3", logged)
	}
	now = now.Add(time.Second)
	if n, ok := s.Allow(); !ok || n != 97 {
		t.Errorf("the next second: %d, %v; want the 97 unsaid", n, ok)
	}
}
