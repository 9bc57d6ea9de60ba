package ingress

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// BodyReader reads the bodies of the requests an endpoint of serve takes,
// under the bounds every endpoint shares: each body may be read into
// memory before its signature can be checked, and nobody has to prove
// anything to send one. So at most maxReading are read at once (a request
// waits up to slotWait for a slot), each must arrive within
// bodyReadTimeout, and none may be over its endpoint's limit. It is safe
// for concurrent use.
type BodyReader struct {
	slots chan struct{}
	max   int64
}

// NewBodyReader reads bodies of at most max bytes.
func NewBodyReader(max int64) *BodyReader {
	return &BodyReader{slots: make(chan struct{}, maxReading), max: max}
}

// BodyError is a body that was not read: the status to answer with, the
// reason a rejected event gives (RejectUnavailable, RejectTooLarge,
// RejectInvalidPayload) and what to tell the caller.
type BodyError struct {
	Status int
	Reason string
	Msg    string
}

// Read reads r's body. On success the caller holds a read slot until it
// calls release.
func (b *BodyReader) Read(w http.ResponseWriter, r *http.Request) (body []byte, release func(), _ *BodyError) {
	wait := time.NewTimer(slotWait)
	select {
	case b.slots <- struct{}{}:
		wait.Stop()
	case <-wait.C:
		return nil, nil, &BodyError{http.StatusServiceUnavailable, RejectUnavailable, "too many requests being read at once; try again"}
	}
	release = func() { <-b.slots }
	// A slot is held only as long as a body takes to arrive at a pace
	// GitHub's and Slack's keep easily: a caller trickling one cannot hold
	// them all.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyReadTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, b.max))
	if err != nil {
		release()
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			return nil, nil, &BodyError{http.StatusRequestEntityTooLarge, RejectTooLarge, fmt.Sprintf("body over %d bytes", b.max)}
		}
		return nil, nil, &BodyError{http.StatusBadRequest, RejectInvalidPayload, "the body could not be read"}
	}
	return body, release, nil
}
