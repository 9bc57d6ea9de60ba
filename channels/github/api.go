package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/the-loop/the-loop/graph"
)

// The REST API's own settings: the version of it we speak, and how much
// of an answer we read.
const (
	apiVersion = "2022-11-28"
	// maxAnswerBytes bounds one answer: a page of 100 comments of
	// GitHub's largest size fits.
	maxAnswerBytes = 32 << 20
	perPage        = 100
	// maxListBytes bounds what one listing reads in all its pages: a
	// thread of thousands of long comments is a few megabytes.
	maxListBytes = 64 << 20
	userAgent    = "the-loop"
)

// apiTransport is REST over net/http with a token.
type apiTransport struct {
	base     *url.URL
	token    string
	tokenVar string // where the token came from, for a 401's message
	client   *http.Client
	o        Options
}

func newAPI(o Options, token, tokenVar string) *apiTransport {
	base, _ := parseBaseURL(o.BaseURL) // checked by withDefaults
	a := &apiTransport{base: base, token: token, tokenVar: tokenVar, o: o}
	client := &http.Client{}
	if o.HTTPClient != nil {
		c := *o.HTTPClient
		client = &c
	}
	// The token goes with every request, and Go forwards it on a redirect
	// to the same host name whatever its port or scheme: a redirect is
	// followed only within the API root, as a next page's link is.
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("stopped after 5 redirects")
		}
		if !a.under(req.URL) {
			return fmt.Errorf("redirected to %s, which is not under %s; not followed", cut(req.URL.String(), 200), a.base)
		}
		return nil
	}
	a.client = client
	return a
}

// under reports whether u lies under the API root: its scheme, host and
// port, and a path below the root's.
func (a *apiTransport) under(u *url.URL) bool {
	return u.Scheme == a.base.Scheme && u.Host == a.base.Host && strings.HasPrefix(u.EscapedPath(), a.base.EscapedPath()+"/")
}

func (a *apiTransport) name() string { return TransportAPI }

// credential is the API root and a digest of the token.
func (a *apiTransport) credential() string {
	return "api " + a.base.String() + " token:" + digest(a.token)
}

// url is the absolute URL of path, an escaped path below the API root.
func (a *apiTransport) url(path string) string { return a.base.String() + path }

func (a *apiTransport) do(ctx context.Context, r request, out any) error {
	_, body, err := a.send(ctx, r, a.url(r.path))
	if err != nil || out == nil || len(bytes.TrimSpace(body)) == 0 {
		return err
	}
	if err := json.Unmarshal(body, out); err != nil {
		return r.fail(0, "the answer is not the JSON expected", err)
	}
	return nil
}

func (a *apiTransport) list(ctx context.Context, r request, max int) ([]json.RawMessage, error) {
	next := a.url(r.path) + "?per_page=" + strconv.Itoa(perPage)
	var items []json.RawMessage
	read := 0
	for pages := 0; next != ""; pages++ {
		if pages > max/perPage+1 {
			return nil, r.fail(0, fmt.Sprintf("more than %d pages; not read", pages), nil)
		}
		h, body, err := a.send(ctx, r, next)
		if err != nil {
			return nil, err
		}
		if read += len(body); read > maxListBytes {
			return nil, r.fail(0, fmt.Sprintf("more than %d bytes in all; not read", maxListBytes), nil)
		}
		var page []json.RawMessage
		if err := json.Unmarshal(body, &page); err != nil {
			return nil, r.fail(0, "a page of the answer is not a JSON list", err)
		}
		if items = append(items, page...); len(items) > max {
			return nil, r.fail(0, fmt.Sprintf("more than %d items; not read", max), nil)
		}
		if next, err = a.nextPage(h.Get("Link")); err != nil {
			return nil, r.fail(0, err.Error(), nil)
		}
	}
	return items, nil
}

// nextPage is the rel="next" URL of a Link header, "" when there is
// none. It must lie under the API root: the token goes with it.
func (a *apiTransport) nextPage(link string) (string, error) {
	for part := range strings.SplitSeq(link, ",") {
		target, params, ok := strings.Cut(strings.TrimSpace(part), ";")
		if !ok || !strings.Contains(params, `rel="next"`) {
			continue
		}
		raw := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(target), "<"), ">")
		u, err := url.Parse(raw)
		if err != nil || !a.under(u) {
			return "", fmt.Errorf("the next page's link %q is not under %s", cut(raw, 200), a.base)
		}
		return u.String(), nil
	}
	return "", nil
}

// send performs r at target, waiting out rate limits and retrying a
// repeatable request's transient failures, within the attempts and the
// wait Options allow. It returns a 2xx answer's header and body.
func (a *apiTransport) send(ctx context.Context, r request, target string) (http.Header, []byte, error) {
	var waited time.Duration
	for attempt := 1; ; attempt++ {
		status, h, body, err := a.once(ctx, r, target)
		var wait time.Duration
		var limit string
		switch {
		case err != nil:
			if ctx.Err() != nil || !r.repeatable || attempt >= a.o.MaxAttempts {
				return nil, nil, r.fail(0, a.scrub(err.Error()), errors.Unwrap(err))
			}
			wait = backoff(attempt)
		case status/100 == 2:
			return h, body, nil
		default:
			msg := githubMessage(body)
			limit, wait = a.rateLimit(status, h, msg, attempt)
			switch {
			case limit != "" && (attempt >= a.o.MaxAttempts || waited+wait > a.o.MaxWait):
				e := r.fail(status, a.giveUp(limit, wait, attempt), nil)
				e.RateLimited = true
				return nil, nil, e
			case limit == "" && (status < 500 || !r.repeatable || attempt >= a.o.MaxAttempts):
				return nil, nil, r.fail(status, a.scrub(joinMsg(msg, a.hint(status))), nil)
			case limit == "":
				wait = backoff(attempt)
			}
		}
		if waited+wait > a.o.MaxWait {
			return nil, nil, r.fail(status, fmt.Sprintf("still failing after %d attempts", attempt), nil)
		}
		if err := a.o.Sleep(ctx, wait); err != nil {
			return nil, nil, r.fail(status, "gave up waiting to retry: "+err.Error(), err)
		}
		waited += wait
	}
}

// once sends r one time, within the request timeout, and reads the answer.
func (a *apiTransport) once(parent context.Context, r request, target string) (int, http.Header, []byte, error) {
	ctx, cancel := context.WithTimeout(parent, a.o.RequestTimeout)
	defer cancel()
	var payload io.Reader
	if r.body != nil {
		data, err := json.Marshal(r.body)
		if err != nil {
			return 0, nil, nil, err
		}
		payload = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, target, payload)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", apiVersion)
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Authorization", "Bearer "+a.token)
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.client.Do(req)
	if err != nil && parent.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return 0, nil, nil, fmt.Errorf("no answer within %s: %w", a.o.RequestTimeout, context.DeadlineExceeded)
	}
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("read the answer: %w", err)
	}
	if len(body) > maxAnswerBytes {
		return 0, nil, nil, fmt.Errorf("the answer is over %d MiB; not read", maxAnswerBytes>>20)
	}
	return resp.StatusCode, resp.Header, body, nil
}

// rateLimit names the rate limit a 403 or 429 answer reports, and how long
// to wait before trying again; "" when the answer is not one. GitHub says
// so three ways: a Retry-After header (a secondary limit), an exhausted
// primary limit (X-RateLimit-Remaining 0, with its reset time), or only
// the message, for a secondary limit that gives no time (wait a minute,
// then longer each time).
func (a *apiTransport) rateLimit(status int, h http.Header, msg string, attempt int) (string, time.Duration) {
	if status != http.StatusForbidden && status != http.StatusTooManyRequests {
		return "", 0
	}
	if ra := strings.TrimSpace(h.Get("Retry-After")); ra != "" {
		if secs, err := strconv.Atoi(ra); err == nil && secs >= 0 {
			return "secondary rate limit", time.Duration(secs) * time.Second
		}
		if at, err := http.ParseTime(ra); err == nil {
			return "secondary rate limit", max(at.Sub(a.o.Now()), 0)
		}
	}
	if h.Get("X-RateLimit-Remaining") == "0" {
		reset, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64)
		if err != nil {
			return "primary rate limit", time.Minute
		}
		at := time.Unix(reset, 0)
		return fmt.Sprintf("primary rate limit (it resets at %s)", at.UTC().Format(time.RFC3339)), max(at.Sub(a.o.Now())+time.Second, 0)
	}
	lower := strings.ToLower(msg)
	if status == http.StatusTooManyRequests || strings.Contains(lower, "secondary rate limit") || strings.Contains(lower, "abuse") {
		return "secondary rate limit", time.Minute << (attempt - 1)
	}
	return "", 0
}

func (a *apiTransport) giveUp(limit string, wait time.Duration, attempt int) string {
	if attempt >= a.o.MaxAttempts {
		return fmt.Sprintf("%s: still limited after %d attempts", limit, attempt)
	}
	return fmt.Sprintf("%s: GitHub asks to wait %s, longer than a call waits (%s)", limit, wait.Round(time.Second), a.o.MaxWait)
}

// hint says what an error status usually means for this integration.
func (a *apiTransport) hint(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return fmt.Sprintf("GitHub refused the token in $%s", a.tokenVar)
	case http.StatusNotFound:
		return "no such issue, pull request or repository, or the token cannot see it"
	case http.StatusForbidden:
		return "the token may lack the permission"
	}
	return ""
}

// scrub makes sure the token is never in a message, whatever an
// intermediary echoed.
func (a *apiTransport) scrub(s string) string {
	if a.token == "" {
		return s
	}
	return strings.ReplaceAll(s, a.token, "[token]")
}

// backoff is the wait before retry attempt+1 of a transient failure.
func backoff(attempt int) time.Duration { return time.Second << (attempt - 1) }

// githubMessage is the "message" of a GitHub error answer, with what its
// validation errors say (a 422's "errors", GitHub's validation-error
// schema: a message, or a code and the field it is about), cut and made
// printable; "" when the body carries none. "Validation Failed" alone
// would not say that a comment's body is too long.
func githubMessage(body []byte) string {
	var e struct {
		Message string          `json:"message"`
		Errors  json.RawMessage `json:"errors"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	var details []struct {
		Message string `json:"message"`
		Code    string `json:"code"`
		Field   string `json:"field"`
	}
	_ = json.Unmarshal(e.Errors, &details) // errors of another shape add nothing
	msg := e.Message
	for i, v := range details {
		if i == 3 {
			break
		}
		detail := v.Message
		if detail == "" && v.Code != "" {
			detail = strings.TrimSpace(v.Field + " " + v.Code)
		}
		if detail != "" {
			msg += ": " + detail
		}
	}
	return cut(msg, 300)
}

// cut is s with control characters made spaces, at most n bytes of it:
// what GitHub or gh said, fit for a one-line error.
func cut(s string, n int) string {
	return graph.Cut(strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)), n)
}

func joinMsg(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "; ")
}
