package graph

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"unicode/utf8"

	"github.com/the-loop/the-loop/repo"
)

// Status is what a hook decided about its node. Only these four exist; a hook
// returning anything else is a programming error that RunChain turns into a
// non-retriable block.
type Status string

const (
	StatusPass  Status = "pass"
	StatusBlock Status = "block"
	StatusWait  Status = "wait"
	// StatusSkip is not a decision: the hook declined to look, so the chain
	// carries on to the hooks after it.
	StatusSkip Status = "skip"
)

// Valid reports whether s is one of the four statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusPass, StatusBlock, StatusWait, StatusSkip:
		return true
	}
	return false
}

// Outcomes edges route on. A hook declares one in Result.Data["outcome"];
// otherwise a passing chain routes on OutcomePass.
const (
	OutcomePass                 = "pass"
	OutcomeSkipped              = "skipped"
	OutcomeSelected             = "selected"
	OutcomeApproved             = "approved"
	OutcomeApprovedWithComments = "approved-with-comments"
	OutcomeChangesRequested     = "changes-requested"
	OutcomeDefined              = "defined"
	OutcomeMoreWork             = "more-work"
	OutcomeDone                 = "done"
)

// Severities a Message may carry: the three every CI format knows.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
	SeverityNotice  = "notice"
	// SeverityInfo is the original tool's name for a notice, accepted
	// wherever a severity is read and reported as SeverityNotice.
	SeverityInfo = "info"
)

// NormalSeverity is s as findings report it: "info" is a notice, and an
// empty or unknown severity is fallback.
func NormalSeverity(s, fallback string) string {
	switch s {
	case SeverityError, SeverityWarning, SeverityNotice:
		return s
	case SeverityInfo:
		return SeverityNotice
	}
	return fallback
}

// Message is one finding, addressed to whoever has to act on it. Its text is
// composed by the hook from its own vocabulary plus paths; never from the
// untrusted text of a comment, because blocking messages are fed back to the
// agent that is the subject of the gate.
//
// Path, Line and Column locate it where known: Path repository-relative,
// Line and Column counted from 1 (0 is unknown), Column in characters
// (Unicode code points), as an editor shows it.
type Message struct {
	Text     string `json:"text"`
	Path     string `json:"path"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	Severity string `json:"severity"`
}

// Render is the one-line form of check's messages, lastBlock and a parked
// reason: the original tool's "text (path)". The line is left out, so that
// these strings stay the original's for the same finding (a repeated block
// is recognised by its text); findings carry it.
func (m Message) Render() string {
	if m.Path != "" {
		return m.Text + " (" + m.Path + ")"
	}
	return m.Text
}

// Cut is s cut to at most n bytes on a character boundary, marked "…"
// when anything was cut: how a message's text is kept within a bound.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:boundary(s, n)] + "…"
}

// boundary is the largest i <= n, n < len(s), at which a character of s
// starts.
func boundary(s string, n int) int {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// Errorf builds an error-severity message.
func Errorf(format string, args ...any) Message {
	return Message{Text: fmt.Sprintf(format, args...), Severity: SeverityError}
}

// Result is the hook contract's output: Status is what moves (or does not
// move) the work item. Data carries facts for later hooks and for the runtime;
// Data["outcome"] is a routing declaration, and Data["error"] on a passing
// result marks a best-effort hook that degraded.
type Result struct {
	Status    Status         `json:"status"`
	Hook      string         `json:"hook"`
	Messages  []Message      `json:"messages"`
	Data      map[string]any `json:"data"`
	Retriable bool           `json:"retriable"`
}

// Pass is a satisfied result carrying optional data.
func Pass(hook string, data map[string]any) Result {
	return Result{Status: StatusPass, Hook: hook, Data: data, Retriable: true}
}

// Block reports every unmet requirement at once, so the agent can repair them
// in one round.
func Block(hook string, msgs ...Message) Result {
	return Result{Status: StatusBlock, Hook: hook, Messages: msgs, Retriable: true}
}

// Wait keeps a gate open; reason, when given, says what it waits for.
func Wait(hook, reason string) Result {
	r := Result{Status: StatusWait, Hook: hook, Retriable: true}
	if reason != "" {
		r.Messages = []Message{{Text: reason, Severity: SeverityNotice}}
	}
	return r
}

// Skip declines to judge; reason, when given, says why.
func Skip(hook, reason string) Result {
	r := Result{Status: StatusSkip, Hook: hook, Retriable: true}
	if reason != "" {
		r.Messages = []Message{{Text: reason, Severity: SeverityNotice}}
	}
	return r
}

// Degraded is how a best-effort outbound hook reports that it could not do its
// job: the chain still passes, the runtime surfaces err as a warning and a
// graph.hook_degraded event.
func Degraded(hook string, err error) Result {
	return Pass(hook, map[string]any{"error": err.Error()})
}

// Outcome is the value edges route on: an explicit Data["outcome"], else the
// status itself.
func (r Result) Outcome() string {
	if s, ok := r.Data["outcome"].(string); ok && s != "" {
		return s
	}
	return string(r.Status)
}

// DeclaredOutcome is Data["outcome"] when the hook set one, else "".
func (r Result) DeclaredOutcome() string {
	s, _ := r.Data["outcome"].(string)
	return s
}

// Render lists the messages as a markdown bullet list.
func (r Result) Render() string {
	lines := make([]string, len(r.Messages))
	for i, m := range r.Messages {
		lines[i] = "- " + m.Render()
	}
	return strings.Join(lines, "\n")
}

// Boundary is where in a node a chain runs.
type Boundary string

const (
	Entry Boundary = "entry"
	Exit  Boundary = "exit"
)

// WorkItem is the item a chain runs for.
type WorkItem struct {
	// Ref is how integrations and the event log name the item
	// (github:owner/repo#109); the bare ID when nothing better is known.
	Ref string
	// ID is the spec folder's name.
	ID string
	// Dir is the spec folder, repository-relative and slash-separated.
	// Read and write under it through the Context's Files and Checkout.
	Dir      string
	Tags     []string
	RiskTier int
	// CurrentNode is the node the item's state points at: the loop's start
	// for an item with no state yet. A hook at another node learns from it
	// where the item is.
	CurrentNode string
}

// Comment is one inbound reply handed to a gate.
type Comment struct {
	Author string `json:"author"`
	Body   string `json:"body"`
	// Review is the state of a pull request review the comment is
	// (GitHub's "approved", "changes_requested", "commented"), "" for an
	// ordinary comment. A review's state is the reviewer's decision as
	// they chose it from GitHub's menu; the gates read it before the body.
	Review string `json:"review,omitempty"`
	// Self is set when the integration that read the comment says its own
	// identity posted it: the login of the credential the-loop posts with.
	// Such a comment is the-loop's own, marker or not, unless it is a
	// ledger record of a person's words (see builtins.IsSelfAuthoredComment).
	Self bool `json:"self,omitempty"`
}

// Event is the inbound event that prompted an advance: the comments a human
// gate may classify. Nil under check, which is why gates read "wait" there.
type Event struct {
	Comments []Comment `json:"comments"`
}

// Settings are the runtime values hooks read, assembled by the policy layer
// from the harness and CLI configs.
type Settings struct {
	// AuthorizedUsers are the logins whose comments a gate may read at all.
	AuthorizedUsers []string
	// PhaseLabelPrefix prefixes the phase label set-phase-label applies.
	PhaseLabelPrefix string
	// OriginRepo is owner/name from ticketing.github, "" when unknown.
	OriginRepo string
	// RepoInitialized is true when the repository carries a harness config.
	RepoInitialized bool
	// ExecuteKeyword overrides the phase-selection "execute" keyword.
	ExecuteKeyword string
	// Notifications is the harness config's notifications block.
	Notifications map[string]any
}

// Context is everything a hook may see. Hooks must treat it as read-only; the
// runtime builds a fresh one per chain.
type Context struct {
	WorkItem WorkItem
	Node     *Node
	Boundary Boundary
	// Checkout is the repository, confined: hooks that write do it here,
	// by repository-relative path.
	Checkout *repo.Checkout
	// Params is this chain entry's with: mapping (never nil).
	Params map[string]any
	// Prepared is what the hook's PrepareParams made of Params when the
	// graph compiled; nil when the hook prepares nothing, or when Params
	// came another way (a trial's own with:).
	Prepared any
	// Results holds the results of the hooks earlier in this chain.
	Results []Result
	// Event is the inbound event for a human gate, nil when none.
	Event *Event
	// Recorded is what the graph state records of a human gate's answer,
	// set by Status only when it read no replies (none were asked for, or
	// they could not be read) and the item has left the gate. It is never
	// an answer: a gate may only say that one is recorded.
	Recorded *Recorded
	// SkippedArtifacts names artifacts whose authoring node was
	// declared skipped: a gate treats their absence as planned.
	SkippedArtifacts map[string]bool
	// Decisions are durable decisions recorded in the graph state.
	Decisions map[string]any
	// Surface is where this item collaborates ("", "work-item", "pull-request").
	Surface string
	// Graph is the compiled loop being walked.
	Graph *Graph
	// Settings are the runtime values assembled from the configs.
	Settings Settings
	// Config is the repository's harness config document, as parsed.
	Config map[string]any
	// Integration performs outbound calls; never nil when run by a Runtime.
	Integration Integration
	// Changed lists the repository-relative paths changed against the
	// base the caller named (check --base), sorted; nil when none was named.
	Changed []string
	// Files reads the checkout's files by repository-relative path; under
	// a read-only evaluation it is a cache shared by every hook of the
	// item. Hooks read through it, never from disk.
	Files *Files
	// ReadOnly is set under check and status: a hook must not write a file,
	// spawn a process or call out. Hooks that would skip instead.
	ReadOnly bool
	// Log receives diagnostics; never nil when run by RunChain.
	Log *slog.Logger
	// Trace, when set, receives what the hook printed and spent: an
	// author running one rule to see what it does (hooks run, hooks test).
	// A hook that has nothing to say leaves it as it is.
	Trace *HookTrace
	// Budget bounds the rule time of every repository hook of the
	// evaluation together (see Budget); nil is unlimited.
	Budget *Budget

	// reuse, when set, is where RunChain puts the context of each shipped
	// hook it runs, one after another: a read-only evaluation runs a
	// chain at every node of every item, and a fresh copy per hook was a
	// twentieth of its allocations. A repository hook always gets a
	// fresh copy, since one that outlived its deadline may still read it.
	reuse *Context
}

// HookTrace is what one hook call printed and spent, for its author.
type HookTrace struct {
	// Prints are the hook's print() lines in order, each prefixed with
	// where it printed (file:line: text).
	Prints []string `json:"prints"`
	// Steps is the work the call did in the hook's own unit (Starlark
	// execution steps): the same inputs always cost the same, so a rule
	// that gets slower shows in review.
	Steps uint64 `json:"steps"`
	// Err is the error the hook failed with, one line; "" when it returned
	// a result.
	Err string `json:"error,omitempty"`
	// Backtrace is the failing call's stack, innermost last, when the hook
	// can tell it.
	Backtrace string `json:"backtrace,omitempty"`
}

// Hook is the one contract every hook implements, shipped or repository. A
// returned error is a broken check, and a broken check is never a pass:
// RunChain turns it into a non-retriable block. A shipped hook must not
// keep ctx, or use it from another goroutine, once Run has returned:
// RunChain may hand the same Context, refilled, to the next hook.
type Hook interface {
	Run(ctx *Context) (Result, error)
}

// HookFunc adapts a function to Hook.
type HookFunc func(ctx *Context) (Result, error)

// Run calls f.
func (f HookFunc) Run(ctx *Context) (Result, error) { return f(ctx) }

// ParamPreparer is implemented by hooks that decode their with:
// parameters into a form of their own: once, when the graph compiles and
// after CheckParams passed, rather than at every node of every item. The
// hook finds it in Context.Prepared, and must still decode Params itself
// when Prepared is nil.
type ParamPreparer interface {
	PrepareParams(params map[string]any) any
}

// ParamChecker is implemented by hooks whose with: parameters can be checked
// when the graph compiles, so a typo is a startup failure rather than a
// surprise three nodes into a walk. The returned error should name the key.
type ParamChecker interface {
	CheckParams(params map[string]any) error
}

// Registry resolves shipped hook names.
type Registry interface {
	Lookup(name string) (Hook, bool)
	// Names lists every registered name, sorted.
	Names() []string
}

// ExtensionPrefix starts every repository hook name and no shipped one.
const ExtensionPrefix = "x-"

// IsExtension reports whether name is in the repository namespace.
func IsExtension(name string) bool { return strings.HasPrefix(name, ExtensionPrefix) }

// Integration performs an outbound operation (add-comment, set-label, …) for
// a hook. Implementations must be safe for concurrent use.
type Integration interface {
	Name() string
	Call(op string, params map[string]any) (map[string]any, error)
}

// Performer is an Integration that can say, without calling out, whether
// it performs op at all: what lets a read-only evaluation predict a hook
// whose answer depends only on that.
type Performer interface {
	Performs(op string) bool
}

// ErrIntegrationUnavailable is returned by an integration that cannot perform
// calls at all (the none integration, or a missing credential). Outbound hooks
// degrade on it rather than blocking.
var ErrIntegrationUnavailable = errors.New("no integration configured")

// NoIntegration is the none integration: every call is unavailable.
type NoIntegration struct{}

func (NoIntegration) Name() string { return "none" }

// Performs reports false: the none integration performs nothing.
func (NoIntegration) Performs(string) bool { return false }

func (NoIntegration) Call(string, map[string]any) (map[string]any, error) {
	return nil, errNone
}

// errNone is ErrIntegrationUnavailable, said of the none integration.
var errNone error = &unavailableError{ErrIntegrationUnavailable.Error() + ": the none integration makes no outbound calls"}

// unavailableError is what fmt.Errorf("%w: ...", ErrIntegrationUnavailable)
// makes, built without fmt: errNone is made at package initialisation, in
// every process, where fmt.Errorf cost more than the rest of the package's
// initialisation.
type unavailableError struct{ msg string }

func (e *unavailableError) Error() string { return e.msg }
func (e *unavailableError) Unwrap() error { return ErrIntegrationUnavailable }
