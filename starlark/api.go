package starlark

import (
	"log/slog"
	"time"

	"github.com/the-loop/the-loop/graph"
)

// Module is one declared module: a repository-relative .star file (Path),
// or a dotted name resolved on the operator's hook path (Dotted, "a.b" ->
// a/b.star). File and Line locate the declaration, for errors.
type Module struct {
	Path   string
	Dotted string
	File   string
	Line   int
}

// Label names the module in messages.
func (m Module) Label() string {
	if m.Path != "" {
		return m.Path
	}
	return m.Dotted
}

// Limits bound every hook call (and every module's top level). A zero
// field takes its value from DefaultLimits. See the package documentation
// for how each is enforced.
type Limits struct {
	// Steps is the Starlark step budget per call.
	Steps uint64
	// Deadline is the wall-clock limit per call.
	Deadline time.Duration
	// ReadBytes bounds one ctx.repo.read; ReadTotal all reads of one call.
	ReadBytes, ReadTotal int64
	// Heap bounds the Go heap growth a call may cause before it is
	// stopped, in bytes.
	Heap uint64
}

// DefaultLimits are used where the CLI config says nothing.
var DefaultLimits = Limits{
	Steps:     10_000_000,
	Deadline:  5 * time.Second,
	ReadBytes: 1 << 20,
	ReadTotal: 64 << 20,
	Heap:      256 << 20,
}

// Options configure Load. The zero value is not usable: Repo is required.
type Options struct {
	// Repo is the repository root, absolute. Path modules, load()s and
	// ctx.repo are confined to it (a hook call confines ctx.repo to the
	// graph.Context's Repo when that is set).
	Repo string
	// HookPath lists the directories a dotted module is resolved in, in
	// order; a missing directory is skipped.
	HookPath []string
	Limits   Limits
	// Rules, when set, is where path modules and the files they load()
	// are read instead of Repo: the rules of the base branch, so that the
	// change under review cannot rewrite the rules that judge it. ctx.repo
	// still reads Repo (or the checkout a call is handed). RulesName names
	// it in messages ("origin/main").
	Rules     Sources
	RulesName string
	// Log receives print() output (debug) and diagnostics. When nil, a
	// hook call logs to its graph.Context's Log, and loading discards.
	Log *slog.Logger
	// Budget is the evaluation's rule time that the modules' top levels
	// are charged to, as hook calls are to their graph.Context's; nil is
	// unlimited. A top level it stops fails the load, wrapping
	// graph.ErrBudgetSpent. It is not kept: the hooks Load returns are
	// charged to the budget of the context each call is handed.
	Budget *graph.Budget
}

// withDefaults fills every zero field of l from DefaultLimits.
func (l Limits) withDefaults() Limits {
	if l.Steps == 0 {
		l.Steps = DefaultLimits.Steps
	}
	if l.Deadline <= 0 {
		l.Deadline = DefaultLimits.Deadline
	}
	if l.ReadBytes <= 0 {
		l.ReadBytes = DefaultLimits.ReadBytes
	}
	if l.ReadTotal <= 0 {
		l.ReadTotal = DefaultLimits.ReadTotal
	}
	if l.Heap == 0 {
		l.Heap = DefaultLimits.Heap
	}
	return l
}
