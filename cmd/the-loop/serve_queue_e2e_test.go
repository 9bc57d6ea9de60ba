package main

import (
	"encoding/binary"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/ingress"
)

// writeDamagedQueue writes a queue file of enough deliveries that its
// queue is a tree, then points a branch page's first child past the end
// of the file (every branch page's): bbolt opens it, and used to fault on the first
// delivery.
func writeDamagedQueue(t *testing.T, path string) {
	t.Helper()
	q, err := ingress.OpenQueue(path, ingress.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		body := []byte(`{"action":"created","pad":"` + strings.Repeat("x", 200) + `"}`)
		if _, err := q.Accept(channels.Delivery{ID: fmt.Sprintf("old-%d", i), Event: "issue_comment", Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Every branch page, so that the one in use is among them (the file
	// also holds freed pages from earlier transactions).
	ps, found := os.Getpagesize(), false
	for off := 2 * ps; off+ps <= len(data); off += ps {
		if binary.NativeEndian.Uint16(data[off+8:]) == 0x01 && binary.NativeEndian.Uint64(data[off:]) == uint64(off/ps) {
			binary.NativeEndian.PutUint64(data[off+16+8:], uint64(len(data)/ps+1000))
			found = true
		}
	}
	if !found {
		t.Fatal("the queue file has no branch page")
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A queue file whose branch page points past its end: serve moves it
// aside, says so loudly, and takes deliveries; a kill -9 and a restart
// find a sound file and keep it.
func TestServeMovesADamagedQueueAsideAndKeepsTakingDeliveries(t *testing.T) {
	p := newServeProc(t)
	if err := os.MkdirAll(p.state+"/serve", 0o700); err != nil {
		t.Fatal(err)
	}
	writeDamagedQueue(t, p.queuePath())
	p.start()
	if code, err := deliverSigned("127.0.0.1", p.base(), "after-damage"); code != http.StatusAccepted {
		t.Fatalf("the first delivery: %d %v, want 202\n%s", code, err, p.stderr.String())
	}
	mustContain(t, "serve's stderr", p.stderr.String(), "level=ERROR", "THE QUEUE FILE IS DAMAGED", "past the file's")
	moved := p.corruptCopies()
	if len(moved) != 1 {
		t.Fatalf("damaged copies %v, want one", moved)
	}
	if missing := p.received([]string{"after-damage"}); len(missing) > 0 {
		t.Errorf("not received: %v", missing)
	}
	log, _ := os.ReadFile(p.eventLog())
	mustContain(t, "the event log", string(log), `"server.queue_quarantined"`, moved[0])

	p.kill9()
	p.start()
	if code, err := deliverSigned("127.0.0.1", p.base(), "after-restart"); code != http.StatusAccepted {
		t.Fatalf("after a kill -9 and a restart: %d %v, want 202\n%s", code, err, p.stderr.String())
	}
	if got := p.corruptCopies(); len(got) != 1 {
		t.Errorf("after the restart, damaged copies %v: the sound new queue was moved aside", got)
	}
	if code := p.stop(); code != 0 {
		t.Errorf("serve exited %d\n%s", code, p.stderr.String())
	}
}

// A queue file cut short while serve runs faults under bbolt's map: the
// delivery that meets it is answered 5xx, never 202, serve stops with the
// reason instead of dying of SIGSEGV or SIGBUS, and the next start moves
// the file aside and takes deliveries again.
func TestAQueueFileCutWhileServeRunsIsAnsweredWith5xxAndServeStops(t *testing.T) {
	p := newServeProc(t)
	p.start()
	var ids []string
	for i := range 200 {
		id := fmt.Sprintf("before-%d", i)
		ids = append(ids, id)
		if code, err := deliverSigned("127.0.0.1", p.base(), id); code != http.StatusAccepted {
			t.Fatalf("%s: %d %v", id, code, err)
		}
	}
	// Processed, so that no worker reads the file: the next to is the
	// delivery's own write.
	if missing := p.logged("routing.dropped", ids); len(missing) > 0 {
		t.Fatalf("not processed: %v", missing)
	}
	if err := os.Truncate(p.queuePath(), int64(2*os.Getpagesize())); err != nil {
		t.Fatal(err)
	}
	// Deliveries until one meets the fault: one may be answered before,
	// from pages the kernel still holds.
	var code int
	var err error
	for i := 0; i < 50; i++ {
		code, err = deliverSigned("127.0.0.1", p.base(), fmt.Sprintf("after-%d", i))
		if code != http.StatusAccepted {
			break
		}
	}
	t.Logf("a delivery after the file was cut: %d %v", code, err)
	// No answer is right only when serve had stopped already: a write of
	// its own (an outbox flush) met the fault first.
	if code < 500 && (code != 0 || !strings.Contains(p.stderr.String(), "THE QUEUE FILE FAULTED")) {
		t.Errorf("a delivery after the file was cut: %d %v, want 5xx", code, err)
	}
	exit := p.wait()
	if exit == 0 || exit == -1 || p.cmd.ProcessState.Sys().(interface{ Signaled() bool }).Signaled() {
		t.Errorf("serve exited %d (%v); want an exit of its own, not 0 and not a signal\n%s", exit, p.cmd.ProcessState, p.stderr.String())
	}
	mustContain(t, "serve's stderr", p.stderr.String(), "THE QUEUE FILE FAULTED")
	if strings.Contains(p.stderr.String(), "SIGSEGV") || strings.Contains(p.stderr.String(), "SIGBUS") {
		t.Errorf("serve died of a signal:\n%s", p.stderr.String())
	}

	p.start()
	if got := p.corruptCopies(); len(got) != 1 {
		t.Errorf("damaged copies %v after the restart, want the cut file", got)
	}
	if code, err := deliverSigned("127.0.0.1", p.base(), "after-restart"); code != http.StatusAccepted {
		t.Errorf("after the restart: %d %v, want 202\n%s", code, err, p.stderr.String())
	}
	if code := p.stop(); code != 0 {
		t.Errorf("serve exited %d\n%s", code, p.stderr.String())
	}
}
