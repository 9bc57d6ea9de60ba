package deliver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/the-loop/the-loop/channels/bindings"
)

// TestMain doubles as the delivery command: the test binary run with
// "deliver-helper MODE" as its arguments acts as a target would, the
// os/exec tests' own pattern.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "deliver-helper" {
		helper(os.Args[2], os.Args[3:])
		return
	}
	os.Exit(m.Run())
}

func helper(mode string, args []string) {
	in, _ := io.ReadAll(os.Stdin)
	switch mode {
	case "echo": // delivered: says what it was given
		os.Stdout.Write(in)
		os.Exit(0)
	case "fail": // refuses, saying why on its first line
		fmt.Fprint(os.Stderr, "\n  no route to the chat\nsecond line\n")
		os.Exit(3)
	case "flood": // writes far more than is kept
		os.Stdout.Write(bytes.Repeat([]byte("x"), 4*MaxOutput))
		os.Exit(0)
	case "hang": // never answers
		time.Sleep(time.Minute)
	case "fork": // starts a child that would outlive it, then hangs
		child := exec.Command(os.Args[0], "deliver-helper", "hang")
		child.Stdout = os.Stdout
		if err := child.Start(); err != nil {
			os.Exit(9)
		}
		os.WriteFile(args[0], []byte(strconv.Itoa(child.Process.Pid)), 0o600)
		time.Sleep(time.Minute)
	}
	os.Exit(10)
}

func helperTarget(mode string, args ...string) *bindings.Target {
	return &bindings.Target{Command: append([]string{os.Args[0], "deliver-helper", mode}, args...)}
}

var at = time.Date(2026, 12, 1, 20, 10, 0, 0, time.UTC)

func message() Message {
	return Message{Channel: "slack", Thread: "1712345678.000100", TS: "1712345679.000200",
		Author: "U0456", Text: "ship it <now> & then", At: at}
}

func binding(d *bindings.Target) bindings.Binding {
	return bindings.Binding{Ref: "github:acme/shop#12", Repo: "/work/shop", Deliver: d}
}

const wantJSON = `{"ref":"github:acme/shop#12","channel":"slack","thread":"1712345678.000100","ts":"1712345679.000200","author":"U0456","text":"ship it <now> & then","at":"2026-12-01T20:10:00Z"}`

func TestAMessagesJSONHasStableNamesAndUTCTime(t *testing.T) {
	m := message()
	m.Ref = "github:acme/shop#12"
	m.At = at.In(time.FixedZone("CET", 3600))
	got, err := m.line()
	if err != nil || string(got) != wantJSON+"\n" {
		t.Errorf("line = %s, %v\nwant %s", got, err, wantJSON)
	}
	// json.Marshal escapes <, > and & as it always does, meaning the same
	var fromMarshal Message
	if data, err := json.Marshal(m); err != nil || json.Unmarshal(data, &fromMarshal) != nil || fromMarshal.Text != m.Text {
		t.Errorf("json.Marshal = %s, %v", data, err)
	}
	var back Message
	if err := json.Unmarshal([]byte(wantJSON), &back); err != nil || !back.At.Equal(at) || back.Text != m.Text {
		t.Errorf("json.Unmarshal = %+v, %v", back, err)
	}
	for _, bad := range []string{
		`{"ref":"github:acme/shop#12","at":"yesterday"}`,
		`{"ref":"github:acme/shop#12","at":"2026-12-01T20:10:00Z","extra":1}`,
	} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("json.Unmarshal(%s) accepted it", bad)
		}
	}
}

func TestDeliverPostsToAURL(t *testing.T) {
	var redirected atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/ok/secret-token", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || string(body) != wantJSON+"\n" {
			t.Errorf("got %s %s %q", r.Method, r.Header.Get("Content-Type"), body)
		}
		w.WriteHeader(http.StatusAccepted)
		w.Write(bytes.Repeat([]byte("a long answer "), 100_000))
	})
	mux.HandleFunc("/broken/secret-token", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError)
	})
	mux.HandleFunc("/moved/secret-token", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) { redirected.Add(1) })
	release := make(chan struct{})
	mux.HandleFunc("/slow/secret-token", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer close(release)

	for _, tc := range []struct {
		name    string
		path    string
		timeout time.Duration
		status  int   // the Result's, for a delivery
		code    int   // the *StatusError's, for a refusal
		is      error // what the error wraps, for a failure
	}{
		{name: "a 2xx answer is delivered", path: "/ok/secret-token", status: http.StatusAccepted},
		{name: "a 500 answer is an error naming it", path: "/broken/secret-token", code: http.StatusInternalServerError},
		{name: "a redirect is not followed", path: "/moved/secret-token", code: http.StatusFound},
		{name: "a slow server is given up on when the context ends", path: "/slow/secret-token", timeout: 100 * time.Millisecond, is: context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			start := time.Now()
			res, err := Deliver(ctx, t.TempDir(), binding(&bindings.Target{URL: srv.URL + tc.path}), message())
			var se *StatusError
			switch {
			case tc.status != 0:
				if err != nil || res.Target != TargetURL || res.Status != tc.status {
					t.Errorf("Deliver = %+v, %v", res, err)
				}
			case tc.code != 0:
				if !errors.As(err, &se) || se.Code != tc.code || !strings.Contains(err.Error(), strconv.Itoa(tc.code)) {
					t.Errorf("Deliver = %v, want a *StatusError for %d", err, tc.code)
				}
			default:
				if !errors.Is(err, tc.is) {
					t.Errorf("Deliver = %v, want it to wrap %v", err, tc.is)
				}
				if time.Since(start) > 3*time.Second {
					t.Errorf("Deliver took %s", time.Since(start))
				}
			}
			if err != nil && strings.Contains(err.Error(), "secret-token") {
				t.Errorf("the error shows the URL's path, where a webhook keeps its secret: %v", err)
			}
		})
	}
	if redirected.Load() != 0 {
		t.Error("a redirect was followed")
	}
}

func TestDeliverRunsACommandWithTheMessageOnStdin(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target *bindings.Target
		check  func(t *testing.T, res Result, err error)
	}{
		{"exit 0 is delivered", helperTarget("echo"), func(t *testing.T, res Result, err error) {
			if err != nil || res.Target != TargetCommand || string(res.Stdout) != wantJSON+"\n" {
				t.Errorf("Deliver = %+v, %v", res, err)
			}
		}},
		{"exit 3 is an error with its status and first line of stderr", helperTarget("fail"), func(t *testing.T, res Result, err error) {
			var ee *ExitError
			if !errors.As(err, &ee) || ee.Code != 3 || ee.Stderr != "no route to the chat" {
				t.Errorf("Deliver = %v, want an *ExitError with status 3", err)
			}
			if !strings.HasSuffix(err.Error(), ": exit status 3: no route to the chat") {
				t.Errorf("message %q", err)
			}
		}},
		{"output past the bound is dropped, not refused", helperTarget("flood"), func(t *testing.T, res Result, err error) {
			if err != nil || len(res.Stdout) != MaxOutput {
				t.Errorf("Deliver kept %d bytes, %v; want %d", len(res.Stdout), err, MaxOutput)
			}
		}},
		{"a program that is not there is an error", &bindings.Target{Command: []string{"/nonexistent/notify"}}, func(t *testing.T, res Result, err error) {
			if err == nil || !strings.Contains(err.Error(), "/nonexistent/notify") {
				t.Errorf("Deliver = %v", err)
			}
		}},
		{"no shell reads the arguments", &bindings.Target{Command: []string{"echo; touch pwned"}}, func(t *testing.T, res Result, err error) {
			if !errors.Is(err, exec.ErrNotFound) {
				t.Errorf("Deliver = %v, want the whole word looked up as a program", err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Deliver(context.Background(), t.TempDir(), binding(tc.target), message())
			tc.check(t, res, err)
		})
	}
}

func TestACommandThatOverrunsIsKilledWithItsChildren(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	// The deadline comes once the command has started its child, however
	// slowly a loaded machine starts it; a Deliver that ignored it would
	// wait out the helper's minute and return its exit status instead.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for range 3000 {
			if _, err := os.Stat(pidFile); err == nil || ctx.Err() != nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
	}()
	_, err := Deliver(ctx, t.TempDir(), binding(helperTarget("fork", pidFile)), message())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Deliver = %v, want it to wrap context.Canceled", err)
	}
	if runtime.GOOS != "linux" {
		return
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the helper did not start its child: %v", err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		stat, err := os.ReadFile("/proc/" + string(data) + "/stat")
		// gone, or a zombie waiting for init: killed either way
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command's child %s outlived it: %s", data, stat)
		}
	}
}

func TestDeliverRefusesAMessageForAnotherWorkItem(t *testing.T) {
	m := message()
	m.Ref = "github:acme/shop#13"
	state := t.TempDir()
	if _, err := Deliver(context.Background(), state, binding(nil), m); err == nil || !strings.Contains(err.Error(), "github:acme/shop#13") {
		t.Errorf("Deliver = %v", err)
	}
	if msgs, err := ReadInbox(state, ref(t, "github:acme/shop#12")); err != nil || len(msgs) != 0 {
		t.Errorf("the inbox holds %v, %v", msgs, err)
	}
}
