package ingress

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/the-loop/the-loop/channels"
)

// QueueFile is the queue's file under the operator's state root.
var QueueFile = filepath.Join("serve", "queue.db")

// shutdownTimeout bounds how long a shutdown waits for the requests being
// answered: each is a read, a signature and a commit.
const shutdownTimeout = 10 * time.Second

// Serve runs the ingress on ln until ctx is done: it opens the queue file
// at dbPath, processes with p what a previous run left queued and whatever
// is accepted, and answers deliveries with NewHandler's handler.
//
// When ctx is done it stops accepting (the listener is closed and the
// requests being answered finish), lets the deliveries being processed
// finish (see Queue.Run), closes the queue file, and returns nil. What was
// queued and not started is processed on the next start. It logs
// server.started and server.stopped.
func Serve(ctx context.Context, ln net.Listener, dbPath string, p channels.Processor, opts Options) error {
	opts = opts.withDefaults()
	if len(opts.Secret) == 0 && !opts.Insecure {
		return ErrNoSecret
	}
	q, err := OpenQueue(dbPath, opts)
	if err != nil {
		return err
	}
	h, err := handlerWithRoutes(q, opts)
	if err != nil {
		q.Close()
		return err
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		// An idle connection is a descriptor an unknown caller holds.
		IdleTimeout:    30 * time.Second,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn),
	}
	runCtx, stopRun := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRun()
	ran := make(chan error, 1)
	go func() { ran <- q.Run(runCtx, p) }()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(limitListener(ln, maxConns)) }()

	host, port := splitAddr(ln.Addr())
	emit(opts, "server.started", map[string]any{"host": host, "port": port, "path": opts.Path, "queued": q.Len()})
	opts.Logger.Info("listening", "addr", ln.Addr().String(), "path", opts.Path, "queued", q.Len())

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		opts.Logger.Warn("requests still open at shutdown were cut", "err", err)
	}
	stopRun()
	<-ran
	left := q.Len()
	closeErr := q.Close()
	emit(opts, "server.stopped", map[string]any{"queued": left})
	opts.Logger.Info("stopped", "queued", left)
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return closeErr
}

func emit(opts Options, event string, fields map[string]any) {
	if err := opts.Log.Emit(event, "", fields); err != nil {
		opts.Logger.Error("cannot write the event log", "event", event, "err", err)
	}
}

func splitAddr(a net.Addr) (string, int) {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String(), 0
	}
	n, _ := strconv.Atoi(port)
	return host, n
}

// maxConns bounds the connections served at once: past it a connection
// waits in the kernel's backlog, and no caller can take the process's
// descriptors.
const maxConns = 512

// limitListener accepts at most n connections open at once.
func limitListener(ln net.Listener, n int) net.Listener {
	return &limited{Listener: ln, slots: make(chan struct{}, n)}
}

type limited struct {
	net.Listener
	slots chan struct{}
}

func (l *limited) Accept() (net.Conn, error) {
	l.slots <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &slotConn{Conn: c, release: func() { <-l.slots }}, nil
}

// slotConn gives its slot back when it is closed, once.
type slotConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// handlerWithRoutes is the webhook handler, and opts.Routes beside it.
func handlerWithRoutes(q *Queue, opts Options) (http.Handler, error) {
	h, err := NewHandler(q, opts)
	if err != nil || len(opts.Routes) == 0 {
		return h, err
	}
	mux := http.NewServeMux()
	for _, r := range opts.Routes {
		if !strings.HasPrefix(r.Path, "/") || trimSlash(r.Path) == trimSlash(opts.Path) || isHealth(r.Path) {
			return nil, fmt.Errorf("route %q: want an absolute URL path that is neither the webhook path %s nor the health probe", r.Path, opts.Path)
		}
		rh, err := r.Handler(q)
		if err != nil {
			return nil, fmt.Errorf("route %s: %w", r.Path, err)
		}
		mux.Handle(r.Path, rh)
	}
	mux.Handle("/", h)
	return mux, nil
}
