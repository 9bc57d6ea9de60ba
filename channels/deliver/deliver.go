package deliver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/bindings"
)

// Timeout bounds one delivery to a URL or a command: a target that hangs
// must not hold the work item's other deliveries.
const Timeout = 10 * time.Second

// MaxOutput bounds what is read of a URL's answer, and what is kept of
// each of a command's output streams.
const MaxOutput = 64 << 10

// MaxMessage bounds a message as one line of JSON. A chat message is a few
// kilobytes at most; the bound keeps every inbox line readable whole.
const MaxMessage = 1 << 20

// waitDelay is how long a command's output pipes may stay open after it
// was killed or exited, held by a process that escaped its group.
const waitDelay = time.Second

// Where a message went, as Result.Target says it.
const (
	TargetURL     = bindings.TargetURL
	TargetCommand = bindings.TargetCommand
	TargetInbox   = "inbox"
)

// Result is where a delivered message went.
type Result struct {
	// Target is TargetURL, TargetCommand or TargetInbox.
	Target string
	// Status is the HTTP status code the URL answered, 0 for the others.
	Status int
	// Stdout is what the command wrote on its standard output, at most
	// MaxOutput bytes; nil for the others.
	Stdout []byte
	// Inbox is the path of the inbox the message was appended to, "" for
	// the others.
	Inbox string
}

// StatusError is a URL that answered a delivery with a status other than
// 2xx. A redirect is one: it is not followed.
type StatusError struct {
	// URL is the target as Shown: without the path, query and user
	// information that may hold its secret.
	URL string
	// Code is the status code, Status the status line's text ("500
	// Internal Server Error").
	Code   int
	Status string
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("deliver to %s: got status %s, want 2xx", e.URL, e.Status)
	if e.Code >= 300 && e.Code < 400 {
		msg += " (redirects are not followed)"
	}
	return msg
}

// ExitError is a delivery command that did not exit 0.
type ExitError struct {
	// Command is the program run, argv[0].
	Command string
	// Code is its exit status, or the negated signal number when a signal
	// ended it.
	Code int
	// Stderr is the first line it wrote to stderr, "" for none.
	Stderr string
}

func (e *ExitError) Error() string {
	msg := fmt.Sprintf("deliver to command %s: exit status %d", e.Command, e.Code)
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

// Deliver hands m to where b says a message for its work item goes: its
// URL, its command, or with neither, the work item's inbox under the
// state root stateRoot. m.Ref must name b's work item, or be "" to take
// b's; m.At is stamped now when it is zero. A delivery that fails returns
// an error and is not put anywhere else.
func Deliver(ctx context.Context, stateRoot string, b bindings.Binding, m Message) (Result, error) {
	ref, err := channels.ParseRef(b.Ref)
	if err != nil {
		return Result{}, fmt.Errorf("deliver: %w", err)
	}
	if m.Ref != "" {
		if r, err := channels.ParseRef(m.Ref); err != nil || r.Key() != ref.Key() {
			return Result{}, fmt.Errorf("deliver: got a message for %q, want one for %s", m.Ref, b.Ref)
		}
	}
	m.Ref = b.Ref
	if m.At.IsZero() {
		m.At = time.Now()
	}
	line, err := m.line()
	if err != nil {
		return Result{}, fmt.Errorf("deliver: %w", err)
	}
	if len(line) > MaxMessage {
		return Result{}, fmt.Errorf("deliver: the message is %d bytes as JSON, over the limit of %d", len(line), MaxMessage)
	}
	if b.Deliver == nil {
		path, err := appendInbox(ctx, stateRoot, ref, line)
		if err != nil {
			return Result{}, err
		}
		return Result{Target: TargetInbox, Inbox: path}, nil
	}
	if err := b.Deliver.Validate(); err != nil {
		return Result{}, fmt.Errorf("deliver for %s: %w", b.Ref, err)
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	if b.Deliver.Kind() == bindings.TargetURL {
		return post(ctx, b.Deliver.URL, line)
	}
	return run(ctx, b.Deliver.Command, line)
}

// client follows no redirect: the answer a target gives is the answer.
var client = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// post POSTs the message to target.
func post(ctx context.Context, target string, body []byte) (Result, error) {
	shown := Shown(target)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return Result{}, fmt.Errorf("deliver to %s: %w", shown, unwrapURL(err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "the-loop")
	resp, err := client.Do(req)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return Result{}, fmt.Errorf("deliver to %s: no answer: %w", shown, cerr)
		}
		return Result{}, fmt.Errorf("deliver to %s: %w", shown, unwrapURL(err))
	}
	defer resp.Body.Close()
	// Read a bounded part, so that a keep-alive connection can be reused
	// after a short answer; a long one is not worth the wait.
	io.Copy(io.Discard, io.LimitReader(resp.Body, MaxOutput))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Result{}, &StatusError{URL: shown, Code: resp.StatusCode, Status: resp.Status}
	}
	return Result{Target: TargetURL, Status: resp.StatusCode}, nil
}

// unwrapURL drops the *url.Error around err, whose message repeats the
// whole URL and with it any secret the URL holds.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Shown is a target URL as a message may name it: its scheme and host,
// without the path, query and user information a webhook URL keeps its
// secret in.
func Shown(target string) string {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return "the URL"
	}
	s := u.Scheme + "://" + u.Host
	if u.Path != "" || u.RawQuery != "" {
		s += "/…"
	}
	return s
}

// run runs argv with the message on its standard input.
func run(ctx context.Context, argv []string, stdin []byte) (Result, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = waitDelay
	isolate(cmd)
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return Result{}, fmt.Errorf("deliver to command %s: did not finish: %w", argv[0], ctx.Err())
	case errors.As(err, &exit):
		return Result{}, &ExitError{Command: argv[0], Code: exitCode(exit), Stderr: firstLine(stderr.Bytes())}
	case err != nil:
		return Result{}, fmt.Errorf("deliver to command %s: %w", argv[0], err)
	}
	return Result{Target: TargetCommand, Stdout: stdout.Bytes()}, nil
}

// maxStderrLine bounds the line of stderr an ExitError carries.
const maxStderrLine = 512

// firstLine is the first non-blank line of out, bounded.
func firstLine(out []byte) string {
	for line := range strings.Lines(string(out)) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if len(line) > maxStderrLine {
			line = line[:maxStderrLine]
			for !utf8.ValidString(line) {
				line = line[:len(line)-1]
			}
			line += "…"
		}
		return line
	}
	return ""
}

// capped keeps the first MaxOutput bytes written to it and drops the rest,
// accepting them all: a command that writes more is not stopped by a
// broken pipe for it. The buffer is a field, not embedded: an embedded
// one's ReadFrom would be what io.Copy calls, past the bound.
type capped struct{ buf bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := MaxOutput - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// Bytes is what was kept.
func (c *capped) Bytes() []byte { return c.buf.Bytes() }
