package slack

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Slack's headers on a signed request.
const (
	HeaderTimestamp = "X-Slack-Request-Timestamp"
	HeaderSignature = "X-Slack-Signature"
	// HeaderRetryNum is set on Slack's retries of an event it thinks went
	// unanswered; the retry keeps the event_id.
	HeaderRetryNum = "X-Slack-Retry-Num"
)

// ReplayWindow is how far a request's timestamp may be from the clock, in
// either direction: a captured request replayed later is refused, and one
// from a clock far ahead cannot be held back and replayed then.
const ReplayWindow = 5 * time.Minute

// ErrUnverified is wrapped by every error Verify returns; the message says
// which check failed.
var ErrUnverified = errors.New("slack request not verified")

// Sign is the X-Slack-Signature Slack sends with body at timestamp under
// secret: v0= and the hex HMAC-SHA256 of "v0:<timestamp>:<body>".
func Sign(secret []byte, timestamp string, body []byte) string {
	return "v0=" + hex.EncodeToString(mac(secret, timestamp, body))
}

func mac(secret []byte, timestamp string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("v0:"))
	m.Write([]byte(timestamp))
	m.Write([]byte(":"))
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks a request Slack signed: X-Slack-Request-Timestamp is
// decimal Unix seconds within ReplayWindow of now, and X-Slack-Signature
// is the v0 signature of body at that timestamp under secret, compared in
// constant time. body must be the bytes as received. An error wraps
// ErrUnverified and names the check that failed; it never carries the
// secret.
func Verify(secret []byte, hdr http.Header, body []byte, now time.Time) error {
	ts, sig, err := signedHeaders(hdr, now)
	if err != nil {
		return err
	}
	if len(secret) == 0 {
		return fmt.Errorf("%w: no signing secret to check it with", ErrUnverified)
	}
	if !hmac.Equal(sig, mac(secret, ts, body)) {
		return fmt.Errorf("%w: %s does not match the body under the signing secret", ErrUnverified, HeaderSignature)
	}
	return nil
}

// signedHeaders reads what can be checked before the body is: the
// timestamp, within the window, and the signature's bytes.
func signedHeaders(hdr http.Header, now time.Time) (string, []byte, error) {
	ts := hdr.Get(HeaderTimestamp)
	if ts == "" {
		return "", nil, fmt.Errorf("%w: missing %s", ErrUnverified, HeaderTimestamp)
	}
	secs, ok := unixSeconds(ts)
	if !ok {
		return "", nil, fmt.Errorf("%w: malformed %s %q; want decimal Unix seconds", ErrUnverified, HeaderTimestamp, clip(ts))
	}
	if skew := now.Sub(time.Unix(secs, 0)); skew > ReplayWindow || skew < -ReplayWindow {
		when := "in the past"
		if skew < 0 {
			when, skew = "in the future", -skew
		}
		return "", nil, fmt.Errorf("%w: %s is %s %s, want within %s of now (a replayed request, or a clock off)",
			ErrUnverified, HeaderTimestamp, skew.Truncate(time.Second), when, ReplayWindow)
	}
	raw := hdr.Get(HeaderSignature)
	if raw == "" {
		return "", nil, fmt.Errorf("%w: missing %s", ErrUnverified, HeaderSignature)
	}
	hexSum, ok := strings.CutPrefix(raw, "v0=")
	sig, err := hex.DecodeString(hexSum)
	if !ok || err != nil || len(sig) != sha256.Size {
		return "", nil, fmt.Errorf("%w: malformed %s; want v0=<64 hex digits>", ErrUnverified, HeaderSignature)
	}
	return ts, sig, nil
}

// unixSeconds reads a timestamp as Slack writes it: digits only, no sign,
// few enough that the time cannot overflow.
func unixSeconds(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 12 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
