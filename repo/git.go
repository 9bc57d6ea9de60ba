package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
)

// ErrNotGit is wrapped by the *GitError of a checkout that is not inside a
// git work tree.
var ErrNotGit = errors.New("not in a git repository")

// GitError is a git operation that failed, said in one line: what is
// wrong, then what to do about it. It never carries git's own multi-line
// usage text.
type GitError struct {
	Rev  string // the revision asked about; "" when none is involved
	Msg  string // what is wrong
	Hint string // what to do about it; "" when there is nothing to suggest
	Err  error  // the cause for errors.Is (ErrNotGit, exec.ErrNotFound); may be nil
}

func (e *GitError) Error() string {
	s := e.Msg
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	// Revisions, paths and git's stderr are not ours: a newline in any
	// of them must not break the one line.
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

func (e *GitError) Unwrap() error { return e.Err }

// maxGitOutput bounds what one git command may print: a listing of a
// tree or of changed paths past it is an attack or an accident, and is
// refused rather than buffered.
const maxGitOutput = 64 << 20

// maxGitStderr is how much of git's stderr is kept for a message; the
// first line is all one uses.
const maxGitStderr = 8 << 10

// Changes lists the paths a change makes against base: what was committed
// since the merge base of base and HEAD, what is staged and what is not,
// and untracked files that are not ignored. Deleted files are included,
// and so is a path a commit changed that the work tree changed back.
// Paths are relative to the checkout root, slash-separated, sorted and
// unique, and only those under the root: the root may be a subdirectory
// of the git work tree.
//
// It runs three git processes, concurrently, and none writes to the
// repository, not even the index's stat cache. On failure it runs more
// to say why, and the error is a *GitError, or wraps ctx's error when
// ctx ended first.
func (c *Checkout) Changes(ctx context.Context, base string) ([]string, error) {
	if err := checkRev(base); err != nil {
		return nil, err
	}
	// git diff against the work tree would see commits and work tree in
	// one process, but it writes the index whenever a file's stat data
	// is stale (as after a CI checkout), and GIT_OPTIONAL_LOCKS does not
	// stop it. So: the commits from the trees alone (base...HEAD diffs
	// from the merge base, so commits on base after the fork are not
	// this change's); the work tree from status, which honours
	// GIT_OPTIONAL_LOCKS; untracked files from ls-files. Statting every
	// tracked file and walking every directory are most of the time, and
	// in one status they would run one after the other.
	cmds := [][]string{
		{"diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", "--relative", base + "...HEAD", "--"},
		{"status", "--short", "--no-branch", "--untracked-files=no", "--no-renames", "--ignore-submodules=dirty", "--", "."},
		{"ls-files", "-z", "--others", "--exclude-standard"},
	}
	outs := make([][]byte, len(cmds))
	errs := make([]error, len(cmds))
	var wg sync.WaitGroup
	for i, args := range cmds {
		wg.Go(func() { outs[i], errs[i] = c.git(ctx, maxGitOutput, args...) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			if i == 0 {
				return nil, c.diagnose(ctx, base, true, err)
			}
			return nil, c.diagnose(ctx, "", false, err)
		}
	}
	paths := appendZ(nil, outs[0])
	paths, err := appendStatus(paths, outs[1])
	if err != nil {
		return nil, err
	}
	paths = appendZ(paths, outs[2])
	slices.Sort(paths)
	return slices.Compact(paths), nil
}

// appendZ appends the NUL-terminated names in out to paths. ls-files
// names an untracked nested repository as a directory, "sub/"; it is the
// path that changed, so it loses the slash.
func appendZ(paths []string, out []byte) []string {
	s := string(out)
	for s != "" {
		var name string
		name, s, _ = strings.Cut(s, "\x00")
		if name = strings.TrimSuffix(name, "/"); name != "" {
			paths = append(paths, name)
		}
	}
	return paths
}

// appendStatus appends the paths git status --short lists, one "XY path"
// a line. Only the short format names paths from the current directory
// (-z would name them from the top of the work tree), so a path holding
// a quote, a backslash, a control or a non-ASCII byte comes C-quoted,
// which is Go's quoting too.
func appendStatus(paths []string, out []byte) ([]string, error) {
	for line := range strings.Lines(string(out)) {
		line = strings.TrimSuffix(line, "\n")
		if len(line) < 4 || line[2] != ' ' {
			return nil, &GitError{Msg: fmt.Sprintf("git status printed %q, want \"XY path\"", line)}
		}
		name := line[3:]
		if strings.HasPrefix(name, `"`) {
			var err error
			if name, err = strconv.Unquote(name); err != nil {
				return nil, &GitError{Msg: fmt.Sprintf("git status printed %q, a path quoted in a way this does not read", line)}
			}
		}
		paths = append(paths, name)
	}
	return paths, nil
}

// checkRev refuses a revision git could take for an option, before any
// git runs.
func checkRev(rev string) error {
	switch {
	case rev == "":
		return &GitError{Msg: "an empty revision", Hint: "name a branch, tag or commit"}
	case strings.HasPrefix(rev, "-"):
		return &GitError{Rev: rev, Msg: fmt.Sprintf("revision %q starts with \"-\"", rev), Hint: "a revision cannot look like an option"}
	}
	return nil
}

// gitFailure is a git command that ran and failed, or did not run; only
// diagnose looks inside it.
type gitFailure struct {
	cmd    string // the subcommand, "diff"
	stderr string // the start of what git said
	err    error  // from exec
}

func (f *gitFailure) Error() string {
	if line := firstLine(f.stderr); line != "" {
		return "git " + f.cmd + ": " + line
	}
	return "git " + f.cmd + ": " + f.err.Error()
}

func (f *gitFailure) Unwrap() error { return f.err }

// git runs git in the checkout root and returns its standard output, of
// at most limit bytes.
func (c *Checkout) git(ctx context.Context, limit int, args ...string) ([]byte, error) {
	// An untrusted tree can hold a bare repository whose config names a
	// program to run; safe.bareRepository keeps git from discovering
	// one. core.fsmonitor would start a daemon or run a hook: a check
	// starts nothing.
	//
	// status names paths from the current directory, quoted the one way
	// appendStatus reads, and without colour, whatever the config says.
	argv := append([]string{"-C", c.root, "-c", "safe.bareRepository=explicit", "-c", "core.fsmonitor=false",
		"-c", "status.relativePaths=true", "-c", "core.quotePath=true", "-c", "color.ui=false"}, args...)
	cmd := exec.CommandContext(ctx, "git", argv...)
	cmd.Env = gitEnv()
	out := &cappedBuffer{limit: limit}
	stderr := &cappedBuffer{limit: maxGitStderr, drop: true}
	cmd.Stdout, cmd.Stderr = out, stderr
	// A grandchild holding the pipes open must not stall a cancelled run.
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	switch {
	case out.over:
		return nil, &GitError{Msg: fmt.Sprintf("git %s printed more than %s", args[0], byteSize(limit)), Hint: "refusing to read more"}
	case err != nil:
		return nil, &gitFailure{cmd: args[0], stderr: string(stderr.buf), err: err}
	}
	return out.buf, nil
}

// localGitEnv is what git itself clears when it runs in another
// repository (git rev-parse --local-env-vars): a hook's GIT_DIR or
// GIT_INDEX_FILE would otherwise make git read some other repository, or
// resolve a relative path from the wrong directory. The repository is the
// one the checkout root is in.
var localGitEnv = []string{
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS",
	"GIT_CONFIG_COUNT", "GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE",
	"GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE", "GIT_INDEX_FILE",
	"GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_PREFIX",
	"GIT_SHALLOW_FILE", "GIT_COMMON_DIR",
}

// gitEnv is the environment git runs in: never prompting for
// credentials, taking no optional lock (so status writes no index
// refresh), fetching no missing object into a partial clone (git 2.45
// and later; a blobless clone would otherwise fetch every blob ls-tree
// -l sizes, one at a time), and speaking the C locale, whose messages
// diagnose can read.
func gitEnv() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return slices.Contains(localGitEnv, k) || strings.HasPrefix(k, "GIT_CONFIG_KEY_") || strings.HasPrefix(k, "GIT_CONFIG_VALUE_")
	})
	return append(env, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_NO_LAZY_FETCH=1", "LC_ALL=C")
}

// cappedBuffer keeps at most limit bytes. Past it, a buffer that drops
// discards the rest quietly (stderr: the start is what matters); one that
// does not fails the write, which closes the pipe and ends git.
type cappedBuffer struct {
	buf   []byte
	limit int
	drop  bool
	over  bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := b.limit - len(b.buf); len(p) > room {
		b.over = true
		if !b.drop {
			return 0, errors.New("output over its limit")
		}
		b.buf = append(b.buf, p[:room]...)
		return len(p), nil
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func byteSize(n int) string {
	if n > 0 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// firstLine is the first non-empty line of git's stderr, without the
// "fatal: " or "error: " git puts before it.
func firstLine(s string) string {
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		for _, p := range []string{"fatal: ", "error: "} {
			line = strings.TrimPrefix(line, p)
		}
		if line != "" {
			return line
		}
	}
	return ""
}

// diagnose turns a failed git command into a *GitError that says why in
// one line. It runs git again to find out, so only failures pay for it.
// rev is the revision the command was given ("" for none); mergeBase
// says the command needed one between rev and HEAD.
func (c *Checkout) diagnose(ctx context.Context, rev string, mergeBase bool, failed error) error {
	var f *gitFailure
	switch {
	case !errors.As(failed, &f):
		return failed // already one line: output over its bound
	case errors.Is(f.err, exec.ErrNotFound):
		return &GitError{Rev: rev, Msg: "git is not installed (not found on PATH)", Hint: "comparing with a git revision needs it", Err: f.err}
	case ctx.Err() != nil:
		return fmt.Errorf("git %s: %w", f.cmd, ctx.Err())
	}
	out, err := c.git(ctx, maxGitStderr, "rev-parse", "--is-inside-work-tree")
	if err != nil || strings.TrimSpace(string(out)) != "true" {
		var g *gitFailure
		switch {
		case err == nil, errors.As(err, &g) && strings.Contains(g.stderr, "not a git repository"):
			return &GitError{Rev: rev, Msg: c.root + " is not in a git repository", Hint: "comparing with a revision needs one", Err: ErrNotGit}
		case g != nil && strings.Contains(g.stderr, "safe.directory"):
			// Git refuses a repository another user owns, as in a CI
			// container, and says how to allow it on a later line.
			return &GitError{Rev: rev, Msg: firstLine(g.stderr), Hint: safeDirectoryHint(g.stderr)}
		case g != nil:
			return &GitError{Rev: rev, Msg: g.Error()}
		}
		return err
	}
	if rev != "" {
		if _, err := c.resolve(ctx, rev); err != nil {
			hint := fetchHint(rev)
			if c.shallow(ctx) {
				hint = shallowHint(rev)
			}
			return &GitError{Rev: rev, Msg: "cannot resolve " + rev, Hint: hint}
		}
		if mergeBase {
			_, err := c.git(ctx, maxGitStderr, "merge-base", rev, "HEAD")
			var exit *exec.ExitError
			// merge-base exits 1, saying nothing, when there is none.
			if errors.As(err, &exit) && exit.ExitCode() == 1 {
				hint := "they share no history: compare with the branch HEAD was made from"
				if c.shallow(ctx) {
					hint = shallowHint(rev)
				}
				return &GitError{Rev: rev, Msg: "no merge base between " + rev + " and HEAD", Hint: hint}
			}
		}
	}
	return &GitError{Rev: rev, Msg: f.Error()}
}

// resolve returns the full hash of the commit rev names.
func (c *Checkout) resolve(ctx context.Context, rev string) (string, error) {
	out, err := c.git(ctx, maxGitStderr, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// shallow reports whether the repository is a shallow clone, whose
// missing history is the usual reason a base cannot be found in CI.
func (c *Checkout) shallow(ctx context.Context) bool {
	out, err := c.git(ctx, maxGitStderr, "rev-parse", "--is-shallow-repository")
	return err == nil && bytes.Equal(bytes.TrimSpace(out), []byte("true"))
}

func shallowHint(rev string) string {
	return "this is a shallow clone: fetch the history of " + rev + " (in GitHub Actions, actions/checkout with fetch-depth: 0)"
}

func fetchHint(rev string) string {
	branch := strings.TrimPrefix(strings.TrimPrefix(rev, "refs/remotes/"), "origin/")
	return "fetch it (git fetch origin " + branch + ") or check the name"
}

// safeDirectoryHint is the command git suggests for a repository it does
// not trust, or a general one.
func safeDirectoryHint(stderr string) string {
	for line := range strings.Lines(stderr) {
		if i := strings.Index(line, "git config --global --add safe.directory"); i >= 0 {
			return "if you trust it: " + strings.TrimSpace(line[i:])
		}
	}
	return "if you trust it, add it to git's safe.directory"
}
