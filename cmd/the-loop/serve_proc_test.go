package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/the-loop/the-loop/channels/ingress"
)

// serveProc is `the-loop serve` as its own process: the real binary, with
// its own descriptors and its own faults.
type serveProc struct {
	t      *testing.T
	home   string
	state  string
	cfg    string
	port   int
	cmd    *exec.Cmd
	stderr *lockedBuffer
	exited chan error
}

const procSecret = "s3cret"

// newServeProc writes a config whose state root is under a new home, with
// no work item bound: a delivery is answered 202 and dropped no-work-item.
func newServeProc(t *testing.T) *serveProc {
	t.Helper()
	home := t.TempDir()
	p := &serveProc{t: t, home: home, state: filepath.Join(home, "state"), cfg: filepath.Join(home, "cli.yaml"), port: freePort(t)}
	cfg := fmt.Sprintf("state:\n  root: %s\nrouting:\n  authorizedUsers: [alice]\nwebhooks:\n  ghWebhook:\n    port: %d\n", p.state, p.port)
	if err := os.WriteFile(p.cfg, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *serveProc) queuePath() string { return filepath.Join(p.state, ingress.QueueFile) }
func (p *serveProc) eventLog() string  { return filepath.Join(p.state, "logs", "events.jsonl") }
func (p *serveProc) base() string      { return fmt.Sprintf("http://127.0.0.1:%d", p.port) }

// start runs the binary and waits for its health probe.
func (p *serveProc) start() {
	p.t.Helper()
	bin, err := attackBinary()
	if err != nil {
		p.t.Skip("cannot build the-loop:", err)
	}
	p.stderr = &lockedBuffer{}
	p.cmd = exec.Command(bin, "serve", "--config", p.cfg)
	p.cmd.Env = append(os.Environ(), "HOME="+p.home, "THE_LOOP_CLI_CONFIG=", "THE_LOOP_GH_WEBHOOK_SECRET="+procSecret, "GOMAXPROCS=2")
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.exited = make(chan error, 1)
	go func() { p.exited <- p.cmd.Wait() }()
	p.t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			<-p.exited
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(p.base() + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case err := <-p.exited:
			p.t.Fatalf("serve exited before it listened: %v\n%s", err, p.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("serve did not come up: %v\n%s", err, p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop sends SIGTERM and returns the exit code.
func (p *serveProc) stop() int {
	p.t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	return p.wait()
}

// wait waits for the process to end by itself, within a minute.
func (p *serveProc) wait() int {
	p.t.Helper()
	select {
	case <-p.exited:
	case <-time.After(time.Minute):
		p.cmd.Process.Kill()
		<-p.exited
		p.t.Fatalf("serve did not stop\n%s", p.stderr.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

func (p *serveProc) kill9() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// comment is an issue comment on acme/shop#id.
func comment(id string) []byte {
	return []byte(fmt.Sprintf(`{"action":"created","repository":{"full_name":"acme/shop"},"issue":{"number":77},"comment":{"id":1,"user":{"login":"alice","type":"User"},"body":"hello %s"},"sender":{"login":"alice"}}`, id))
}

// deliverSigned posts a signed delivery from the loopback address from, on a
// connection of its own, as GitHub would, waiting at most GitHub's 10 s;
// it returns the status, or 0 with the error when there was no answer.
func deliverSigned(from, url, id string) (int, error) {
	body := comment(id)
	req, _ := http.NewRequest(http.MethodPost, url+"/gh-webhook", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(ingress.HeaderEvent, "issue_comment")
	req.Header.Set(ingress.HeaderDelivery, id)
	req.Header.Set(ingress.HeaderSignature256, ingress.Sign([]byte(procSecret), body))
	req.Header.Set("User-Agent", "GitHub-Hookshot/e2e")
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	client := http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// received waits until the event log holds a webhook.received for each id,
// and returns those missing after 30 s.
func (p *serveProc) received(ids []string) []string { return p.logged("webhook.received", ids) }

// logged waits until the event log holds event for each id, and returns
// those missing after 30 s.
func (p *serveProc) logged(event string, ids []string) []string {
	deadline := time.Now().Add(30 * time.Second)
	for {
		seen := map[string]bool{}
		if data, err := os.ReadFile(p.eventLog()); err == nil {
			sc := bufio.NewScanner(bytes.NewReader(data))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var rec struct {
					Event      string `json:"event"`
					DeliveryID string `json:"delivery_id"`
				}
				if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Event == event {
					seen[rec.DeliveryID] = true
				}
			}
		}
		var missing []string
		for _, id := range ids {
			if !seen[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			return missing
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (p *serveProc) corruptCopies() []string {
	m, _ := filepath.Glob(p.queuePath() + ".corrupt-*")
	return m
}

func mustContain(t *testing.T, what, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s does not say %q:\n%s", what, w, got)
		}
	}
}
