package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// isolateGit skips the test without git, and keeps the tester's own git
// configuration and any repository around the temporary directories out
// of it: the checkout's git inherits the environment.
func isolateGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(t.TempDir()))
}

// run runs git in dir for a test's setup and returns its trimmed output.
func run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir,
		"-c", "user.name=Tester", "-c", "user.email=tester@example.com",
		"-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main",
		"-c", "protocol.file.allow=always", "-c", "gc.auto=0"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// put writes files (name → content) under dir, making directories.
func put(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, p, content)
	}
}

// Names git must quote: a committed one (diff -z) and an untracked one
// (status, which C-quotes).
const (
	spacedName   = "with space\nand newline.txt"
	oddUntracked = "na\u00efve \"quoted\"\t.txt"
)

// prRepo builds a repository with a branch "feature" forked from main and
// worked on in every way a change can be, and main moved on after the
// fork. It returns the work tree.
func prRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	run(t, dir, "init", "-q")
	// A configuration that changes what git prints, which Changes must
	// read all the same.
	for _, kv := range [][2]string{
		{"status.branch", "true"}, {"status.relativePaths", "false"}, {"core.quotePath", "false"},
		{"color.ui", "always"}, {"diff.relative", "false"}, {"diff.renames", "copies"},
	} {
		run(t, dir, "config", kv[0], kv[1])
	}
	put(t, dir, map[string]string{
		".gitignore":        "*.log\n",
		"keep.txt":          "kept\n",
		"empty.txt":         "",
		"committed.txt":     "base\n",
		"staged.txt":        "base\n",
		"unstaged.txt":      "base\n",
		"deleted.txt":       "base\n",
		"later-on-main.txt": "base\n",
		"reverted.txt":      "base\n",
		"run.sh":            "#!/bin/sh\n",
		"sub/inner.txt":     "inner at base\n",
		"sub/gone.txt":      "base\n",
	})
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	link(t, "keep.txt", filepath.Join(dir, "link.txt"))
	link(t, "sub", filepath.Join(dir, "sublink"))
	run(t, dir, "add", "-A")
	// A submodule is a commit in the tree, and an empty directory where
	// it is not checked out; this one's commit need not exist.
	run(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("1", 40)+",module")
	if err := os.Mkdir(filepath.Join(dir, "module"), 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "commit", "-q", "-m", "base")

	run(t, dir, "checkout", "-q", "-b", "feature")
	put(t, dir, map[string]string{"committed.txt": "feature\n", "reverted.txt": "feature\n", spacedName: "odd\n", "sub/new.txt": "new\n"})
	run(t, dir, "rm", "-q", "deleted.txt")
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-q", "-m", "feature")

	run(t, dir, "checkout", "-q", "main")
	put(t, dir, map[string]string{"later-on-main.txt": "main moved on\n"})
	run(t, dir, "commit", "-q", "-am", "main moves on")
	run(t, dir, "checkout", "-q", "feature")

	put(t, dir, map[string]string{"staged.txt": "staged\n"})
	run(t, dir, "add", "staged.txt")
	put(t, dir, map[string]string{
		"unstaged.txt":      "unstaged\n",
		"reverted.txt":      "base\n",
		"untracked.txt":     "untracked\n",
		oddUntracked:        "untracked\n",
		"sub/untracked.txt": "untracked\n",
		"debug.log":         "ignored\n",
		"sub/debug.log":     "ignored\n",
	})
	if err := os.Remove(filepath.Join(dir, "sub", "gone.txt")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func openT(t testing.TB, dir string) *Checkout {
	t.Helper()
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestChangesListsWhatAChangeMakesSinceTheMergeBase: commits since the
// fork, staged, unstaged and untracked files, under the checkout root.
func TestChangesListsWhatAChangeMakesSinceTheMergeBase(t *testing.T) {
	isolateGit(t)
	dir := prRepo(t)
	mainHash := run(t, dir, "rev-parse", "main")
	// reverted.txt was changed by a commit and changed back in the work
	// tree: the change touched it.
	all := []string{
		"committed.txt", "deleted.txt", oddUntracked, "reverted.txt", "staged.txt", "sub/gone.txt", "sub/new.txt",
		"sub/untracked.txt", "unstaged.txt", "untracked.txt", spacedName,
	}
	for _, tc := range []struct {
		name, root, base string
		want             []string
	}{
		{"against a branch", ".", "main", all},
		{"against a commit", ".", mainHash, all},
		{"against HEAD: only what is not committed", ".", "HEAD", []string{oddUntracked, "reverted.txt", "staged.txt", "sub/gone.txt", "sub/untracked.txt", "unstaged.txt", "untracked.txt"}},
		{"a subdirectory root", "sub", "main", []string{"gone.txt", "new.txt", "untracked.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := openT(t, filepath.Join(dir, tc.root))
			got, err := c.Changes(context.Background(), tc.base)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Changes(%s) = %q, want %q", tc.base, got, tc.want)
			}
		})
	}
	t.Run("writes nothing", func(t *testing.T) {
		index := filepath.Join(dir, ".git", "index")
		before, err := os.Stat(index)
		if err != nil {
			t.Fatal(err)
		}
		// Files whose content is what the index says but whose times
		// are not: a git that refreshed the index would write it now.
		old := before.ModTime().Add(-time.Hour)
		for _, name := range []string{"keep.txt", "committed.txt", "sub/inner.txt"} {
			if err := os.Chtimes(filepath.Join(dir, name), old, old); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := openT(t, dir).Changes(context.Background(), "main"); err != nil {
			t.Fatal(err)
		}
		after, err := os.Stat(index)
		if err != nil {
			t.Fatal(err)
		}
		if !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
			t.Errorf("the index was written: %v %d, then %v %d", before.ModTime(), before.Size(), after.ModTime(), after.Size())
		}
	})
}

// TestGitFailuresSayWhatIsWrongAndWhatToDoInOneLine: every way git can
// fail a comparison is a one-line *GitError about the revision.
func TestGitFailuresSayWhatIsWrongAndWhatToDoInOneLine(t *testing.T) {
	isolateGit(t)
	origin := prRepo(t)
	orphan := t.TempDir()
	run(t, orphan, "clone", "-q", origin, ".")
	run(t, orphan, "checkout", "-q", "--orphan", "alone")
	run(t, orphan, "commit", "-q", "-m", "no shared history")
	// Depth 1 on feature alone: origin/main is not fetched at all.
	shallow := t.TempDir()
	run(t, shallow, "clone", "-q", "--depth", "1", "--branch", "feature", "file://"+origin, ".")
	// Depth 1 on every branch: origin/main is there, the fork is not.
	shallowAll := t.TempDir()
	run(t, shallowAll, "clone", "-q", "--depth", "1", "--no-single-branch", "--branch", "feature", "file://"+origin, ".")
	plain := t.TempDir()
	pwned := filepath.Join(t.TempDir(), "pwned")

	for _, tc := range []struct {
		name, dir, base string
		is              error  // errors.Is the error, when set
		want            string // in the message
		revisionOK      bool   // Revision succeeds: it needs no merge base
	}{
		{name: "not a repository", dir: plain, base: "main", is: ErrNotGit, want: plain + " is not in a git repository"},
		{name: "no such base", dir: origin, base: "nosuch", want: "cannot resolve nosuch; fetch it (git fetch origin nosuch) or check the name"},
		{name: "no such remote branch", dir: origin, base: "origin/nosuch", want: "git fetch origin nosuch"},
		{name: "no merge base", dir: orphan, base: "origin/main", want: "no merge base between origin/main and HEAD; they share no history", revisionOK: true},
		{name: "shallow, base not fetched", dir: shallow, base: "origin/main", want: "cannot resolve origin/main; this is a shallow clone: fetch the history of origin/main (in GitHub Actions, actions/checkout with fetch-depth: 0)"},
		{name: "shallow, fork not fetched", dir: shallowAll, base: "origin/main", want: "no merge base between origin/main and HEAD; this is a shallow clone", revisionOK: true},
		{name: "a base like an option", dir: origin, base: "--output=" + pwned, want: `revision "--output=` + pwned + `" starts with "-"`},
		{name: "an empty base", dir: origin, base: "", want: "an empty revision"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := openT(t, tc.dir)
			_, err := c.Changes(context.Background(), tc.base)
			checkGitError(t, "Changes", err, tc.base, tc.is, tc.want)
			_, err = c.Revision(context.Background(), tc.base)
			switch {
			case !tc.revisionOK:
				checkGitError(t, "Revision", err, tc.base, tc.is, tc.want)
			case err != nil:
				t.Errorf("Revision: %v", err)
			}
			if _, err := os.Stat(pwned); err == nil {
				t.Errorf("a base became an option: %s was written", pwned)
			}
		})
	}

	t.Run("output bound", func(t *testing.T) {
		_, err := openT(t, origin).git(context.Background(), 10, "ls-tree", "-r", "HEAD")
		if ge := (*GitError)(nil); !errors.As(err, &ge) || ge.Error() != "git ls-tree printed more than 10 bytes; refusing to read more" {
			t.Errorf("got %v, want the output refused past its bound", err)
		}
	})

	t.Run("a hook's environment", func(t *testing.T) {
		// Run from a hook, git's variables name a repository; the
		// checkout's is the one its root is in.
		t.Setenv("GIT_DIR", filepath.Join(orphan, ".git"))
		t.Setenv("GIT_INDEX_FILE", "elsewhere")
		got, err := openT(t, filepath.Join(origin, "sub")).Changes(context.Background(), "main")
		if want := []string{"gone.txt", "new.txt", "untracked.txt"}; err != nil || !slices.Equal(got, want) {
			t.Errorf("Changes = %q, %v; want %q", got, err, want)
		}
	})

	t.Run("git missing", func(t *testing.T) {
		c := openT(t, origin)
		t.Setenv("PATH", t.TempDir())
		_, err := c.Changes(context.Background(), "main")
		if !errors.Is(err, exec.ErrNotFound) || !strings.Contains(err.Error(), "git is not installed") {
			t.Errorf("got %v, want git not installed", err)
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := openT(t, origin).Changes(ctx, "main"); !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
	})
}

// checkGitError checks that op failed with a one-line *GitError about
// rev that is errors.Is is (when set) and holds want.
func checkGitError(t *testing.T, op string, err error, rev string, is error, want string) {
	t.Helper()
	var ge *GitError
	switch {
	case !errors.As(err, &ge):
		t.Errorf("%s: got %T %v, want a *GitError", op, err, err)
	case is != nil && !errors.Is(err, is):
		t.Errorf("%s: %v is not %v", op, err, is)
	case !strings.Contains(err.Error(), want):
		t.Errorf("%s: got %q, want it to hold %q", op, err, want)
	case strings.ContainsAny(err.Error(), "\n\r"):
		t.Errorf("%s: %q is more than one line", op, err)
	case ge.Rev != rev:
		t.Errorf("%s: Rev = %q, want %q", op, ge.Rev, rev)
	}
}

// TestARevisionReadsTheCommitsFilesFollowingNoLink: a Revision answers
// from the commit, not the work tree, and refuses links and submodules.
func TestARevisionReadsTheCommitsFilesFollowingNoLink(t *testing.T) {
	isolateGit(t)
	dir := prRepo(t)
	c := openT(t, dir)
	r, err := c.Revision(context.Background(), "main")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Commit(), run(t, dir, "rev-parse", "main"); got != want || r.Name() != "main" {
		t.Errorf("Name, Commit = %s, %s; want main, %s", r.Name(), got, want)
	}
	if got := r.Abs("sub/inner.txt"); got != "main:sub/inner.txt" {
		t.Errorf("Abs = %q", got)
	}

	for _, tc := range []struct {
		rel   string
		limit int64
		want  string // the content, whose length Stat reports
		mode  fs.FileMode
		err   error // what both Stat and ReadFile fail with; nil for none
		read  error // what ReadFile alone fails with
	}{
		{rel: "committed.txt", limit: 100, want: "base\n", mode: 0o644},
		{rel: "empty.txt", limit: 0, want: "", mode: 0o644},
		{rel: "later-on-main.txt", limit: 100, want: "main moved on\n", mode: 0o644},
		{rel: "unstaged.txt", limit: 100, want: "base\n", mode: 0o644},
		{rel: "./sub/../run.sh", limit: 100, want: "#!/bin/sh\n", mode: 0o755},
		{rel: "sub", limit: 100, mode: fs.ModeDir | 0o755, read: ErrNotRegular},
		{rel: ".", limit: 100, mode: fs.ModeDir | 0o755, read: ErrNotRegular},
		{rel: "untracked.txt", limit: 100, err: fs.ErrNotExist},
		{rel: "sub/new.txt", limit: 100, err: fs.ErrNotExist},
		{rel: "keep.txt/x", limit: 100, err: fs.ErrNotExist},
		{rel: "link.txt", limit: 100, err: ErrLink},
		{rel: "sublink/inner.txt", limit: 100, err: ErrLink},
		{rel: "sublink/nosuch/x", limit: 100, err: ErrLink},
		{rel: "nosuch/x", limit: 100, err: fs.ErrNotExist},
		{rel: "sub/nosuch", limit: 100, err: fs.ErrNotExist},
		{rel: "keep.txt/x/y", limit: 100, err: fs.ErrNotExist},
		{rel: "module", limit: 100, err: ErrNotRegular},
		{rel: "module/x", limit: 100, err: fs.ErrNotExist},
		{rel: "../outside", limit: 100, err: ErrOutside},
		{rel: "/etc/passwd", limit: 100, err: ErrOutside},
		{rel: "sub/inner.txt", limit: 4, mode: 0o644, read: &TooLargeError{}},
	} {
		t.Run(tc.rel, func(t *testing.T) {
			fi, err := r.Stat(tc.rel)
			switch {
			case tc.err != nil:
				if !errors.Is(err, tc.err) {
					t.Errorf("Stat: got %v, want %v", err, tc.err)
				}
			case err != nil:
				t.Errorf("Stat: %v", err)
			case fi.Mode() != tc.mode:
				t.Errorf("Stat: mode %v, want %v", fi.Mode(), tc.mode)
			case tc.want != "" && fi.Size() != int64(len(tc.want)):
				t.Errorf("Stat: size %d, want %d", fi.Size(), len(tc.want))
			}
			data, err := r.ReadFile(tc.rel, tc.limit)
			want := tc.err
			if want == nil {
				want = tc.read
			}
			var tl *TooLargeError
			switch {
			case errors.As(want, &tl):
				if !errors.As(err, &tl) || tl.Size != 14 || tl.Limit != tc.limit {
					t.Errorf("ReadFile: got %v, want 14 bytes over the limit of %d", err, tc.limit)
				}
			case want != nil:
				if !errors.Is(err, want) {
					t.Errorf("ReadFile: got %v, want %v", err, want)
				}
			case err != nil:
				t.Errorf("ReadFile: %v", err)
			case string(data) != tc.want:
				t.Errorf("ReadFile = %q, want %q", data, tc.want)
			}
		})
	}

	t.Run("refused before reading", func(t *testing.T) {
		// With no git to run, only a refusal made from what ls-tree
		// said can succeed in failing the right way.
		if _, err := r.Stat("sub/inner.txt"); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", t.TempDir())
		_, err := r.ReadFile("sub/inner.txt", 4)
		if tl := (*TooLargeError)(nil); !errors.As(err, &tl) {
			t.Errorf("got %v, want a *TooLargeError", err)
		}
	})

	t.Run("subdirectory root", func(t *testing.T) {
		r, err := openT(t, filepath.Join(dir, "sub")).Revision(context.Background(), "main")
		if err != nil {
			t.Fatal(err)
		}
		if fi, err := r.Stat("gone.txt"); err != nil || fi.Size() != int64(len("base\n")) {
			t.Errorf("Stat(gone.txt) = %v, %v", fi, err)
		}
		if data, err := r.ReadFile("inner.txt", 100); err != nil || string(data) != "inner at base\n" {
			t.Errorf("ReadFile = %q, %v", data, err)
		}
		for _, rel := range []string{"../keep.txt", "../sub/inner.txt"} {
			if _, err := r.ReadFile(rel, 100); !errors.Is(err, ErrOutside) {
				t.Errorf("ReadFile(%s): got %v, want ErrOutside", rel, err)
			}
		}
	})

	t.Run("root the revision lacks", func(t *testing.T) {
		// A directory only the work tree has is, at main, an empty
		// view rather than an error.
		put(t, dir, map[string]string{"fresh/a.txt": "a\n"})
		r, err := openT(t, filepath.Join(dir, "fresh")).Revision(context.Background(), "main")
		if err != nil {
			t.Fatal(err)
		}
		if fi, err := r.Stat("."); err != nil || !fi.IsDir() {
			t.Errorf("Stat(.) = %v, %v; want a directory", fi, err)
		}
		if _, err := r.Stat("a.txt"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Stat: got %v, want fs.ErrNotExist", err)
		}
	})
}

// TestAnAmbiguousRevisionIsRefused: a name more than one ref could stand
// for is refused by Changes and Revision alike, since git would pick by
// its own order (a tag before a remote-tracking branch) and a tag is
// anyone's to push; a name git cannot take two ways is resolved.
func TestAnAmbiguousRevisionIsRefused(t *testing.T) {
	isolateGit(t)
	origin := prRepo(t)
	mainHash := run(t, origin, "rev-parse", "main")
	featureHash := run(t, origin, "rev-parse", "feature")
	abbrev := mainHash[:12]

	for _, tc := range []struct {
		name  string
		refs  []string // ref names to point at feature's commit, in a fresh clone
		rev   string
		want  string // in the error; "" when rev resolves to main's commit
		label string // of the revision, when another than rev
	}{
		{name: "a tag beside a remote-tracking branch", refs: []string{"refs/tags/origin/main"}, rev: "origin/main",
			want: "revision origin/main is ambiguous: origin/main could be refs/tags/origin/main or refs/remotes/origin/main; name the ref in full (e.g. refs/remotes/origin/main)"},
		{name: "a branch beside a remote-tracking branch", refs: []string{"refs/heads/origin/main"}, rev: "origin/main",
			want: "origin/main could be refs/heads/origin/main or refs/remotes/origin/main; name the ref in full (e.g. refs/remotes/origin/main)"},
		{name: "within a longer revision", refs: []string{"refs/tags/origin/main"}, rev: "origin/main~0",
			want: "revision origin/main~0 is ambiguous: origin/main could be refs/tags/origin/main or refs/remotes/origin/main"},
		{name: "a tag named like an abbreviated id", refs: []string{"refs/tags/" + abbrev}, rev: abbrev,
			want: abbrev + " could be refs/tags/" + abbrev + " or a commit whose id starts with " + abbrev + "; name the ref in full (e.g. refs/tags/" + abbrev + ") or give the commit's whole id"},
		{name: "the full name, with a tag named like it", refs: []string{"refs/tags/refs/remotes/origin/main"}, rev: "refs/remotes/origin/main"},
		{name: "a whole id, with a branch named like it", refs: []string{"refs/heads/" + mainHash}, rev: mainHash},
		{name: "no other ref of the name", rev: "origin/main"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			run(t, dir, "clone", "-q", origin, ".")
			for _, ref := range tc.refs {
				run(t, dir, "update-ref", ref, featureHash)
			}
			c := openT(t, dir)
			r, revErr := c.Revision(context.Background(), tc.rev)
			_, changesErr := c.Changes(context.Background(), tc.rev)
			if tc.want != "" {
				checkGitError(t, "Revision", revErr, tc.rev, nil, tc.want)
				checkGitError(t, "Changes", changesErr, tc.rev, nil, tc.want)
				return
			}
			switch {
			case revErr != nil:
				t.Errorf("Revision: %v", revErr)
			case r.Commit() != mainHash || r.Name() != tc.rev:
				t.Errorf("Revision: Name, Commit = %s, %s; want %s, %s", r.Name(), r.Commit(), tc.rev, mainHash)
			}
			if changesErr != nil {
				t.Errorf("Changes: %v", changesErr)
			}
		})
	}

	t.Run("HEAD, with a tag named HEAD", func(t *testing.T) {
		// HEAD is the checkout's own, whatever else is named so.
		dir := t.TempDir()
		run(t, dir, "clone", "-q", origin, ".")
		run(t, dir, "update-ref", "refs/tags/HEAD", mainHash)
		c := openT(t, dir)
		if r, err := c.Revision(context.Background(), "HEAD"); err != nil || r.Commit() != featureHash {
			t.Errorf("Revision(HEAD) = %v, %v; want the commit %s", r, err, featureHash)
		}
		if got, err := c.Changes(context.Background(), "HEAD"); err != nil || len(got) != 0 {
			t.Errorf("Changes(HEAD) = %q, %v; want nothing", got, err)
		}
	})
}

// TestChangesRunsNoFilterDriver: a filter driver configured for the user
// (git-lfs, say) or the repository, selected by a committed .gitattributes,
// is not started by Changes, even for files whose stat data is stale and
// which git status therefore reads again.
func TestChangesRunsNoFilterDriver(t *testing.T) {
	isolateGit(t)
	dir := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	run(t, dir, "init", "-q")
	files := map[string]string{
		".gitattributes": "*.txt filter=user\n*.md filter=repo\n*.go filter=proc\n",
		"a.txt":          "a\n",
		"sub/b.md":       "b\n",
		"c.go":           "package c\n",
	}
	put(t, dir, files)
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-q", "-m", "base")

	// Configured after the commit, which would have run them.
	appendTo := func(what string) string { return fmt.Sprintf("echo %s >>'%s'; cat", what, marker) }
	global := filepath.Join(t.TempDir(), "gitconfig")
	write(t, global, fmt.Sprintf("[filter \"user\"]\n\tclean = %q\n\tsmudge = %q\n\trequired = true\n"+
		"[filter \"proc\"]\n\tprocess = %q\n\trequired = true\n",
		appendTo("user-clean"), appendTo("user-smudge"), appendTo("proc")))
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	run(t, dir, "config", "filter.repo.clean", appendTo("repo-clean"))
	run(t, dir, "config", "filter.repo.required", "true")

	old := time.Now().Add(-time.Hour)
	for name := range files {
		if err := os.Chtimes(filepath.Join(dir, name), old, old); err != nil {
			t.Fatal(err)
		}
	}
	c := openT(t, dir)
	for _, base := range []string{"main", "HEAD"} {
		got, err := c.Changes(context.Background(), base)
		if err != nil || len(got) != 0 {
			t.Errorf("Changes(%s) = %q, %v; want nothing", base, got, err)
		}
	}
	if data, err := os.ReadFile(marker); err == nil {
		t.Errorf("a filter ran: %q", data)
	}

	// The same status without the guard runs them: the test tests.
	cmd := exec.Command("git", "-C", dir, "status", "--short")
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	_ = cmd.Run()
	if _, err := os.ReadFile(marker); err != nil {
		t.Errorf("git status ran no filter either (%v): the setup does not test the guard", err)
	}
}

// TestChangesListsASubmoduleTheCheckoutSaysToIgnore: a .gitmodules that
// says "ignore = all" is the change's own word, and hides no new
// submodule commit, committed or staged.
func TestChangesListsASubmoduleTheCheckoutSaysToIgnore(t *testing.T) {
	isolateGit(t)
	dir := t.TempDir()
	run(t, dir, "init", "-q")
	gitmodules := "[submodule \"%s\"]\n\tpath = %s\n\turl = ./nowhere\n\tignore = all\n"
	put(t, dir, map[string]string{".gitmodules": fmt.Sprintf(gitmodules, "committed", "committed") + fmt.Sprintf(gitmodules, "staged", "staged")})
	for _, path := range []string{"committed", "staged"} {
		run(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("1", 40)+","+path)
		// Not checked out: an empty directory, else status lists it
		// as deleted.
		if err := os.Mkdir(filepath.Join(dir, path), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run(t, dir, "add", ".gitmodules")
	run(t, dir, "commit", "-q", "-m", "base")
	run(t, dir, "checkout", "-q", "-b", "change")
	run(t, dir, "update-index", "--cacheinfo", "160000,"+strings.Repeat("2", 40)+",committed")
	run(t, dir, "commit", "-q", "-m", "a new commit of a submodule")
	run(t, dir, "update-index", "--cacheinfo", "160000,"+strings.Repeat("2", 40)+",staged")
	got, err := openT(t, dir).Changes(context.Background(), "main")
	if want := []string{"committed", "staged"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("Changes = %q, %v; want %q", got, err, want)
	}
}

// TestChangesAgainstHEADBeforeTheFirstCommitIsEverything: on a branch
// with no commit yet, as in a pre-commit hook on the first commit, base
// HEAD means nothing is committed: the change is everything staged,
// unstaged and untracked. Another base that does not resolve is an error.
func TestChangesAgainstHEADBeforeTheFirstCommitIsEverything(t *testing.T) {
	isolateGit(t)
	fresh := t.TempDir()
	run(t, fresh, "init", "-q")
	put(t, fresh, map[string]string{".gitignore": "*.log\n", "staged.txt": "s\n", "both.txt": "b\n", "sub/staged.txt": "s\n"})
	run(t, fresh, "add", "staged.txt", "both.txt", "sub/staged.txt")
	put(t, fresh, map[string]string{"both.txt": "changed\n", "untracked.txt": "u\n", "sub/untracked.txt": "u\n", "debug.log": "ignored\n"})

	orphan := t.TempDir()
	run(t, orphan, "init", "-q")
	put(t, orphan, map[string]string{"old.txt": "o\n"})
	run(t, orphan, "add", "-A")
	run(t, orphan, "commit", "-q", "-m", "old")
	run(t, orphan, "checkout", "-q", "--orphan", "new")

	for _, tc := range []struct {
		name, dir string
		want      []string
	}{
		{"a new repository", fresh, []string{".gitignore", "both.txt", "staged.txt", "sub/staged.txt", "sub/untracked.txt", "untracked.txt"}},
		{"a subdirectory of one", filepath.Join(fresh, "sub"), []string{"staged.txt", "untracked.txt"}},
		{"an orphan branch: the index is all new", orphan, []string{"old.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := openT(t, tc.dir).Changes(context.Background(), "HEAD")
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("Changes(HEAD) = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	t.Run("another base", func(t *testing.T) {
		_, err := openT(t, fresh).Changes(context.Background(), "main")
		checkGitError(t, "Changes", err, "main", nil, "cannot resolve main")
	})
}

// TestARevisionLooksUpOnlyWhatItIsAskedAbout: a Revision neither lists
// nor sizes the whole tree (a missing object elsewhere in it does not
// matter), and asks git about a path once, remembering what it learnt,
// found or not.
func TestARevisionLooksUpOnlyWhatItIsAskedAbout(t *testing.T) {
	isolateGit(t)
	dir := t.TempDir()
	run(t, dir, "init", "-q")
	put(t, dir, map[string]string{".the-loop/config.yaml": "rules: base\n", "big/x.txt": "x\n", "big/y.txt": "y\n", "other.txt": "o\n"})
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-q", "-m", "base")
	// The commit's objects are loose: take the tree of big/ away.
	tree := run(t, dir, "rev-parse", "HEAD:big")
	if err := os.Remove(filepath.Join(dir, ".git", "objects", tree[:2], tree[2:])); err != nil {
		t.Fatal(err)
	}
	r, err := openT(t, dir).Revision(context.Background(), "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if data, err := r.ReadFile(".the-loop/config.yaml", 100); err != nil || string(data) != "rules: base\n" {
		t.Errorf("ReadFile = %q, %v", data, err)
	}
	if fi, err := r.Stat("big"); err != nil || !fi.IsDir() {
		t.Errorf("Stat(big) = %v, %v; want a directory", fi, err)
	}
	if _, err := r.Stat("big/x.txt"); !errors.As(err, new(*GitError)) {
		t.Errorf("Stat(big/x.txt) = %v; want a *GitError, its directory's object being gone", err)
	}
	if _, err := r.Stat("nosuch/a.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat(nosuch/a.txt) = %v; want fs.ErrNotExist", err)
	}

	// With no git to run, what was learnt still answers.
	t.Setenv("PATH", t.TempDir())
	if fi, err := r.Stat(".the-loop/config.yaml"); err != nil || fi.Size() != int64(len("rules: base\n")) {
		t.Errorf("Stat again = %v, %v", fi, err)
	}
	if _, err := r.ReadFile(".the-loop/config.yaml", 4); !errors.As(err, new(*TooLargeError)) {
		t.Errorf("ReadFile over the limit = %v; want a *TooLargeError", err)
	}
	for _, rel := range []string{"nosuch/b.txt", "nosuch/deeper/c.txt", ".the-loop/config.yaml/x"} {
		if _, err := r.Stat(rel); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Stat(%s) = %v; want fs.ErrNotExist, from what was learnt", rel, err)
		}
	}
	if _, err := r.Stat("other.txt"); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("Stat(other.txt) = %v; want git not found, as it was never asked about", err)
	}
}

// TestARevisionIsBoundedByTheTimeItsContextHad: the git processes a
// Revision runs after it is made take no longer than the context given
// to Checkout.Revision had left, or revisionTimeout without a deadline.
func TestARevisionIsBoundedByTheTimeItsContextHad(t *testing.T) {
	isolateGit(t)
	if runtime.GOOS == "windows" {
		t.Skip("needs a shell script for git")
	}
	dir := t.TempDir()
	run(t, dir, "init", "-q")
	put(t, dir, map[string]string{"a.txt": "a\n"})
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-q", "-m", "base")
	c := openT(t, dir)
	if r, err := c.Revision(context.Background(), "HEAD"); err != nil || r.timeout != revisionTimeout {
		t.Errorf("without a deadline: %v, %v; want a timeout of %v", r, err, revisionTimeout)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	r, err := c.Revision(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	// A git that never answers.
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("needs sleep")
	}
	bin := t.TempDir()
	write(t, filepath.Join(bin, "git"), "#!/bin/sh\nexec "+sleep+" 60\n")
	if err := os.Chmod(filepath.Join(bin, "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	start := time.Now()
	_, err = r.ReadFile("a.txt", 100)
	if took := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || took > 10*time.Second {
		t.Errorf("ReadFile = %v after %v; want context.DeadlineExceeded after about 2s", err, took)
	}
}

// bigRepo is a repository the size of a large project's: 14,000 files in
// 2,000 directories, on a branch that changes three of them (one
// committed, one not, one untracked).
func bigRepo(b *testing.B) *Checkout {
	isolateGit(b)
	dir := b.TempDir()
	run(b, dir, "init", "-q")
	for d := range 2000 {
		sub := filepath.Join(dir, fmt.Sprintf("d%02d", d/100), fmt.Sprintf("e%03d", d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 7 {
			write(b, filepath.Join(sub, fmt.Sprintf("f%d.go", f)), fmt.Sprintf("package e%d // %d\n", d, f))
		}
	}
	run(b, dir, "add", "-A")
	run(b, dir, "commit", "-q", "-m", "base")
	run(b, dir, "checkout", "-q", "-b", "feature")
	write(b, filepath.Join(dir, "d03", "e300", "f1.go"), "package changed\n")
	run(b, dir, "commit", "-q", "-am", "one")
	write(b, filepath.Join(dir, "d07", "e700", "f2.go"), "package changed\n")
	write(b, filepath.Join(dir, "d19", "e1999", "new.go"), "package new\n")
	// A clone's objects are packed; a fresh commit's are 16,000 loose
	// files, which would time the object store rather than git's work.
	run(b, dir, "gc", "-q")
	return openT(b, dir)
}

func BenchmarkChanges(b *testing.B) {
	c := bigRepo(b)
	for b.Loop() {
		got, err := c.Changes(context.Background(), "main")
		if err != nil {
			b.Fatal(err)
		}
		if len(got) != 3 {
			b.Fatalf("Changes = %q, want 3 paths", got)
		}
	}
}

// BenchmarkRevision resolves the base and reads one of its 14,000 files,
// as check --rules-from reads its config.
func BenchmarkRevision(b *testing.B) {
	c := bigRepo(b)
	for b.Loop() {
		r, err := c.Revision(context.Background(), "main")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.ReadFile("d03/e300/f1.go", 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}

func TestReadAllReadsEveryFileOfANameAtOnce(t *testing.T) {
	isolateGit(t)
	dir := t.TempDir()
	run(t, dir, "init", "-q")
	put(t, dir, map[string]string{
		"svc/specs/issue-1/state.json":               "one",
		"svc/specs/issue-2/state.json":               "two\n",
		"svc/specs/issue-2/pr-loops/pr-3/state.json": "three",
		"svc/specs/issue-4/state.json":               strings.Repeat("x", 100),
		"svc/specs/issue-5/other.json":               "not asked for",
		"svc/specs/issue-6/empty/state.json":         "",
		"svc/elsewhere/state.json":                   "not under dir",
	})
	if err := os.Symlink("../issue-1/state.json", filepath.Join(dir, "svc/specs/issue-5/state.json")); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "add", ".")
	run(t, dir, "commit", "-q", "-m", "base")
	// The checkout is the svc directory; the work tree is not the revision.
	put(t, dir, map[string]string{"svc/specs/issue-1/state.json": "edited"})
	c := openT(t, filepath.Join(dir, "svc"))
	r, err := c.Revision(context.Background(), "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.ReadAll("specs", "state.json", 50)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{
		"specs/issue-1/state.json":               []byte("one"),
		"specs/issue-2/state.json":               []byte("two\n"),
		"specs/issue-2/pr-loops/pr-3/state.json": []byte("three"),
		"specs/issue-4/state.json":               nil, // over the limit: ReadFile says why
		"specs/issue-6/empty/state.json":         {},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d files %v, want %d", len(got), slices.Sorted(maps.Keys(got)), len(want))
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok || !bytes.Equal(g, w) || (w == nil) != (g == nil) {
			t.Errorf("%s: got %q (present %v), want %q", k, g, ok, w)
		}
	}
	// What the listing showed is known: no git to stat it again.
	t.Setenv("PATH", "")
	if _, err := r.Stat("specs/issue-2/state.json"); err != nil {
		t.Errorf("Stat after ReadAll: %v", err)
	}
	if _, err := r.Stat("specs/issue-5/state.json"); !errors.Is(err, ErrLink) {
		t.Errorf("the link: got %v, want ErrLink", err)
	}
}
