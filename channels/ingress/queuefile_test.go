package ingress

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/the-loop/the-loop/eventlog"
)

// queueWithData writes a queue file holding n deliveries, enough that its
// queue bucket is a tree with a branch page at its root, and returns its
// page size.
func queueWithData(t testing.TB, path string, n int) int {
	t.Helper()
	q, err := OpenQueue(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		d := delivery(fmt.Sprintf("d%04d", i), "issue_comment", "github:acme/shop#1")
		d.Body = []byte(`{"action":"created","pad":"` + strings.Repeat("x", 200) + `"}`)
		if _, err := q.Accept(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	return os.Getpagesize()
}

// pagesOf lists the file's pages of the kind given (bbolt's page flags):
// those in use and those freed, whose contents stay. A test damages them
// all, so that the ones in use are damaged.
func pagesOf(t *testing.T, data []byte, ps int, flags uint16) []int {
	t.Helper()
	var out []int
	for off := 2 * ps; off+ps <= len(data); off += ps {
		if binary.NativeEndian.Uint16(data[off+8:]) == flags && binary.NativeEndian.Uint64(data[off:]) == uint64(off/ps) {
			out = append(out, off/ps)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no page with flags %#x", flags)
	}
	return out
}

// rewrite applies edit to the file's bytes.
func rewrite(t *testing.T, path string, edit func(data []byte, ps int) []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, edit(data, os.Getpagesize()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// lockedBuf is a log sink safe for concurrent writes.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Each damage is one an operator's disk, a crash or a hand can leave. The
// queue must open (serve keeps answering GitHub), the damaged file must be
// kept beside it, the logs must say so, and the next delivery must be
// queued and processed.
func TestADamagedQueueFileIsMovedAsideAndServeStartsAfresh(t *testing.T) {
	cases := []struct {
		name   string
		damage func(t *testing.T, path string)
		// kept: what is moved aside is the damaged thing itself, checked
		// by this.
		kept func(t *testing.T, moved string)
	}{
		{name: "an empty file", damage: func(t *testing.T, path string) { os.WriteFile(path, nil, 0o600) }},
		{name: "a file of garbage", damage: func(t *testing.T, path string) {
			os.WriteFile(path, bytes.Repeat([]byte{0xA5}, 1<<16), 0o600)
		}},
		{name: "a truncated file", damage: func(t *testing.T, path string) {
			queueWithData(t, path, 300)
			rewrite(t, path, func(d []byte, ps int) []byte { return d[:len(d)/2/ps*ps] })
		}},
		{name: "a file cut inside its meta pages", damage: func(t *testing.T, path string) {
			queueWithData(t, path, 10)
			rewrite(t, path, func(d []byte, ps int) []byte { return d[:ps+100] })
		}},
		{name: "a branch page pointing past the end of the file", damage: func(t *testing.T, path string) {
			queueWithData(t, path, 300)
			rewrite(t, path, func(d []byte, ps int) []byte {
				for _, p := range pagesOf(t, d, ps, branchPage) {
					binary.NativeEndian.PutUint64(d[p*ps+16+8:], uint64(len(d)/ps+1000))
				}
				return d
			})
		}},
		{name: "a branch page pointing at itself", damage: func(t *testing.T, path string) {
			queueWithData(t, path, 300)
			rewrite(t, path, func(d []byte, ps int) []byte {
				for _, p := range pagesOf(t, d, ps, branchPage) {
					binary.NativeEndian.PutUint64(d[p*ps+16+8:], uint64(p))
				}
				return d
			})
		}},
		{name: "a leaf's element running past its page", damage: func(t *testing.T, path string) {
			queueWithData(t, path, 300)
			rewrite(t, path, func(d []byte, ps int) []byte {
				for _, p := range pagesOf(t, d, ps, leafPage) {
					binary.NativeEndian.PutUint32(d[p*ps+16+12:], 1<<30) // vsize
				}
				return d
			})
		}},
		{name: "a leaf's keys out of order", damage: func(t *testing.T, path string) {
			queueWithData(t, path, 300)
			rewrite(t, path, func(d []byte, ps int) []byte {
				// The queue's keys are 8-byte sequence numbers: each leaf
				// holding them gets its first two swapped.
				swapped := false
				for _, p := range pagesOf(t, d, ps, leafPage) {
					e0, e1 := d[p*ps+16:], d[p*ps+32:]
					if binary.NativeEndian.Uint32(e0[8:]) != 8 || binary.NativeEndian.Uint32(e1[8:]) != 8 {
						continue
					}
					k0 := p*ps + 16 + int(binary.NativeEndian.Uint32(e0[4:]))
					k1 := p*ps + 32 + int(binary.NativeEndian.Uint32(e1[4:]))
					a, b := bytes.Clone(d[k0:k0+8]), bytes.Clone(d[k1:k1+8])
					copy(d[k0:], b)
					copy(d[k1:], a)
					swapped = true
				}
				if !swapped {
					t.Fatal("no leaf of sequence keys")
				}
				return d
			})
		}},
		{name: "the freelist pointing past the end of the file", damage: func(t *testing.T, path string) {
			queueWithData(t, path, 300)
			rewrite(t, path, func(d []byte, ps int) []byte {
				for m := range 2 {
					meta := d[m*ps+16:]
					binary.NativeEndian.PutUint64(meta[32:], uint64(len(d)/ps+50))
					h := fnvSum(meta[:56])
					binary.NativeEndian.PutUint64(meta[56:], h)
				}
				return d
			})
		}},
		{name: "both meta pages garbage", damage: func(t *testing.T, path string) {
			queueWithData(t, path, 10)
			rewrite(t, path, func(d []byte, ps int) []byte {
				copy(d[:2*ps], bytes.Repeat([]byte{0x5A}, 2*ps))
				return d
			})
		}},
		{name: "a meta page whose checksum holds over a high-water mark past the end", damage: func(t *testing.T, path string) {
			queueWithData(t, path, 10)
			rewrite(t, path, func(d []byte, ps int) []byte {
				for m := range 2 {
					meta := d[m*ps+16:]
					binary.NativeEndian.PutUint64(meta[40:], 1<<40)
					binary.NativeEndian.PutUint64(meta[56:], fnvSum(meta[:56]))
				}
				return d
			})
		}},
		{name: "a file over the bound", damage: func(t *testing.T, path string) {
			f, _ := os.Create(path)
			f.Truncate(DefaultMaxQueueFile + 1) // sparse: nothing is read
			f.Close()
		}},
		{name: "a directory", damage: func(t *testing.T, path string) {
			os.MkdirAll(filepath.Join(path, "inside"), 0o700)
		}, kept: func(t *testing.T, moved string) {
			if _, err := os.Stat(filepath.Join(moved, "inside")); err != nil {
				t.Errorf("the directory was not kept whole: %v", err)
			}
		}},
		{name: "a FIFO", damage: func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Skip("cannot make a FIFO:", err)
			}
		}, kept: func(t *testing.T, moved string) {
			if fi, err := os.Lstat(moved); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Errorf("the FIFO was not kept: %v", err)
			}
		}},
		{name: "a symbolic link to a good queue", damage: func(t *testing.T, path string) {
			target := filepath.Join(t.TempDir(), "elsewhere.db")
			queueWithData(t, target, 3)
			os.Symlink(target, path)
		}, kept: func(t *testing.T, moved string) {
			// The link is moved, never what it points to.
			if fi, err := os.Lstat(moved); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the link was not kept as a link: %v", err)
			}
			if _, err := os.Stat(moved); err != nil {
				t.Errorf("the link's target was touched: %v", err)
			}
		}},
		{name: "a dangling symbolic link", damage: func(t *testing.T, path string) {
			os.Symlink("/nonexistent/queue.db", path)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "queue.db")
			c.damage(t, path)
			var logs lockedBuf
			log := eventlog.OpenFile(filepath.Join(dir, "events.jsonl"), "serve")
			q, err := OpenQueue(path, Options{Log: log, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatalf("the queue did not open: %v", err)
			}
			e := &env{t: t, dir: dir, log: log, q: q}
			defer e.close()
			moved, _ := filepath.Glob(path + ".corrupt-*")
			if len(moved) != 1 {
				t.Fatalf("want the damaged file moved aside once, got %v", moved)
			}
			if c.kept != nil {
				c.kept(t, moved[0])
			}
			if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("no new queue file in its place: %v", err)
			}
			if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "THE QUEUE FILE IS DAMAGED") || !strings.Contains(logs.String(), moved[0]) {
				t.Errorf("the log does not say so loudly:\n%s", logs.String())
			}
			if n := e.count("server.queue_quarantined", ""); n != 1 {
				t.Errorf("%d server.queue_quarantined events, want 1", n)
			}
			p := newRecorder()
			e.run(p)
			e.accept("next", "github:acme/shop#1")
			e.waitIdle()
			if got := p.processed(); len(got) != 1 || got[0] != "next" {
				t.Errorf("processed %v, want the next delivery", got)
			}
		})
	}
}

func fnvSum(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// What is sound is opened as it is, its deliveries kept: the check does
// not move aside a file that only looks unusual.
func TestASoundQueueFileIsKeptWithItsDeliveries(t *testing.T) {
	for _, n := range []int{0, 1, 300, 2000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "queue.db")
			queueWithData(t, path, n)
			q, err := OpenQueue(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			if moved, _ := filepath.Glob(path + ".corrupt-*"); len(moved) != 0 {
				t.Errorf("a sound file was moved aside: %v", moved)
			}
			if q.Len() != n {
				t.Errorf("%d queued, want %d", q.Len(), n)
			}
		})
	}
}

// Not every error is damage: a file another process holds, or one that
// cannot be read, is refused and left where it is.
func TestAQueueFileThatCannotBeReadIsRefusedAndLeftInPlace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "queue.db")
	q, err := OpenQueue(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenQueue(path, Options{}); !errors.Is(err, ErrLocked) {
		t.Errorf("a file in use: %v, want ErrLocked", err)
	}
	q.Close()
	if os.Geteuid() != 0 {
		os.Chmod(path, 0)
		if _, err := OpenQueue(path, Options{}); err == nil {
			t.Error("an unreadable file opened")
		}
		os.Chmod(path, 0o600)
	}
	if moved, _ := filepath.Glob(path + ".corrupt-*"); len(moved) != 0 {
		t.Errorf("a file that is not damaged was moved aside: %v", moved)
	}
}

// A file damaged under a running queue (truncated by another hand) is a
// fault in bbolt's memory map: it must be an error the handler answers
// 5xx with, never a crash, and the queue stops touching the file.
func TestAFileTruncatedUnderARunningQueueIsAnErrorNotACrash(t *testing.T) {
	e := newEnv(t, Options{})
	for i := range 300 {
		e.accept(fmt.Sprintf("d%04d", i), "github:acme/shop#1")
	}
	if err := os.Truncate(e.dbPath(), int64(2*os.Getpagesize())); err != nil {
		t.Fatal(err)
	}
	_, err := e.q.Accept(delivery("after", "issue_comment", "github:acme/shop#1"))
	if !errors.Is(err, ErrFaulted) {
		t.Fatalf("Accept after the file was truncated: %v, want ErrFaulted", err)
	}
	select {
	case <-e.q.Faulted():
	default:
		t.Error("the queue does not say it faulted")
	}
	if _, err := e.q.Accept(delivery("again", "issue_comment", "github:acme/shop#1")); !errors.Is(err, ErrFaulted) {
		t.Errorf("a second Accept: %v, want ErrFaulted without touching the file", err)
	}
	hh, _ := NewHandler(e.q, Options{Secret: secret, Log: e.log})
	w := httptest.NewRecorder()
	hh.ServeHTTP(w, post(commentBody, nil))
	if w.Code != http.StatusInternalServerError {
		t.Errorf("a delivery to the faulted queue: %d, want 500", w.Code)
	}
	w = httptest.NewRecorder()
	hh.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if w.Code != http.StatusServiceUnavailable {
		t.Errorf("the health probe of a faulted queue: %d, want 503", w.Code)
	}
	if err := e.q.Close(); !errors.Is(err, ErrFaulted) {
		t.Errorf("Close: %v, want ErrFaulted", err)
	}
	e.q = nil
}

// The queue never writes a file it would refuse on the next start: a
// delivery that would take it past MaxQueueFile is refused as a full
// queue (503), and a smaller one is still taken.
func TestAcceptRefusesADeliveryThatWouldTakeTheFilePastItsBound(t *testing.T) {
	e := newEnv(t, Options{MaxQueueFile: allocSlack + 1<<20})
	big := delivery("big", "issue_comment", "github:acme/shop#1")
	big.Body = []byte(`{"pad":"` + strings.Repeat("x", 1<<20) + `"}`)
	if _, err := e.q.Accept(big); !errors.Is(err, ErrQueueFull) {
		t.Errorf("a delivery past the bound: %v, want ErrQueueFull", err)
	}
	e.accept("small", "github:acme/shop#1")
}
