package repo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
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

func TestChanges(t *testing.T) {
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

func TestGitErrors(t *testing.T) {
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

func TestRevision(t *testing.T) {
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
	if got, want := r.Paths(), []string{".gitignore", "committed.txt", "deleted.txt", "empty.txt", "keep.txt", "later-on-main.txt", "reverted.txt", "run.sh", "staged.txt", "sub/gone.txt", "sub/inner.txt", "unstaged.txt"}; !slices.Equal(got, want) {
		t.Errorf("Paths = %q, want %q", got, want)
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
		// With no git to run, only a refusal made from the listing can
		// succeed in failing the right way.
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
		if got, want := r.Paths(), []string{"gone.txt", "inner.txt"}; !slices.Equal(got, want) {
			t.Errorf("Paths = %q, want %q", got, want)
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
		if got := r.Paths(); len(got) != 0 {
			t.Errorf("Paths = %q, want none", got)
		}
		if _, err := r.Stat("a.txt"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Stat: got %v, want fs.ErrNotExist", err)
		}
	})
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

// BenchmarkRevision lists the base's 14,000 files and reads one.
func BenchmarkRevision(b *testing.B) {
	c := bigRepo(b)
	for b.Loop() {
		r, err := c.Revision(context.Background(), "main")
		if err != nil {
			b.Fatal(err)
		}
		if n := len(r.Paths()); n != 14000 {
			b.Fatalf("%d paths, want 14000", n)
		}
		if _, err := r.ReadFile("d03/e300/f1.go", 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}
