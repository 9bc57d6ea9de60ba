package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/the-loop/the-loop/internal/lazyregexp"
	"github.com/the-loop/the-loop/policy"
)

// maxStderrBytes bounds what is kept of gh's stderr: enough for its message.
const maxStderrBytes = 64 << 10

// cliTransport is the gh CLI: `gh api`, inheriting the operator's gh
// authentication (enterprise host and SSO included). gh shows no response
// headers, so a rate limit is recognised by its message and waited out
// with a growing pause.
type cliTransport struct {
	path  string // the binary, resolved
	shown string // the binary as configured, for messages
	o     Options
	// hostname is the GitHub Enterprise host gh is to ask, "" for
	// github.com.
	hostname string
}

func newCLI(o Options, path string) *cliTransport {
	c := &cliTransport{path: path, shown: o.Binary, o: o}
	// gh asks github.com unless told another host: a GitHub Enterprise
	// Server's base URL names it.
	if host, err := policy.GitHubWebHost(o.BaseURL); err == nil && host != policy.DefaultGitHubHost {
		c.hostname = host
	}
	return c
}

func (c *cliTransport) name() string { return TransportCLI }

// ghAccountEnv are the variables that choose which account gh uses.
var ghAccountEnv = []string{"GH_HOST", "GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "GH_CONFIG_DIR"}

// credential is the binary, the host gh is asked about, and a digest of
// what in the environment chooses gh's account. An account switched with gh auth switch is not
// seen: removing IdentityFile has the login asked again.
func (c *cliTransport) credential() string {
	vals := make([]string, len(ghAccountEnv))
	for i, k := range ghAccountEnv {
		vals[i] = k + "=" + c.o.Env(k)
	}
	host := c.hostname
	if host == "" {
		host = "github.com"
	}
	return "cli " + c.path + " host:" + host + " env:" + digest(vals...)
}

func (c *cliTransport) do(ctx context.Context, r request, out any) error {
	stdout, err := c.send(ctx, r, false)
	if err != nil || out == nil || len(bytes.TrimSpace(stdout)) == 0 {
		return err
	}
	if err := json.Unmarshal(stdout, out); err != nil {
		return r.fail(0, c.shown+" api answered something that is not the JSON expected", err)
	}
	return nil
}

// list runs gh api --paginate, which prints each page's list in turn.
func (c *cliTransport) list(ctx context.Context, r request, max int) ([]json.RawMessage, error) {
	stdout, err := c.send(ctx, r, true)
	if err != nil {
		return nil, err
	}
	var items []json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(stdout))
	for {
		var page []json.RawMessage
		if err := dec.Decode(&page); errors.Is(err, io.EOF) {
			return items, nil
		} else if err != nil {
			return nil, r.fail(0, c.shown+" api answered a page that is not a JSON list", err)
		}
		if items = append(items, page...); len(items) > max {
			return nil, r.fail(0, fmt.Sprintf("more than %d items; not read", max), nil)
		}
	}
}

var httpStatus = lazyregexp.New(`\(HTTP (\d{3})\)`)

// send runs gh for r, waiting out a rate limit and retrying a repeatable
// request's transient failure, as the api transport does.
func (c *cliTransport) send(ctx context.Context, r request, paginate bool) ([]byte, error) {
	var waited time.Duration
	for attempt := 1; ; attempt++ {
		stdout, stderr, err := c.once(ctx, r, paginate)
		if err == nil {
			return stdout, nil
		}
		status := 0
		if m := httpStatus.FindStringSubmatch(stderr); m != nil {
			status, _ = strconv.Atoi(m[1])
		}
		msg := joinMsg(cut(stderr, 300), err.Error())
		lower := strings.ToLower(stderr)
		var wait time.Duration
		switch {
		case ctx.Err() != nil:
			return nil, r.fail(status, msg, err)
		case status == 429 || (status == 403 && strings.Contains(lower, "rate limit")):
			wait = time.Minute << (attempt - 1)
			if attempt >= c.o.MaxAttempts || waited+wait > c.o.MaxWait {
				e := r.fail(status, "rate limit: "+msg, err)
				e.RateLimited = true
				return nil, e
			}
		case (status == 0 || status >= 500) && r.repeatable && attempt < c.o.MaxAttempts:
			wait = backoff(attempt)
		default:
			return nil, r.fail(status, msg, err)
		}
		if waited+wait > c.o.MaxWait {
			return nil, r.fail(status, msg, err)
		}
		if err := c.o.Sleep(ctx, wait); err != nil {
			return nil, r.fail(status, "gave up waiting to retry: "+err.Error(), err)
		}
		waited += wait
	}
}

// once runs gh api one time, within the request timeout (four for a
// paginated listing, which is several requests).
func (c *cliTransport) once(ctx context.Context, r request, paginate bool) (stdout []byte, stderr string, err error) {
	timeout := c.o.RequestTimeout
	path := strings.TrimPrefix(r.path, "/")
	args := []string{"api", "--method", r.method,
		"-H", "Accept: application/vnd.github+json", "-H", "X-GitHub-Api-Version: " + apiVersion}
	if c.hostname != "" {
		args = append(args, "--hostname", c.hostname)
	}
	if paginate {
		timeout *= 4
		args = append(args, "--paginate")
		path += "?per_page=" + strconv.Itoa(perPage)
	}
	var stdin io.Reader
	if r.body != nil {
		data, err := json.Marshal(r.body)
		if err != nil {
			return nil, "", err
		}
		stdin = bytes.NewReader(data)
		args = append(args, "--input", "-")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.path, append(args, path)...)
	cmd.Stdin = stdin
	limit := int64(maxAnswerBytes)
	if paginate {
		limit *= 2
	}
	out := &capped{max: limit}
	errOut := &capped{max: maxStderrBytes, quiet: true}
	cmd.Stdout, cmd.Stderr = out, errOut
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	switch {
	case ctx.Err() != nil:
		return nil, errOut.String(), fmt.Errorf("%s api did not answer within %s", c.shown, timeout)
	case out.over:
		return nil, errOut.String(), fmt.Errorf("%s api answered over %d MiB; not read", c.shown, limit>>20)
	case err != nil:
		return nil, errOut.String(), fmt.Errorf("%s api: %w", c.shown, err)
	}
	return out.Bytes(), errOut.String(), nil
}

// capped is a buffer that keeps at most max bytes. Past it, writes fail
// (the process then stops on a broken pipe), or, when quiet, are dropped.
// The buffer is a field, not embedded: an embedded bytes.Buffer's ReadFrom
// would be io.Copy's way around Write, and around the cap.
type capped struct {
	buf   bytes.Buffer
	max   int64
	over  bool
	quiet bool
}

func (c *capped) Write(p []byte) (int, error) {
	room := c.max - int64(c.buf.Len())
	if int64(len(p)) > room {
		c.over = true
		c.buf.Write(p[:max(room, 0)])
		if c.quiet {
			return len(p), nil
		}
		return 0, errors.New("output over its limit")
	}
	return c.buf.Write(p)
}

func (c *capped) Bytes() []byte  { return c.buf.Bytes() }
func (c *capped) String() string { return c.buf.String() }
