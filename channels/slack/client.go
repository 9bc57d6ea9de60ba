package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// DefaultTimeout bounds one Web API request when NewClient is given no
// http.Client.
const DefaultTimeout = 10 * time.Second

// maxAnswer bounds a Web API answer read: reactions.add answers a few
// bytes.
const maxAnswer = 64 << 10

// APIError is a Web API call Slack answered with ok false: Code is Slack's
// error code (missing_scope, channel_not_found, invalid_auth, ...).
type APIError struct {
	Method string
	Code   string
}

func (e *APIError) Error() string { return "slack " + e.Method + ": " + e.Code }

// Client is a small client of Slack's Web API, for the calls the-loop
// makes with the bot token. It is safe for concurrent use.
type Client struct {
	base  string
	token string
	hc    *http.Client
}

// NewClient returns a client of the Web API at baseURL (Config.APIBaseURL)
// acting with token. hc is copied, never changed; nil is a client with
// DefaultTimeout. Redirects are never followed: the token goes with every
// request, and Slack's API does not redirect.
func NewClient(baseURL, token string, hc *http.Client) *Client {
	c := &http.Client{Timeout: DefaultTimeout}
	if hc != nil {
		cp := *hc
		c = &cp
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Client{base: strings.TrimRight(baseURL, "/"), token: token, hc: c}
}

// AddReaction puts the reaction name (without colons) on the message ts in
// channel: reactions.add. A reaction already there is success, so that an
// acknowledgement made twice (a retried event, a restart) is not an error.
// Any other refusal is an *APIError with Slack's code.
func (c *Client) AddReaction(ctx context.Context, channel, ts, name string) error {
	if channel == "" || ts == "" || name == "" {
		return fmt.Errorf("slack reactions.add: got channel %q, ts %q, name %q, want all three", channel, ts, name)
	}
	err := c.call(ctx, "reactions.add", map[string]string{"channel": channel, "timestamp": ts, "name": name})
	if ae := (*APIError)(nil); errors.As(err, &ae) && ae.Code == "already_reacted" {
		return nil
	}
	return err
}

// call posts params as JSON to the Web API method and reads Slack's
// {"ok": ..., "error": ...} answer. Errors name the method, never the
// token.
func (c *Client) call(ctx context.Context, method string, params any) error {
	if c.token == "" {
		return fmt.Errorf("slack %s: no bot token", method)
	}
	body, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("slack %s: %w", method, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/"+method, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("slack %s: %w", method, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("slack %s: %w", method, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return fmt.Errorf("slack %s: read the answer: %w", method, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := fmt.Sprintf("slack %s: HTTP %d", method, resp.StatusCode)
		if ra := resp.Header.Get("Retry-After"); resp.StatusCode == http.StatusTooManyRequests && ra != "" {
			msg += " (rate limited; retry after " + clip(ra) + " s)"
		}
		return errors.New(msg)
	}
	if len(data) > maxAnswer {
		return fmt.Errorf("slack %s: answer over %d bytes", method, maxAnswer)
	}
	var ans struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(data, &ans); err != nil {
		return fmt.Errorf("slack %s: the answer is not Slack's JSON: %w", method, err)
	}
	if !ans.OK {
		code := ans.Error
		if code == "" {
			code = "unknown_error"
		}
		return &APIError{Method: method, Code: clip(code)}
	}
	return nil
}

// TokenFrom reads a token (or the signing secret) from the environment
// variable env, which the config names (Config.BotTokenEnv): the value is
// never in the config file, and is read where it is used rather than
// carried in a Config that is logged or printed. Unset or blank is an
// error naming the variable, never the value.
func TokenFrom(env string) (string, error) {
	if env == "" {
		return "", errors.New("no environment variable named to read the Slack token from")
	}
	tok := strings.TrimSpace(os.Getenv(env))
	if tok == "" {
		return "", fmt.Errorf("$%s is not set", env)
	}
	return tok, nil
}
