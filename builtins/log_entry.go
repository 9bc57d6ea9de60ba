package builtins

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"time"

	"github.com/the-loop/the-loop/graph"
)

func init() { register("log-entry", logEntry{now: time.Now}) }

// executionLog is the work item's running log, in its spec folder.
const executionLog = "execution-log.md"

// logEntry appends a checkpoint for the node boundary being crossed to the
// work item's execution-log.md:
//
//	### 2026-05-01 — entry design
//
//	- **Node:** design
//	- **Boundary:** entry
//
// The date is the local calendar date. A work item without an execution log
// is skipped: the hook never creates one. The append is a whole-file atomic
// replace (temporary file, fsync, rename), so a crash leaves the old log or
// the new one, never half of either; the runtime's state lock serialises
// writers. A symlinked log is refused rather than followed out of the spec
// folder.
//
// Data: appended (bool); error when the log could not be written.
type logEntry struct {
	now func() time.Time
}

var (
	_ graph.Hook         = logEntry{}
	_ graph.ParamChecker = logEntry{}
)

const logEntryName = "log-entry"

func (logEntry) CheckParams(params map[string]any) error {
	return withRules{}.verify(logEntryName, params)
}

func (h logEntry) Run(ctx *graph.Context) (graph.Result, error) {
	const name = logEntryName
	if ctx.ReadOnly {
		return graph.Skip(name, readOnlyReason), nil
	}
	if ctx.WorkItem.Dir == "" || ctx.Checkout == nil {
		return graph.Skip(name, "no execution log for this work item"), nil
	}
	rel := path.Join(ctx.WorkItem.Dir, executionLog)
	info, err := ctx.Checkout.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return graph.Skip(name, "no execution log for this work item"), nil
	case err != nil:
		return degradedWith(name, err, map[string]any{"appended": false}), nil
	case info.Mode()&fs.ModeSymlink != 0:
		// Departure from the original (docs/compatibility.md#a-link-out-of-the-spec-folder-is-not-followed-by-log-entry-or-publish-artifact): a symlinked log is refused, not followed.
		return degradedWith(name, fmt.Errorf("%s is a symbolic link; refusing to follow it", rel), map[string]any{"appended": false}), nil
	case !info.Mode().IsRegular():
		return graph.Skip(name, "no execution log for this work item"), nil
	}
	now := time.Now
	if h.now != nil {
		now = h.now
	}
	node, boundary := obNodeID(ctx), string(ctx.Boundary)
	entry := fmt.Sprintf("\n### %s — %s %s\n\n- **Node:** %s\n- **Boundary:** %s\n",
		now().Format(time.DateOnly), boundary, node, node, boundary)
	if err := appendAtomically(ctx, rel, info.Mode().Perm(), entry); err != nil {
		obWarn(ctx, "could not append to the execution log", "path", rel, "error", err)
		return degradedWith(name, err, map[string]any{"appended": false}), nil
	}
	return graph.Pass(name, map[string]any{"appended": true}), nil
}

// appendAtomically replaces rel with its current content plus text,
// atomically (see repo.Checkout.WriteFile).
func appendAtomically(ctx *graph.Context, rel string, perm fs.FileMode, text string) error {
	old, err := ctx.Files.ReadFile(rel)
	if err != nil {
		return err
	}
	return writeArtifact(ctx, rel, append(slices.Clip(old), text...), perm)
}
