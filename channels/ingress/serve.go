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
	"sync/atomic"
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
	lim := opts.Limits
	var shed atomic.Int64
	conns := newConnTable(ln, lim.MaxConns, func(string) { shed.Add(1) })
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: lim.HeaderTimeout,
		// What a handler does not read of a body is not waited for past
		// this (the body reader's own deadlines are shorter).
		ReadTimeout:  lim.HeaderTimeout + lim.BodyTimeout,
		WriteTimeout: lim.HeaderTimeout + lim.BodyTimeout + 30*time.Second,
		// An idle connection is a descriptor an unknown caller holds.
		IdleTimeout:    lim.IdleTimeout,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn),
		ConnState:      conns.connState,
		ConnContext:    connContext,
	}
	runCtx, stopRun := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRun()
	ran := make(chan error, 1)
	go func() { ran <- q.Run(runCtx, p) }()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(conns) }()
	stopReport := reportShed(&shed, opts)
	defer stopReport()

	host, port := splitAddr(ln.Addr())
	emit(opts, "server.started", map[string]any{"host": host, "port": port, "path": opts.Path, "queued": q.Len()})
	opts.Logger.Info("listening", "addr", ln.Addr().String(), "path", opts.Path, "queued", q.Len())

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
	case <-q.Faulted():
		serveErr = ErrFaulted
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

// shedReport is how often the connections closed to make room are
// counted in the log, when there were any.
const shedReport = 10 * time.Second

// reportShed logs, every shedReport, how many connections were closed to
// make room since the last report: a sign of a caller holding many.
func reportShed(shed *atomic.Int64, opts Options) (stop func()) {
	t := time.NewTicker(shedReport)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if n := shed.Swap(0); n > 0 {
					opts.Logger.Warn("connections closed to make room for others: a caller may be holding many", "count", n, "max_conns", opts.Limits.MaxConns)
				}
			}
		}
	}()
	return func() { t.Stop(); close(done) }
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
