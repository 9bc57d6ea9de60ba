package policy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// UseBase makes ctx.changed the repository-relative paths that differ
// between base (a git revision) and the working tree, for every hook this
// engine runs. It is the one place check reads anything outside the
// repository's files: a read-only `git diff`, run once, and only when the
// user names a base. Without one, ctx.changed is None.
func (e *Engine) UseBase(base string) error {
	if base == "" {
		e.changed = nil
		return nil
	}
	if strings.HasPrefix(base, "-") {
		return fmt.Errorf("--base: got %q, want a git revision", base)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "-C", e.Root, "diff", "--name-only", "-z", "--no-renames", base, "--")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("--base %s: git diff failed: %s", base, strings.TrimSpace(stderr.String()))
		}
		return fmt.Errorf("--base %s: %w", base, err)
	}
	paths := []string{}
	for _, p := range strings.Split(out.String(), "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	e.changed = paths
	return nil
}
