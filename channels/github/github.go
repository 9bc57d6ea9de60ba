package github

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/policy"
)

// The transports, as integrations.github.transport names them.
const (
	TransportAuto = "auto"
	TransportAPI  = "api"
	TransportCLI  = "cli"
)

// Defaults of the integrations.github keys.
const (
	DefaultBaseURL = "https://api.github.com"
	DefaultBinary  = "gh"
)

// DefaultTokenEnv are the environment variables a token is read from, in
// order, when integrations.github.api.tokenEnv names none.
var DefaultTokenEnv = []string{"GH_TOKEN", "GITHUB_TOKEN"}

// The operations Call performs. Every one takes a "ref", the issue or pull
// request it acts on (github:OWNER/REPO#N); see Call for the rest.
const (
	OpAddComment       = "add-comment"
	OpListComments     = "list-comments"
	OpSetLabels        = "set-labels"
	OpAddLabels        = "add-labels"
	OpRemoveLabel      = "remove-label"
	OpListLabels       = "list-labels"
	OpRequestReviewers = "request-reviewers"
	OpAddReaction      = "add-reaction"
	// ParamCommentID is add-reaction's parameter naming the comment to
	// react on; without it the reaction is on the issue itself.
	ParamCommentID = "commentId"
	// ParamRelay is add-comment's parameter saying the body is a ledger
	// record of a person's words, to be posted unmarked (AddRelay).
	ParamRelay = "relay"
	// opGetLabels is the original tool's name for list-labels.
	opGetLabels = "get-labels"
)

// The operations check reads a pull request's reviews with: its reviews,
// and the comments on its diff.
const (
	OpListReviews        = "list-reviews"
	OpListReviewComments = "list-review-comments"
)

// Operations lists what Call performs, sorted.
var Operations = []string{OpAddComment, OpAddLabels, OpAddReaction, OpListComments, OpListLabels,
	OpListReviewComments, OpListReviews, OpRemoveLabel, OpRequestReviewers, OpSetLabels}

// Reactions are the contents GitHub accepts for a reaction.
var Reactions = []string{"+1", "-1", "confused", "eyes", "heart", "hooray", "laugh", "rocket"}

// Options configure New. The zero value is the auto transport on
// github.com, reading GH_TOKEN or GITHUB_TOKEN from the process
// environment.
type Options struct {
	// Transport is auto (the default), api or cli.
	Transport string
	// TokenEnv names the environment variables a token is read from, in
	// order; empty means DefaultTokenEnv.
	TokenEnv []string
	// BaseURL is the REST API's root; "" means DefaultBaseURL. Plain http
	// is accepted for a loopback host only: a token is never sent in the
	// clear across a network.
	BaseURL string
	// Binary is the gh CLI, a name looked up on PATH or a path; "" means
	// DefaultBinary.
	Binary string
	// Env reads the environment; nil means os.Getenv.
	Env func(string) string
	// LookPath finds Binary; nil means exec.LookPath.
	LookPath func(string) (string, error)
	// HTTPClient sends the api transport's requests; nil means a client
	// of its own. Its own Timeout, if any, applies too.
	HTTPClient *http.Client
	// RequestTimeout bounds one request (or one gh run); zero means 20s.
	RequestTimeout time.Duration
	// CallTimeout bounds one call through Call, retries and waits
	// included; zero means 2 minutes. The typed methods take a context
	// instead.
	CallTimeout time.Duration
	// MaxAttempts is how many times one request is tried when GitHub
	// limits its rate or (for a request that can be repeated) fails
	// transiently; zero means 4.
	MaxAttempts int
	// MaxWait is the longest one request waits in all before retrying;
	// a rate limit that would need longer is an error naming it. Zero
	// means one minute.
	MaxWait time.Duration
	// Sleep waits d or until ctx is done; nil sleeps. Tests pass a fake.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock a primary rate limit's reset is compared with; nil
	// means time.Now.
	Now func() time.Time
	// StateRoot is the operator's state root, where Identity keeps the
	// login the credential authenticates (IdentityFile); "" keeps it in
	// memory only.
	StateRoot string
	// Log receives what the integration notes on its own (the identity
	// file being unreadable); nil discards it.
	Log *slog.Logger
}

// Integration is the GitHub integration: the outbound hooks' add-comment
// and set-labels, check's list-comments, and what the webhook side needs
// (reactions, review requests). It implements graph.Integration.
//
// It is built once, from the operator's settings, and is safe for
// concurrent use. An Integration with no usable transport (no token, no
// gh) is still an Integration: every call fails with an error wrapping
// graph.ErrIntegrationUnavailable and naming what is missing, so that
// outbound hooks degrade rather than block; Available says so up front.
type Integration struct {
	transport   transport // nil when unavailable
	unavailable error
	callTimeout time.Duration
	stateRoot   string
	log         *slog.Logger
	now         func() time.Time
	self        *self
}

var _ graph.Integration = (*Integration)(nil)

// New builds the integration opts describe. Only settings that cannot be
// right are errors (an unknown transport, a base URL that is not one);
// a missing token or binary makes an unavailable integration.
func New(opts Options) (*Integration, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	in := &Integration{callTimeout: o.CallTimeout, stateRoot: o.StateRoot, log: o.Log, now: o.Now, self: newSelf()}
	token, tokenVar := "", ""
	for _, name := range o.TokenEnv {
		if v := strings.TrimSpace(o.Env(name)); v != "" {
			token, tokenVar = v, name
			break
		}
	}
	binary, binErr := o.LookPath(o.Binary)
	noToken := fmt.Sprintf("set %s", orList(o.TokenEnv))
	noBinary := fmt.Sprintf("put %s on PATH (integrations.github.cli.binary)", o.Binary)
	switch {
	case o.Transport == TransportAPI && token == "":
		in.unavailable = unavailable("the GitHub api transport has no token: %s (integrations.github.api.tokenEnv)", noToken)
	case o.Transport == TransportCLI && binErr != nil:
		in.unavailable = unavailable("the GitHub cli transport needs %s: %s, or use transport api with a token", o.Binary, noBinary)
	case o.Transport == TransportAuto && token == "" && binErr != nil:
		in.unavailable = unavailable("no GitHub transport: %s for the api transport, or %s for the cli transport", noToken, noBinary)
	case token != "" && o.Transport != TransportCLI:
		in.transport = newAPI(o, token, tokenVar)
	default:
		in.transport = newCLI(o, binary)
	}
	return in, nil
}

// unavailableError is an integration that cannot make calls: it is
// graph.ErrIntegrationUnavailable, saying what is missing in its own words.
type unavailableError string

func unavailable(format string, args ...any) error {
	return unavailableError(fmt.Sprintf(format, args...))
}

func (e unavailableError) Error() string        { return string(e) }
func (e unavailableError) Is(target error) bool { return target == graph.ErrIntegrationUnavailable }

func (o Options) withDefaults() (Options, error) {
	if o.Transport == "" {
		o.Transport = TransportAuto
	}
	if !slices.Contains([]string{TransportAuto, TransportAPI, TransportCLI}, o.Transport) {
		return o, &graph.ConfigError{Key: "integrations.github.transport", Msg: fmt.Sprintf("got %q, want auto, api or cli", o.Transport)}
	}
	if len(o.TokenEnv) == 0 {
		o.TokenEnv = DefaultTokenEnv
	}
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	if _, err := parseBaseURL(o.BaseURL); err != nil {
		return o, &graph.ConfigError{Key: "integrations.github.api.baseUrl", Msg: err.Error()}
	}
	if o.Binary == "" {
		o.Binary = DefaultBinary
	}
	if o.Env == nil {
		o.Env = func(string) string { return "" }
	}
	if o.LookPath == nil {
		o.LookPath = exec.LookPath
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 20 * time.Second
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 2 * time.Minute
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 4
	}
	if o.MaxWait <= 0 {
		o.MaxWait = time.Minute
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = discardLog
	}
	return o, nil
}

// parseBaseURL checks an API root: absolute, https, or http to a loopback
// host, with no query, fragment or credentials.
func parseBaseURL(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(s, "/"))
	switch {
	case err != nil:
		return nil, fmt.Errorf("got %q, want an absolute https URL", s)
	case u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return nil, fmt.Errorf("got %q, want an absolute https URL such as %s", s, DefaultBaseURL)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("got %q, want a URL with no credentials, query or fragment", s)
	case u.Scheme == "http" && !loopback(u.Hostname()):
		return nil, fmt.Errorf("got %q: plain http would send the token in the clear; use https", s)
	}
	return u, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func orList(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// FromConfig builds the integration the operator's CLI config declares
// under integrations.github (transport, api.tokenEnv, api.baseUrl,
// cli.binary), each key's default when it is absent, the block's too,
// keeping its identity in the config's state root. env reads the
// environment the token comes from.
//
// The API root is, first to last: api.baseUrl; the API of
// routing.workspace.defaultHost; under GitHub Actions, $GITHUB_API_URL;
// api.github.com.
func FromConfig(cli *policy.CLIConfig, env func(string) string) (*Integration, error) {
	block, _ := cli.Integrations()["github"].(map[string]any)
	api, _ := block["api"].(map[string]any)
	bin, _ := block["cli"].(map[string]any)
	opts := Options{Env: env, StateRoot: cli.StateRoot()}
	opts.Transport, _ = block["transport"].(string)
	opts.BaseURL, _ = api["baseUrl"].(string)
	// The one GitHub host the operator works with: a defaultHost that is
	// no host name is refused, and one given without a base URL names a
	// GitHub Enterprise Server whose API is there too, not on github.com.
	host, err := cli.GitHubHost()
	if err != nil {
		return nil, err
	}
	if opts.BaseURL == "" && host != policy.DefaultGitHubHost {
		opts.BaseURL = policy.GitHubAPIBase(host)
	}
	if !cli.NamesGitHubHost() {
		base, err := actionsAPIURL(env)
		if err != nil {
			return nil, err
		}
		opts.BaseURL = base
	}
	opts.Binary, _ = bin["binary"].(string)
	switch v := api["tokenEnv"].(type) {
	case string: // the original also took one name
		opts.TokenEnv = []string{v}
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok && s != "" {
				opts.TokenEnv = append(opts.TokenEnv, s)
			}
		}
	}
	in, err := New(opts)
	var ce *graph.ConfigError
	if errors.As(err, &ce) {
		ce.File = cli.Path
	}
	return in, err
}

// actionsAPIURL is the REST API root a GitHub Actions runner names in
// $GITHUB_API_URL (https://api.github.com, or a GitHub Enterprise
// Server's https://HOST/api/v3), when env is a runner's (GITHUB_ACTIONS
// is true); "" elsewhere. It is where the job's token is good, so a job
// on an Enterprise Server reads its own instance with no CLI config. A
// URL the integration would not call is an error naming the variable.
//
// Departure from the original (docs/compatibility.md#the-api-root-under-github-actions): under Actions the runner's $GITHUB_API_URL is the API root.
func actionsAPIURL(env func(string) string) (string, error) {
	if env == nil || env("GITHUB_ACTIONS") != "true" {
		return "", nil
	}
	base := strings.TrimSpace(env("GITHUB_API_URL"))
	if base == "" {
		return "", nil
	}
	if _, err := parseBaseURL(base); err != nil {
		return "", fmt.Errorf("$GITHUB_API_URL: %w", err)
	}
	return base, nil
}

// Configured is the integration a verb that moves a work item hands its
// outbound hooks: the GitHub integration when the CLI config declares
// integrations.github, else graph.NoIntegration, so that a machine or CI
// job with no such block never calls out.
func Configured(cli *policy.CLIConfig, env func(string) string) (graph.Integration, error) {
	if cli.Integration() != policy.IntegrationGitHub {
		return graph.NoIntegration{}, nil
	}
	return FromConfig(cli, env)
}

// Name is "github".
func (in *Integration) Name() string { return policy.IntegrationGitHub }

// Transport is the transport calls go through, "api" or "cli"; "" when
// the integration is unavailable.
func (in *Integration) Transport() string {
	if in.transport == nil {
		return ""
	}
	return in.transport.name()
}

// Available is nil when the integration can make calls, else the error
// every call would fail with: it wraps graph.ErrIntegrationUnavailable
// and names what is missing.
func (in *Integration) Available() error { return in.unavailable }

// Comment is one comment on an issue or pull request.
type Comment struct {
	ID        int64
	Author    string
	Body      string
	CreatedAt time.Time
	// UpdatedAt is when it was last edited; zero when GitHub said not.
	UpdatedAt time.Time
}

// Ref is an issue or pull request: github:OWNER/REPO#NUMBER, the
// ingress's ref.
type Ref = channels.Ref

// ParseRef reads a work item ref strictly (see graph.ParseRef).
func ParseRef(s string) (Ref, error) { return channels.ParseRef(s) }

// issuePath is the path of r's issue REST resource, below the API root.
func issuePath(r Ref) string {
	return fmt.Sprintf("/repos/%s/%s/issues/%d", r.Owner, r.Repo, r.Number)
}

// Error is a GitHub call that failed: the operation, the ref it was for,
// the request and what GitHub answered. It never carries the token.
type Error struct {
	Op  string
	Ref string
	// Method and Path are the request's, Path below the API root.
	Method, Path string
	// Status is the HTTP status GitHub answered, 0 when none arrived.
	Status int
	// Msg says what went wrong: GitHub's message, or the transport's.
	Msg string
	// RateLimited is set when the call failed on a rate limit it could
	// not wait out.
	RateLimited bool
	Err         error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "github %s", e.Op)
	if e.Ref != "" {
		b.WriteString(" " + e.Ref)
	}
	if e.Method != "" {
		fmt.Fprintf(&b, ": %s %s", e.Method, e.Path)
	}
	if e.Status != 0 {
		fmt.Fprintf(&b, ": %d %s", e.Status, http.StatusText(e.Status))
	}
	if e.Msg != "" {
		b.WriteString(": " + e.Msg)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Refused reports whether GitHub refused the credential what it asked
// for: 401 (no such token, or an expired one) or 403 (one that may not
// read or write it, as a job's token the workflow's permissions do not
// grant), but not a rate limit, which a later call may get past. It is
// what policy.Refusal asks.
func (e *Error) Refused() bool {
	return !e.RateLimited && (e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden)
}

// Transient reports whether err is a GitHub call that failed in a way a
// later attempt may not: a 5xx answer, no answer at all (a dropped
// connection, a timeout, an answer that could not be read), or a rate limit
// the call could not wait out. Such a call may also have taken effect: a
// POST answered 502 may have posted. A refusal (another 4xx), a missing
// transport or a parameter the call was not given is not transient.
func Transient(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	switch {
	case e.RateLimited, e.Status >= 500:
		return true
	case e.Status == 0:
		// Method is set once a request was made; Err is what went wrong
		// on the way.
		return e.Method != "" && e.Err != nil
	}
	return false
}

// Call performs op for a hook (graph.Integration). Params and results:
//
//	add-comment       {ref, body, relay?}              -> {id, author, body, created_at}
//	list-comments     {ref}                            -> {comments: [{id, author, body, created_at, updated_at?, self?}]}
//	list-reviews      {ref}                            -> {reviews: [{id, author, body, state, submitted_at?, self?}]}  ref is the pull request
//	list-review-comments {ref}                         -> {comments: [...]}  as list-comments, the comments on the pull request's diff
//	add-labels        {ref, labels}                    -> {labels}  the issue's labels after
//	set-labels        {ref, labels, replacePrefix?}    -> {labels}  add, then take off the other labels with the prefix
//	remove-label      {ref, label}                     -> {labels}
//	list-labels       {ref}                            -> {labels}  (get-labels is the original's name for it)
//	request-reviewers {ref, reviewers, teamReviewers?} -> {}        ref is the pull request
//	add-reaction      {ref, content, commentId?}       -> {}        on the comment, else on the issue
//
// add-comment posts the body marked as the-loop's own (AddComment); with
// relay true it posts a ledger record of a person's words unmarked, and
// refuses any other body (AddRelay). The listings set self on each entry
// whose author is the integration's own Identity, and fail when that
// cannot be learned: the-loop's own comments could not be told from
// people's.
//
// Labels and logins are lists of strings; created_at, updated_at and
// submitted_at are RFC 3339; a review's state is GitHub's, upper case. Any
// other op is an error wrapping errors.ErrUnsupported. Each call is bounded
// by Options.CallTimeout.
// Performs reports whether Call takes op: those Operations lists.
func (in *Integration) Performs(op string) bool {
	return slices.Contains(Operations, op) || op == opGetLabels
}

var _ graph.Performer = (*Integration)(nil)

func (in *Integration) Call(op string, params map[string]any) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), in.callTimeout)
	defer cancel()
	refText, _ := params["ref"].(string)
	fail := func(msg string) (map[string]any, error) {
		return nil, &Error{Op: op, Ref: refText, Msg: msg}
	}
	if !in.Performs(op) {
		return nil, fmt.Errorf("github %s: %w: the GitHub integration performs %s", op, errors.ErrUnsupported, strings.Join(Operations, ", "))
	}
	ref, err := ParseRef(refText)
	if err != nil {
		return fail(err.Error())
	}
	switch op {
	case OpAddComment:
		body, _ := params["body"].(string)
		if strings.TrimSpace(body) == "" {
			return fail("params.body: got nothing, want the comment's text")
		}
		post := in.AddComment
		switch relay := params[ParamRelay].(type) {
		case nil:
		case bool:
			if relay {
				post = in.AddRelay
			}
		default:
			return fail("params." + ParamRelay + ": want true or false")
		}
		c, err := post(ctx, ref, body)
		if err != nil {
			return nil, err
		}
		return commentMap(c, ""), nil
	case OpListComments, OpListReviewComments:
		me, err := in.Identity(ctx)
		if err != nil {
			return nil, fmt.Errorf("github %s %s: the token's own login is not known, so the-loop's comments cannot be told from people's: %w", op, ref, err)
		}
		list := in.Comments
		if op == OpListReviewComments {
			list = in.ReviewComments
		}
		cs, err := list(ctx, ref)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(cs))
		for i, c := range cs {
			out[i] = commentMap(c, me)
		}
		return map[string]any{"comments": out}, nil
	case OpListReviews:
		me, err := in.Identity(ctx)
		if err != nil {
			return nil, fmt.Errorf("github %s %s: the token's own login is not known, so the-loop's reviews cannot be told from people's: %w", op, ref, err)
		}
		rs, err := in.Reviews(ctx, ref)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(rs))
		for i, r := range rs {
			out[i] = reviewMap(r, me)
		}
		return map[string]any{"reviews": out}, nil
	case OpAddLabels, OpSetLabels:
		labels, ok := stringList(params["labels"])
		if !ok || len(labels) == 0 {
			return fail("params.labels: want a non-empty list of label names")
		}
		prefix, _ := params["replacePrefix"].(string)
		if op == OpAddLabels {
			prefix = ""
		}
		return labelsResult(in.SetLabels(ctx, ref, labels, prefix))
	case OpRemoveLabel:
		label, _ := params["label"].(string)
		if label == "" {
			return fail("params.label: got nothing, want a label name")
		}
		return labelsResult(in.RemoveLabel(ctx, ref, label))
	case OpListLabels, opGetLabels:
		return labelsResult(in.Labels(ctx, ref))
	case OpRequestReviewers:
		users, _ := stringList(params["reviewers"])
		teams, _ := stringList(params["teamReviewers"])
		if len(users)+len(teams) == 0 {
			return fail("params.reviewers: want a non-empty list of logins (or params.teamReviewers of team slugs)")
		}
		return emptyResult(in.RequestReviewers(ctx, ref, users, teams))
	case OpAddReaction:
		content, _ := params["content"].(string)
		id, ok := intParam(params[ParamCommentID])
		if !ok {
			return fail("params." + ParamCommentID + ": want a positive comment id")
		}
		return emptyResult(in.AddReaction(ctx, ref, id, content))
	}
	return nil, fmt.Errorf("github %s: %w", op, errors.ErrUnsupported)
}

// commentMap is c as Call answers it; self is set when me, the
// integration's own login, wrote it.
func commentMap(c Comment, me string) map[string]any {
	m := map[string]any{"id": c.ID, "author": c.Author, "body": c.Body, "created_at": c.CreatedAt.UTC().Format(time.RFC3339)}
	if me != "" && strings.EqualFold(c.Author, me) {
		m["self"] = true
	}
	if !c.UpdatedAt.IsZero() {
		m["updated_at"] = c.UpdatedAt.UTC().Format(time.RFC3339)
	}
	return m
}

// reviewMap is r as Call answers it; self is set when me, the
// integration's own login, wrote it.
func reviewMap(r Review, me string) map[string]any {
	m := map[string]any{"id": r.ID, "author": r.Author, "body": r.Body, "state": r.State}
	if me != "" && strings.EqualFold(r.Author, me) {
		m["self"] = true
	}
	if !r.SubmittedAt.IsZero() {
		m["submitted_at"] = r.SubmittedAt.UTC().Format(time.RFC3339)
	}
	return m
}

func labelsResult(labels []string, err error) (map[string]any, error) {
	if err != nil {
		return nil, err
	}
	out := make([]any, len(labels))
	for i, l := range labels {
		out[i] = l
	}
	return map[string]any{"labels": out}, nil
}

func emptyResult(err error) (map[string]any, error) {
	if err != nil {
		return nil, err
	}
	return map[string]any{}, nil
}

func stringList(v any) ([]string, bool) {
	switch x := v.(type) {
	case []string:
		return x, true
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok || s == "" {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, v == nil
}

// intParam reads an optional comment id: absent is 0, true.
func intParam(v any) (int64, bool) {
	switch x := v.(type) {
	case nil:
		return 0, true
	case int:
		return int64(x), x > 0
	case int64:
		return x, x > 0
	case float64:
		return int64(x), x > 0 && x == float64(int64(x))
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		return n, err == nil && n > 0
	}
	return 0, false
}

var _ policy.Refusal = (*Error)(nil)
