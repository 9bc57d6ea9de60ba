package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/the-loop/the-loop/channels/ingress"
)

// lockedBuffer is a bytes.Buffer a running serve and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func TestServeAcceptsASignedDeliveryAndStopsOnSIGTERM(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("THE_LOOP_CLI_CONFIG", "")
	t.Setenv("THE_LOOP_GH_WEBHOOK_SECRET", "s3cret")
	port := freePort(t)
	var stdout, stderr lockedBuffer
	code := make(chan int, 1)
	go func() { code <- run([]string{"serve", "--port", fmt.Sprint(port)}, &stdout, &stderr) }()

	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitUp(t, base, &stderr)
	body := []byte(`{"action":"created","repository":{"full_name":"acme/shop"},"issue":{"number":3}}`)
	req, _ := http.NewRequest(http.MethodPost, base+"/gh-webhook", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(ingress.HeaderEvent, "issue_comment")
	req.Header.Set(ingress.HeaderDelivery, "d-1")
	req.Header.Set(ingress.HeaderSignature256, ingress.Sign([]byte("s3cret"), body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("got %d, want 202", resp.StatusCode)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-code:
		if c != 0 {
			t.Fatalf("exit %d, want 0\n%s", c, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
	log, err := os.ReadFile(filepath.Join(home, ".the-loop", "logs", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"event":"server.started"`, `"event":"webhook.received"`, `"event":"routing.dropped"`, `"event":"server.stopped"`} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the event log lacks %s:\n%s", want, log)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".the-loop", "serve", "queue.db")); err != nil {
		t.Errorf("no queue in the state root: %v", err)
	}
	if !strings.Contains(stderr.String(), "listening") {
		t.Errorf("stderr does not say where it listens:\n%s", stderr.String())
	}
}
