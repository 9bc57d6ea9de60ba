package loadgen

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/ingress"
	"github.com/the-loop/the-loop/eventlog"
)

// Files a load server writes in its directory.
const (
	// ProcessedFile has one line per Process call: id, item, n, and the
	// time in Unix nanoseconds, tab-separated.
	ProcessedFile = "processed.log"
	// EventsFile is the server's event log.
	EventsFile = "events.jsonl"
	// QueueFile is the server's queue.
	QueueFile = "queue.db"
)

// ServerConfig is how a load server runs.
type ServerConfig struct {
	// Dir holds its files.
	Dir    string
	Secret []byte
	// Fsync makes each processed line durable before Process returns.
	Fsync bool
	// Delay is how long each Process call takes, at least.
	Delay   time.Duration
	Workers int
}

// recorder is the load server's Processor: it appends what it processes
// to ProcessedFile and routes everything.
type recorder struct {
	f     *os.File
	fsync bool
	delay time.Duration
}

func (r *recorder) Process(ctx context.Context, d channels.Delivery) (channels.Outcome, error) {
	var p payload
	if err := json.Unmarshal(d.Body, &p); err != nil {
		return channels.Outcome{}, err
	}
	if r.delay > 0 {
		time.Sleep(r.delay)
	}
	// One write on an O_APPEND descriptor: lines never interleave.
	line := fmt.Sprintf("%s\t%s\t%d\t%d\n", d.ID, d.Item, p.Load.N, time.Now().UnixNano())
	if _, err := r.f.WriteString(line); err != nil {
		return channels.Outcome{}, err
	}
	if r.fsync {
		if err := r.f.Sync(); err != nil {
			return channels.Outcome{}, err
		}
	}
	return channels.Outcome{Routed: true, Fields: map[string]any{"n": p.Load.N}}, nil
}

// serve runs a load server on ln until ctx is done.
func serve(ctx context.Context, ln net.Listener, cfg ServerConfig, logger *slog.Logger) error {
	f, err := os.OpenFile(filepath.Join(cfg.Dir, ProcessedFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	rec := &recorder{f: f, fsync: cfg.Fsync, delay: cfg.Delay}
	return ingress.Serve(ctx, ln, filepath.Join(cfg.Dir, QueueFile), rec, ingress.Options{
		Secret:  cfg.Secret,
		Events:  []string{"issue_comment"},
		Workers: cfg.Workers,
		Log:     eventlog.OpenFile(filepath.Join(cfg.Dir, EventsFile), "serve"),
		Logger:  logger,
	})
}

// InProcess is a load server in this process.
type InProcess struct {
	url    string
	cancel context.CancelFunc
	done   chan error
}

// StartInProcess starts a load server in this process on a loopback port.
func StartInProcess(cfg ServerConfig) (*InProcess, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &InProcess{url: "http://" + ln.Addr().String() + ingress.DefaultPath, cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- serve(ctx, ln, cfg, slog.New(slog.DiscardHandler)) }()
	return s, nil
}

// URL is where deliveries go.
func (s *InProcess) URL() string { return s.url }

// Stop shuts the server down gracefully.
func (s *InProcess) Stop() error {
	s.cancel()
	return <-s.done
}

// The environment a child load server reads.
const (
	envChild   = "THE_LOOP_LOADGEN_CHILD" // the server's directory
	envAddr    = "THE_LOOP_LOADGEN_ADDR"
	envSecret  = "THE_LOOP_LOADGEN_SECRET" // hex
	envFsync   = "THE_LOOP_LOADGEN_FSYNC"
	envDelay   = "THE_LOOP_LOADGEN_DELAY"
	envWorkers = "THE_LOOP_LOADGEN_WORKERS"
)

// listeningPrefix starts the line a child prints once it listens.
const listeningPrefix = "listening "

// IsChild reports whether this process was started by StartChild to be a
// load server.
func IsChild() bool { return os.Getenv(envChild) != "" }

// ChildMain is a child load server's whole life: it listens where the
// environment says, prints the address, and serves until SIGTERM or
// SIGINT. It returns the process's exit code. Call it first thing in main
// (or TestMain) when IsChild.
func ChildMain() int {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	secret, err := hex.DecodeString(os.Getenv(envSecret))
	if err != nil {
		logger.Error("bad secret", "err", err)
		return 2
	}
	delay, _ := time.ParseDuration(os.Getenv(envDelay))
	workers, _ := strconv.Atoi(os.Getenv(envWorkers))
	cfg := ServerConfig{Dir: os.Getenv(envChild), Secret: secret, Fsync: os.Getenv(envFsync) != "", Delay: delay, Workers: workers}
	addr := os.Getenv(envAddr)
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		logger.Error("listen", "err", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	fmt.Printf("%s%s\n", listeningPrefix, ln.Addr())
	if err := serve(ctx, ln, cfg, logger); err != nil {
		logger.Error("serve", "err", err)
		return 1
	}
	return 0
}

// Child is a load server in a child process: the same executable, started
// with the environment IsChild looks for.
type Child struct {
	argv []string
	cfg  ServerConfig
	addr string
	cmd  *exec.Cmd
	mu   sync.Mutex
}

// StartChild starts argv (os.Args[0] and whatever arguments make it call
// ChildMain) as a load server and waits until it listens.
func StartChild(argv []string, cfg ServerConfig) (*Child, error) {
	c := &Child{argv: argv, cfg: cfg}
	return c, c.start()
}

func (c *Child) start() error {
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	cmd.Env = append(os.Environ(),
		envChild+"="+c.cfg.Dir,
		envAddr+"="+c.addr,
		envSecret+"="+hex.EncodeToString(c.cfg.Secret),
		envDelay+"="+c.cfg.Delay.String(),
		envWorkers+"="+strconv.Itoa(c.cfg.Workers),
	)
	if c.cfg.Fsync {
		cmd.Env = append(cmd.Env, envFsync+"=1")
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	got := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		addr := ""
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), listeningPrefix); ok {
				addr = a
				break
			}
		}
		got <- addr
		io.Copy(io.Discard, out)
	}()
	select {
	case a := <-got:
		if a == "" {
			cmd.Wait()
			return errors.New("the load server exited before it listened")
		}
		c.mu.Lock()
		c.addr, c.cmd = a, cmd
		c.mu.Unlock()
		return nil
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		return errors.New("the load server did not start listening")
	}
}

// URL is where deliveries go.
func (c *Child) URL() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return "http://" + c.addr + ingress.DefaultPath
}

// Pid is the running server's process id.
func (c *Child) Pid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cmd.Process.Pid
}

// Kill sends SIGKILL and reaps the process.
func (c *Child) Kill() error {
	c.mu.Lock()
	cmd := c.cmd
	c.mu.Unlock()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	cmd.Wait()
	return nil
}

// Restart starts the server again on the same address.
func (c *Child) Restart() error {
	var err error
	for range 50 {
		if err = c.start(); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// Stop sends SIGTERM and waits for a clean exit.
func (c *Child) Stop() error {
	c.mu.Lock()
	cmd := c.cmd
	c.mu.Unlock()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("load server pid %s: %w", strconv.Itoa(cmd.Process.Pid), err)
	}
	return nil
}
