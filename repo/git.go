package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
// base is resolved to a commit once, before anything uses it, and a name
// more than one ref could stand for (a tag "origin/main" beside the
// remote-tracking branch origin/main) is refused rather than guessed. Base
// "HEAD" on a branch with no commit yet means nothing is committed: the
// change is everything staged, unstaged and untracked.
//
// No clean or smudge filter, textconv or diff driver runs, whatever the
// configuration and the checkout's .gitattributes select: git status
// reads a file whose stat data is stale through the clean filter its
// attributes name, and in CI the attributes are the change's to write.
// For the same reason a submodule's new commit is listed whatever the
// checkout's .gitmodules says to ignore.
//
// It runs five git processes: ls-files at once, rev-parse for base and
// config for the filters beside it, then diff and status, which need
// them. None writes to the repository, not even the index's stat cache.
// On failure it runs more to say why, and the error is a *GitError, or
// wraps ctx's error when ctx ended first.
func (c *Checkout) Changes(ctx context.Context, base string) ([]string, error) {
	if err := checkRev(base); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// git diff against the work tree would see commits and work tree in
	// one process, but it writes the index whenever a file's stat data
	// is stale (as after a CI checkout), and GIT_OPTIONAL_LOCKS does not
	// stop it. So: the commits from the trees alone (base...HEAD diffs
	// from the merge base, so commits on base after the fork are not
	// this change's); the work tree from status, which honours
	// GIT_OPTIONAL_LOCKS; untracked files from ls-files. Statting every
	// tracked file and walking every directory are most of the time, and
	// in one status they would run one after the other.
	var (
		wg                  sync.WaitGroup
		diff, status, other []byte
		diffErr, statusErr  error
		otherErr            error
	)
	// ls-files reads no file's content: nothing to wait for.
	wg.Go(func() { other, otherErr = c.git(ctx, maxGitOutput, "ls-files", "-z", "--others", "--exclude-standard") })
	var filters []string
	var filtersErr error
	listed := make(chan struct{})
	go func() {
		defer close(listed)
		filters, filtersErr = c.filterDrivers(ctx)
	}()
	commit, err := c.baseCommit(ctx, base)
	<-listed
	if err == nil && filtersErr != nil {
		err = c.diagnose(ctx, "", "", filtersErr)
	}
	if err != nil {
		cancel()
		wg.Wait()
		return nil, err
	}
	if commit != "" {
		// The commit, not base: the name is not resolved a second time.
		wg.Go(func() {
			diff, diffErr = c.git(ctx, maxGitOutput, "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv",
				"--ignore-submodules=none", "--relative", commit+"...HEAD", "--")
		})
	}
	wg.Go(func() {
		status, _, statusErr = c.run(ctx, statusCmd(commit, filters))
	})
	wg.Wait()
	switch {
	case diffErr != nil:
		return nil, c.diagnose(ctx, base, commit, diffErr)
	case statusErr != nil:
		return nil, c.diagnose(ctx, "", "", statusErr)
	case otherErr != nil:
		return nil, c.diagnose(ctx, "", "", otherErr)
	}
	paths := appendZ(nil, diff)
	paths, err = appendStatus(paths, status)
	if err != nil {
		return nil, err
	}
	paths = appendZ(paths, other)
	slices.Sort(paths)
	return slices.Compact(paths), nil
}

// baseCommit resolves base for Changes: the commit's id, or "" when base
// is "HEAD" and the branch has no commit yet.
func (c *Checkout) baseCommit(ctx context.Context, base string) (string, error) {
	commit, _, err := c.resolve(ctx, base, false)
	var ge *GitError
	switch {
	case err == nil:
		return commit, nil
	case errors.As(err, &ge):
		return "", err
	case base == "HEAD" && c.unborn(ctx):
		return "", nil
	}
	return "", c.diagnose(ctx, base, "", err)
}

// unborn reports whether HEAD names a branch that has no commit yet: a
// new repository, or an orphan branch, before its first commit.
func (c *Checkout) unborn(ctx context.Context) bool {
	out, err := c.git(ctx, maxGitStderr, "symbolic-ref", "--quiet", "HEAD")
	ref := strings.TrimSpace(string(out))
	if err != nil || !strings.HasPrefix(ref, "refs/") {
		return false
	}
	// show-ref --verify takes the name as it is, and says 1 for none.
	_, err = c.git(ctx, maxGitStderr, "show-ref", "--verify", "--quiet", ref)
	var exit *exec.ExitError
	return errors.As(err, &exit) && exit.ExitCode() == 1
}

// statusCmd is the git status Changes runs: attributes from the base
// commit where git can take them from a tree (GIT_ATTR_SOURCE, git 2.41
// and later; an older git ignores it), and every configured filter
// driver switched off, which holds on any git. Without a clean filter
// a file it would have changed reads as modified, which over-reports
// (a gate checks more) rather than hides a change.
func statusCmd(commit string, filters []string) gitCmd {
	g := gitCmd{
		args:  []string{"status", "--short", "--no-branch", "--untracked-files=no", "--no-renames", "--ignore-submodules=dirty", "--", "."},
		limit: maxGitOutput,
	}
	if commit != "" {
		g.env = []string{"GIT_ATTR_SOURCE=" + commit}
	}
	for _, name := range filters {
		g.config = append(g.config, "filter."+name+".clean=", "filter."+name+".smudge=",
			"filter."+name+".process=", "filter."+name+".required=false")
	}
	return g
}

// filterDrivers lists the names of the filter drivers git's configuration
// defines (filter.<name>.*), in every scope git status would read, so that
// each can be switched off.
func (c *Checkout) filterDrivers(ctx context.Context) ([]string, error) {
	out, err := c.git(ctx, maxGitOutput, "config", "--null", "--name-only", "--get-regexp", `^filter\.`)
	var f *gitFailure
	var exit *exec.ExitError
	if errors.As(err, &f) && errors.As(f.err, &exit) && exit.ExitCode() == 1 && strings.TrimSpace(f.stderr) == "" {
		return nil, nil // none configured
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, key := range appendZ(nil, out) {
		// filter.<name>.<variable>: the name may hold dots, the
		// variable does not.
		rest, ok := strings.CutPrefix(key, "filter.")
		dot := strings.LastIndexByte(rest, '.')
		if !ok || dot < 0 {
			continue
		}
		name := rest[:dot]
		if strings.ContainsAny(name, "=\n") {
			// -c would read the name up to its "=" and switch off
			// something else.
			return nil, &GitError{Msg: fmt.Sprintf("git config defines a filter driver named %q, which cannot be switched off", name), Hint: "rename it"}
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return slices.Compact(names), nil
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

// gitCmd is one git command: the subcommand and its arguments, and what
// it runs with beyond what every command gets.
type gitCmd struct {
	args   []string // the subcommand and its arguments
	config []string // more settings, "name=value", given as -c
	env    []string // more environment, "NAME=value"
	stdin  string   // what git reads, if anything
	limit  int      // the most standard output read
}

// git runs git in the checkout root and returns its standard output, of
// at most limit bytes.
func (c *Checkout) git(ctx context.Context, limit int, args ...string) ([]byte, error) {
	out, _, err := c.run(ctx, gitCmd{args: args, limit: limit})
	return out, err
}

// run runs g in the checkout root and returns its standard output and
// the start of its standard error.
func (c *Checkout) run(ctx context.Context, g gitCmd) ([]byte, string, error) {
	if c.mem != nil {
		return nil, "", &GitError{Msg: c.root + " is held in memory and has no git history", Err: ErrNotGit}
	}
	return runGit(ctx, c.root, g)
}

// Git runs one git command in dir (git -C dir args...) as every git
// process the-loop starts runs (see gitArgv and gitEnv), and returns its
// standard output, of at most limit bytes. It is for a caller outside
// this package with a repository of its own to read (a test corpus);
// a checkout's are read through its methods. A failure is an error
// naming the subcommand and the start of what git said.
func Git(ctx context.Context, dir string, limit int, args ...string) ([]byte, error) {
	if len(args) == 0 {
		return nil, errors.New("git: no subcommand")
	}
	out, _, err := runGit(ctx, dir, gitCmd{args: args, limit: limit})
	return out, err
}

// runGit is the one place a git process is started.
func runGit(ctx context.Context, dir string, g gitCmd) ([]byte, string, error) {
	cmd := exec.CommandContext(ctx, "git", gitArgv(dir, g)...)
	cmd.Env = append(gitEnv(), g.env...)
	if g.stdin != "" {
		cmd.Stdin = strings.NewReader(g.stdin)
	}
	out := &cappedBuffer{limit: g.limit}
	stderr := &cappedBuffer{limit: maxGitStderr, drop: true}
	cmd.Stdout, cmd.Stderr = out, stderr
	// A grandchild holding the pipes open must not stall a cancelled run.
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	switch {
	case out.over:
		return nil, "", &GitError{Msg: fmt.Sprintf("git %s printed more than %s", g.args[0], byteSize(g.limit)), Hint: "refusing to read more"}
	case err != nil:
		return nil, "", &gitFailure{cmd: g.args[0], stderr: string(stderr.buf), err: err}
	}
	return out.buf, string(stderr.buf), nil
}

// gitArgv is the command line of g, run in dir, with the settings every
// git process the-loop starts runs with, whatever the repository's
// configuration (and the files it includes) says. The checkout is
// untrusted, and so is what a step before the gate may have written into
// its .git.
//
// An untrusted tree can hold a bare repository whose config names a
// program to run; safe.bareRepository keeps git from discovering one.
// Nothing git could run is left on: core.fsmonitor would start a daemon
// or run a hook, core.hooksPath names hooks (no command run here runs
// one, and none may), core.pager a pager (never on a pipe; --no-pager
// says so outright). No transport may be used (protocol.allow=never), so
// no fetch, and with it no core.sshCommand, credential helper or askpass,
// can start, even where git would fetch a partial clone's missing object
// itself (before 2.45, which GIT_NO_LAZY_FETCH stops); credential.helper
// is emptied as well. The commit-graph file is not read: git takes the
// parents it lists on trust (git log walks a forged one), and a change
// could have written one. diff.external and textconv are refused by the diff
// commands' own flags, filter drivers by status's settings (statusCmd).
//
// status names paths from the current directory, quoted the one way
// appendStatus reads, and without colour, whatever the config says.
//
// Departure from the original (docs/compatibility.md#the-pull-request-gate-and-adoption): git reads no replace refs, grafts or commit-graph, and uses no transport.
func gitArgv(dir string, g gitCmd) []string {
	argv := []string{"--no-pager", "-C", dir,
		"-c", "safe.bareRepository=explicit", "-c", "core.fsmonitor=false",
		"-c", "core.hooksPath=" + nowhere, "-c", "protocol.allow=never", "-c", "credential.helper=", "-c", "core.commitGraph=false",
		"-c", "status.relativePaths=true", "-c", "core.quotePath=true", "-c", "color.ui=false"}
	for _, kv := range g.config {
		argv = append(argv, "-c", kv)
	}
	return append(argv, g.args...)
}

// nowhere is a path that cannot exist: a name under a file that is not a
// directory. A setting pointed at it names nothing, wherever git runs and
// whatever the checkout holds; a relative path would be read from the
// checkout, whose files are the change's.
var nowhere = filepath.Join(os.DevNull, "the-loop-none")

// localGitEnv is what git itself clears when it runs in another
// repository (git rev-parse --local-env-vars): a hook's GIT_DIR or
// GIT_INDEX_FILE would otherwise make git read some other repository, or
// resolve a relative path from the wrong directory. The repository is the
// one the checkout root is in.
//
// The rest change how git reads what it is given: where attributes come
// from (status sets its own) and what a pathspec means.
var localGitEnv = []string{
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS",
	"GIT_CONFIG_COUNT", "GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE",
	"GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE", "GIT_INDEX_FILE",
	"GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_PREFIX",
	"GIT_SHALLOW_FILE", "GIT_COMMON_DIR",

	"GIT_ATTR_SOURCE", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS",
	"GIT_ICASE_PATHSPECS", "GIT_LITERAL_PATHSPECS",
}

// gitEnv is the environment git runs in: never prompting for
// credentials, taking no optional lock (so status writes no index
// refresh), fetching no missing object into a partial clone (git 2.45
// and later; a blobless clone would otherwise fetch every blob ls-tree
// -l sizes, one at a time), taking a pathspec for the path it spells,
// and speaking the C locale, whose messages diagnose and resolve can
// read.
//
// And seeing the repository's objects as they are: a replace ref
// (refs/replace/<id>) makes git read another object wherever one is
// named, a whole commit id included, and a graft (info/grafts) gives a
// commit other parents. Either would let what is in .git, not what was
// committed, decide which rules --rules-from reads and which merge base
// --changed counts from. GIT_NO_REPLACE_OBJECTS switches replace refs
// off; grafts are not (git 2.39 reads them all the same), so the graft
// file is one that cannot exist. A shallow clone's cut history stays:
// it only hides ancestors, so a merge base can only be older (more is
// counted as changed) or missing (the gate fails).
func gitEnv() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return slices.Contains(localGitEnv, k) || strings.HasPrefix(k, "GIT_CONFIG_KEY_") || strings.HasPrefix(k, "GIT_CONFIG_VALUE_")
	})
	return append(env, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_NO_LAZY_FETCH=1", "GIT_LITERAL_PATHSPECS=1", "LC_ALL=C",
		"GIT_NO_REPLACE_OBJECTS=1", "GIT_GRAFT_FILE="+nowhere)
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
// rev is the revision the command was given ("" for none); mergeBase is
// the commit rev resolved to when the command needed a merge base between
// it and HEAD, "" when it did not or rev did not resolve.
func (c *Checkout) diagnose(ctx context.Context, rev, mergeBase string, failed error) error {
	var f *gitFailure
	switch {
	case !errors.As(failed, &f):
		return failed // already one line: output over its bound, a refusal
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
	switch {
	case rev != "" && mergeBase == "":
		if _, err := c.git(ctx, maxGitStderr, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}"); err != nil {
			hint := fetchHint(rev)
			if c.shallow(ctx) {
				hint = shallowHint(rev)
			}
			return &GitError{Rev: rev, Msg: "cannot resolve " + rev, Hint: hint}
		}
	case rev != "":
		_, err := c.git(ctx, maxGitStderr, "merge-base", mergeBase, "HEAD")
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
	return &GitError{Rev: rev, Msg: f.Error()}
}

// resolve returns the full id of the commit rev names and, with prefix,
// the checkout root's path from the top of the work tree ("" or "sub/"),
// in one git process. A rev that git finds ambiguous is refused with a
// *GitError (see ambiguous); any other failure is left for diagnose.
func (c *Checkout) resolve(ctx context.Context, rev string, prefix bool) (commit, dir string, err error) {
	// --is-inside-work-tree first: a repository whose core.worktree
	// names another directory would have status and ls-files read that
	// directory's files as the change's, and the root's prefix be "".
	args := []string{"rev-parse", "--is-inside-work-tree"}
	if prefix {
		args = append(args, "--show-prefix")
	}
	args = append(args, "--verify", "--end-of-options", rev+"^{commit}")
	// Without --quiet, and with the warning forced on, git says on
	// stderr when more than one ref could be meant; it picks one all the
	// same.
	out, stderr, err := c.run(ctx, gitCmd{args: args, config: []string{"core.warnAmbiguousRefs=true"}, limit: maxGitStderr})
	if err != nil {
		return "", "", err
	}
	s := strings.TrimSuffix(string(out), "\n")
	inside, s, _ := strings.Cut(s, "\n")
	if inside != "true" {
		return "", "", &GitError{Rev: rev, Msg: c.root + " is not in the work tree its git repository names (core.worktree points elsewhere)",
			Hint: "the checkout's .git is not as a clone leaves it: run the gate on a fresh checkout"}
	}
	if prefix {
		// The prefix is printed as it is; only the id after it is
		// known to hold no newline.
		i := strings.LastIndexByte(s, '\n')
		if i < 0 {
			return "", "", &GitError{Rev: rev, Msg: fmt.Sprintf("git rev-parse printed %q, want a prefix and a commit id", s)}
		}
		dir, s = s[:i], s[i+1:]
	}
	if !isObjectID(s) {
		return "", "", &GitError{Rev: rev, Msg: fmt.Sprintf("git rev-parse printed %q, want a commit id", s)}
	}
	if name, ok := ambiguousName(stderr); ok {
		if err := c.ambiguous(ctx, rev, name); err != nil {
			return "", "", err
		}
	}
	return s, dir, nil
}

// ambiguousName reads git's warning that a name could be more than one
// ref: "warning: refname 'origin/main' is ambiguous."
func ambiguousName(stderr string) (string, bool) {
	for line := range strings.Lines(stderr) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "warning: refname '")
		name, ok2 := strings.CutSuffix(rest, "' is ambiguous.")
		if ok && ok2 {
			return name, true
		}
	}
	return "", false
}

// refRules are the refs git tries for a short name, in its order
// (refs.c, ref_rev_parse_rules): the first that exists wins, so a tag
// shadows a remote-tracking branch of the same name.
var refRules = []string{"%s", "refs/%s", "refs/tags/%s", "refs/heads/%s", "refs/remotes/%s", "refs/remotes/%s/HEAD"}

// ambiguous decides about a name git warned could be more than one thing,
// in rev: nil when git's pick cannot be another's choice, else a *GitError
// naming what it could be. A whole object id is always the object; HEAD is
// the checkout's own; a full ref name that exists is always that ref,
// since git tries a name as it is first. Anything else is refused: a tag
// anyone can push must not decide which commit a gate compares with.
func (c *Checkout) ambiguous(ctx context.Context, rev, name string) error {
	if isObjectID(name) || name == "HEAD" {
		return nil
	}
	var patterns []string
	for _, rule := range refRules {
		if p := fmt.Sprintf(rule, name); strings.HasPrefix(p, "refs/") {
			patterns = append(patterns, p)
		}
	}
	out, err := c.git(ctx, maxGitStderr, append([]string{"for-each-ref", "--format=%(refname)"}, patterns...)...)
	if err != nil {
		return c.diagnose(ctx, rev, "", err)
	}
	// for-each-ref matches a pattern's prefix too, and sorts by name:
	// keep the exact names, in git's order.
	refs := strings.Fields(string(out))
	var found []string
	for _, p := range patterns {
		if slices.Contains(refs, p) {
			found = append(found, p)
		}
	}
	if strings.HasPrefix(name, "refs/") && slices.Contains(found, name) {
		return nil
	}
	what, hint := strings.Join(found, " or "), "name the ref in full"
	if len(found) > 0 {
		// A name with a slash is most often a remote-tracking branch;
		// a tag is the likeliest to be someone else's.
		i := slices.IndexFunc(found, func(f string) bool { return strings.HasPrefix(f, "refs/remotes/") })
		if i < 0 {
			i = max(0, slices.IndexFunc(found, func(f string) bool { return !strings.HasPrefix(f, "refs/tags/") }))
		}
		hint += " (e.g. " + found[i] + ")"
	}
	if len(found) < 2 && isHex(name) {
		// The other meaning is an abbreviated commit id.
		what = strings.Join(append(found, "a commit whose id starts with "+name), " or ")
		hint += " or give the commit's whole id"
	}
	if what == "" {
		what = "more than one ref"
	}
	return &GitError{Rev: rev, Msg: fmt.Sprintf("revision %s is ambiguous: %s could be %s", rev, name, what), Hint: hint}
}

// isObjectID reports whether s is a whole object id, SHA-1 or SHA-256.
func isObjectID(s string) bool {
	return (len(s) == 40 || len(s) == 64) && isHex(s)
}

func isHex(s string) bool {
	return s != "" && strings.Trim(s, "0123456789abcdefABCDEF") == ""
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
