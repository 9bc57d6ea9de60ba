package ingress

import "time"

// Defaults of Limits. Nobody has to prove anything to open a connection
// or send a body; GitHub waits 10 s for an answer and sends each delivery
// at once, headers and body together. So what an unknown caller may hold
// is small, anyone slow is cut early, and when the server is full the
// caller holding the most gives way to a newcomer.
const (
	// DefaultMaxConns bounds the connections open at once.
	DefaultMaxConns = 512
	// DefaultMaxReading bounds the bodies read at once, as a number of
	// bodies of an endpoint's largest size: each takes up to its claim
	// (its Content-Length) of memory before its signature can be checked.
	DefaultMaxReading = 8
	// DefaultHeaderTimeout bounds how long a request's headers may take
	// to arrive.
	DefaultHeaderTimeout = 5 * time.Second
	// DefaultBodyTimeout bounds how long a body may take to arrive, and
	// DefaultMinBodyRate is the pace it must keep after its first
	// DefaultBodyGrace: 25 MiB in 10 s is GitHub's largest payload at 2.5
	// MiB/s; a payload of a few KiB arrives in one packet.
	DefaultBodyTimeout = 10 * time.Second
	DefaultBodyGrace   = time.Second
	DefaultMinBodyRate = 64 << 10 // bytes per second
	// DefaultSlotWait is how long a request waits for a body slot before
	// it is answered 503.
	DefaultSlotWait = 2 * time.Second
	// DefaultIdleTimeout bounds how long a connection may wait between
	// requests.
	DefaultIdleTimeout = 30 * time.Second
	// readsPerBody: the reads at once may be this many times MaxReading,
	// when their claims are small.
	readsPerBody = 8
	// slowRead is how long a body read may hold its slot before a
	// newcomer may take it even from an address that holds no more than
	// the newcomer's own: a payload that is sent at once is read well
	// within it.
	slowRead = 500 * time.Millisecond
)

// Limits bound what callers may hold of a server. Each zero field takes
// its default.
//
// When the connections or the room for bodies are all taken, a newcomer
// takes what it needs from the remote address that holds the most: the
// oldest of its connections still sending its headers, idle between
// requests or waiting for room (see connTable), or its reads claiming the
// most (any address's, once a read is slower than a payload sent at once:
// see BodyReader). So one address cannot crowd out others, and behind a
// reverse proxy, where every request comes from one address, the slow give
// way to the quick. Nothing is taken from anyone while there is room.
type Limits struct {
	MaxConns      int
	MaxReading    int
	HeaderTimeout time.Duration
	BodyTimeout   time.Duration
	BodyGrace     time.Duration
	// MinBodyRate is in bytes per second.
	MinBodyRate int64
	SlotWait    time.Duration
	IdleTimeout time.Duration
}

// Departure from the original (docs/compatibility.md#ingress-what-one-caller-may-hold-and-a-damaged-queue-file): what one unknown caller may hold is bounded.
func (l Limits) withDefaults() Limits {
	set := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	setD := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	set(&l.MaxConns, DefaultMaxConns)
	set(&l.MaxReading, DefaultMaxReading)
	setD(&l.HeaderTimeout, DefaultHeaderTimeout)
	setD(&l.BodyTimeout, DefaultBodyTimeout)
	setD(&l.BodyGrace, DefaultBodyGrace)
	setD(&l.SlotWait, DefaultSlotWait)
	setD(&l.IdleTimeout, DefaultIdleTimeout)
	if l.MinBodyRate <= 0 {
		l.MinBodyRate = DefaultMinBodyRate
	}
	return l
}
