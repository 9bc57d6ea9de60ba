//go:build unix

// Command loadwebhook puts the webhook ingress (the-loop serve's transport)
// under load on loopback and checks what it did: by default 5,000 signed
// issue_comment deliveries for 50 work items from 8 goroutines, 10% of them
// resending an id already answered. Every unique delivery must be processed,
// have exactly one outcome event, and be processed in its item's order. It
// prints p50/p99 of the time to the 202 and to processed.
//
//	go run ./tools/loadwebhook            # the run
//	go run ./tools/loadwebhook -kill      # the same, kill -9 of the server mid-way and a restart
//
// The server is this program itself, started again as a child process
// running the ingress with a processor that records each delivery to a file
// (fsync'd); with -kill it is killed with SIGKILL after half the deliveries
// were answered, and started again on the same port and the same queue
// file. A delivery being processed at the kill is processed again after the
// restart (its side effects are at-least-once); the count is reported.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/the-loop/the-loop/channels/ingress/loadgen"
)

func main() {
	if loadgen.IsChild() {
		os.Exit(loadgen.ChildMain())
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("loadwebhook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg loadgen.Config
	fs.IntVar(&cfg.Deliveries, "n", 5000, "requests to send, duplicates included")
	fs.IntVar(&cfg.Items, "items", 50, "work items the deliveries are spread over")
	fs.IntVar(&cfg.Senders, "senders", 8, "goroutines sending")
	fs.Float64Var(&cfg.Duplicates, "dup", 0.1, "share of requests resending an id already answered (negative: none)")
	seed := fs.Uint64("seed", 1, "seed of the ids and the interleaving")
	kill := fs.Bool("kill", false, "kill -9 the server after half the deliveries were answered, and restart it")
	fsync := fs.Bool("fsync", true, "the recording processor fsyncs each line")
	delay := fs.Duration("delay", 0, "time each Process call takes")
	workers := fs.Int("workers", 0, "deliveries processed at once (0: the ingress default)")
	keep := fs.Bool("keep", false, "keep the server's directory and print where it is")
	timeout := fs.Duration("timeout", 3*time.Minute, "bound on the whole run")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg.Seed, cfg.Timeout = *seed, *timeout
	cfg.Secret = []byte("loadwebhook-secret")
	if *kill {
		cfg.KillAfter = cfg.Deliveries / 2
	}
	dir, err := os.MkdirTemp("", "loadwebhook-")
	if err != nil {
		fmt.Fprintln(stderr, "loadwebhook:", err)
		return 2
	}
	if *keep {
		fmt.Fprintln(stdout, "server directory:", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "loadwebhook:", err)
		return 2
	}
	srv, err := loadgen.StartChild([]string{self}, loadgen.ServerConfig{Dir: dir, Secret: cfg.Secret, Fsync: *fsync, Delay: *delay, Workers: *workers})
	if err != nil {
		fmt.Fprintln(stderr, "loadwebhook:", err)
		return 2
	}
	rep, err := loadgen.Run(context.Background(), cfg, srv, dir)
	stopErr := srv.Stop()
	if err != nil {
		fmt.Fprintln(stderr, "loadwebhook:", err)
		return 2
	}
	fmt.Fprint(stdout, rep)
	if stopErr != nil {
		fmt.Fprintln(stderr, "loadwebhook: the server did not stop cleanly:", stopErr)
		return 1
	}
	if len(rep.Problems) > 0 {
		return 1
	}
	return 0
}
