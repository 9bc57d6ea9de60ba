package repo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// indirectRepo is a repository with a commit on main holding rules.txt
// "base", a branch feature forked from it that changes docs/a.txt, and a
// commit "evil" on no branch whose rules.txt says "evil". It returns the
// work tree (on feature) and the ids of main's commit, feature's and
// evil's.
func indirectRepo(t *testing.T) (dir, mainID, featureID, evilID string) {
	t.Helper()
	dir = t.TempDir()
	run(t, dir, "init", "-q")
	put(t, dir, map[string]string{"rules.txt": "base\n", "docs/a.txt": "a\n"})
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-q", "-m", "base")
	mainID = run(t, dir, "rev-parse", "HEAD")
	run(t, dir, "checkout", "-q", "-b", "evil")
	put(t, dir, map[string]string{"rules.txt": "evil\n"})
	run(t, dir, "commit", "-q", "-am", "evil")
	evilID = run(t, dir, "rev-parse", "HEAD")
	run(t, dir, "checkout", "-q", "-b", "feature", mainID)
	run(t, dir, "branch", "-q", "-D", "evil")
	put(t, dir, map[string]string{"docs/a.txt": "changed\n"})
	run(t, dir, "commit", "-q", "-am", "feature")
	featureID = run(t, dir, "rev-parse", "HEAD")
	return dir, mainID, featureID, evilID
}

// TestAReplaceRefDoesNotChangeWhatARevisionReads: refs/replace/<id> has
// git read another commit wherever main's is named, by branch or by its
// whole id; a revision reads the commit that was named.
func TestAReplaceRefDoesNotChangeWhatARevisionReads(t *testing.T) {
	isolateGit(t)
	dir, mainID, _, evilID := indirectRepo(t)
	run(t, dir, "replace", mainID, evilID)
	if got := run(t, dir, "cat-file", "blob", "main:rules.txt"); got != "evil" {
		t.Fatalf("with the replace ref, git itself reads main:rules.txt as %q, want \"evil\": the setup does not test the guard", got)
	}
	c := openT(t, dir)
	for _, rev := range []string{"main", mainID, "refs/heads/main"} {
		r, err := c.Revision(context.Background(), rev)
		if err != nil {
			t.Fatalf("Revision(%s): %v", rev, err)
		}
		if r.Commit() != mainID {
			t.Errorf("Revision(%s).Commit() = %s, want %s", rev, r.Commit(), mainID)
		}
		data, err := r.ReadFile("rules.txt", 100)
		if err != nil || string(data) != "base\n" {
			t.Errorf("Revision(%s).ReadFile(rules.txt) = %q, %v; want the commit's own \"base\\n\"", rev, data, err)
		}
		all, err := r.ReadAll(".", "rules.txt", 100)
		if err != nil || string(all["rules.txt"]) != "base\n" {
			t.Errorf("Revision(%s).ReadAll = %q, %v; want the commit's own", rev, all, err)
		}
	}
}

// TestReplaceRefsAndGraftsDoNotMoveTheMergeBase: a replace ref or a graft
// that gives main's commit feature's as a parent makes git take feature
// itself for the merge base, and the change would be nothing. Changes
// counts from the merge base the commits have.
func TestReplaceRefsAndGraftsDoNotMoveTheMergeBase(t *testing.T) {
	isolateGit(t)
	for _, how := range []string{"replace", "graft"} {
		t.Run(how, func(t *testing.T) {
			dir, mainID, featureID, _ := indirectRepo(t)
			switch how {
			case "replace":
				// A commit with main's tree and feature for its parent,
				// standing in for main's.
				// Feature's own parent is main's commit: it is cut, or
				// the two would be each other's.
				root := run(t, dir, "commit-tree", featureID+"^{tree}", "-m", "feature, with no parent")
				run(t, dir, "replace", featureID, root)
				fake := run(t, dir, "commit-tree", mainID+"^{tree}", "-p", featureID, "-m", "main, they say")
				run(t, dir, "replace", mainID, fake)
			case "graft":
				// Feature's own parent is main's commit: cut it, or the
				// two would be each other's.
				write(t, filepath.Join(dir, ".git", "info", "grafts"), featureID+"\n"+mainID+" "+featureID+"\n")
			}
			if got := run(t, dir, "-c", "advice.graftFileDeprecated=false", "merge-base", "main", "HEAD"); got != featureID {
				t.Fatalf("git itself finds merge base %s, want feature's %s: the setup does not test the guard", got, featureID)
			}
			c := openT(t, dir)
			got, err := c.Changes(context.Background(), "main")
			if err != nil || !slices.Equal(got, []string{"docs/a.txt"}) {
				t.Errorf("Changes(main) = %q, %v; want [docs/a.txt]", got, err)
			}
			if mb, err := c.MergeBase(context.Background(), mainID); err != nil || mb != mainID {
				t.Errorf("MergeBase(main) = %s, %v; want main's own commit %s", mb, err, mainID)
			}
		})
	}
}

// TestARepositoryWhoseWorkTreeIsElsewhereIsRefused: core.worktree has
// status read another directory as the change; nothing is read.
func TestARepositoryWhoseWorkTreeIsElsewhereIsRefused(t *testing.T) {
	isolateGit(t)
	dir, _, _, _ := indirectRepo(t)
	run(t, dir, "config", "core.worktree", t.TempDir())
	c := openT(t, dir)
	_, err := c.Changes(context.Background(), "main")
	var ge *GitError
	if !errors.As(err, &ge) || !strings.Contains(err.Error(), "core.worktree") {
		t.Errorf("Changes = %v, want a *GitError naming core.worktree", err)
	}
	if _, err := c.Revision(context.Background(), "main"); !errors.As(err, &ge) {
		t.Errorf("Revision = %v, want a *GitError", err)
	}
}

// TestNoConfiguredCommandRuns: each configuration key that makes git run
// a program, set in the checkout's .git/config to a marker command, and
// every git operation the-loop has run against that repository: the
// marker never runs. Where plain git can be made to run it (sanity), it
// does, so the key is set as git reads it.
func TestNoConfiguredCommandRuns(t *testing.T) {
	isolateGit(t)
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	cases := []struct {
		key    string
		config func(dir, cmd string) [][2]string
		sanity []string // a git command that runs it, nil when none can without a terminal or a network
		stdin  string
	}{
		{key: "core.fsmonitor", config: one("core.fsmonitor"), sanity: []string{"status"}},
		{key: "core.hooksPath", config: func(dir, cmd string) [][2]string {
			hooks := filepath.Join(dir, ".git", "evil-hooks")
			for _, h := range []string{"pre-commit", "post-checkout", "post-index-change", "reference-transaction", "fsmonitor-watchman", "pre-auto-gc"} {
				put(t, hooks, map[string]string{h: "#!/bin/sh\n" + cmd + "\n"})
				if err := os.Chmod(filepath.Join(hooks, h), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			return [][2]string{{"core.hooksPath", hooks}}
		}, sanity: []string{"commit", "-q", "--allow-empty", "-m", "hooked"}},
		{key: "diff.external", config: one("diff.external"), sanity: []string{"diff", "main"}},
		{key: "diff.<driver>.textconv", config: func(dir, cmd string) [][2]string {
			put(t, dir, map[string]string{".git/info/attributes": "* diff=conv\n"})
			return [][2]string{{"diff.conv.textconv", cmd + "; cat"}}
		}, sanity: []string{"diff", "main"}},
		{key: "filter.<driver>.clean", config: func(dir, cmd string) [][2]string {
			put(t, dir, map[string]string{".git/info/attributes": "* filter=f\n"})
			return [][2]string{{"filter.f.clean", cmd + "; cat"}, {"filter.f.smudge", cmd + "; cat"}, {"filter.f.required", "true"}}
		}, sanity: []string{"add", "--renormalize", "."}},
		{key: "core.sshCommand", config: func(dir, cmd string) [][2]string {
			return [][2]string{{"core.sshCommand", cmd + "; false"}, {"remote.origin.url", "ssh://example.invalid/x"}, {"remote.origin.promisor", "true"}}
		}, sanity: []string{"ls-remote", "origin"}},
		{key: "core.pager", config: one("core.pager")},
		{key: "core.askpass", config: func(dir, cmd string) [][2]string {
			return [][2]string{{"core.askpass", cmd}, {"remote.origin.url", "https://example.invalid/x"}}
		}, sanity: []string{"credential", "fill"}, stdin: "protocol=https\nhost=example.invalid\n\n"},
		{key: "credential.helper", config: func(dir, cmd string) [][2]string {
			return [][2]string{{"credential.helper", "!" + cmd + "; true"}, {"remote.origin.url", "https://example.invalid/x"}}
		}, sanity: []string{"credential", "fill"}, stdin: "protocol=https\nhost=example.invalid\nusername=u\n\n"},
	}
	for _, tc := range cases {
		t.Run(tc.key, func(t *testing.T) {
			dir, mainID, _, _ := indirectRepo(t)
			marker := filepath.Join(t.TempDir(), "ran")
			// A program of its own: askpass is run as one, not by a shell.
			cmd := filepath.Join(t.TempDir(), "mark")
			write(t, cmd, fmt.Sprintf("#!/bin/sh\necho ran >>'%s'\n", marker))
			if err := os.Chmod(cmd, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, kv := range tc.config(dir, cmd) {
				run(t, dir, "config", kv[0], kv[1])
			}
			// Stale stat data, as after a CI checkout, and a change in the
			// work tree: status must look at file content.
			put(t, dir, map[string]string{"docs/a.txt": "changed in the work tree\n", "docs/new.txt": "new\n"})
			everyOperation(t, dir, mainID)
			if data, err := os.ReadFile(marker); err == nil {
				t.Fatalf("%s ran: %q", tc.key, data)
			}
			if tc.sanity == nil {
				return
			}
			sane := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=T", "-c", "user.email=t@example.com"}, tc.sanity...)...)
			sane.Stdin = strings.NewReader(tc.stdin)
			_ = sane.Run()
			if _, err := os.ReadFile(marker); err != nil {
				t.Errorf("git %s ran no %s either: the setup does not test the guard", strings.Join(tc.sanity, " "), tc.key)
			}
		})
	}
}

// one sets key to the marker command.
func one(key string) func(dir, cmd string) [][2]string {
	return func(_, cmd string) [][2]string { return [][2]string{{key, cmd}} }
}

// everyOperation runs each git operation a Checkout has against dir.
func everyOperation(t *testing.T, dir, mainID string) {
	t.Helper()
	c := openT(t, dir)
	ctx := context.Background()
	if _, err := c.Changes(ctx, "main"); err != nil {
		t.Errorf("Changes: %v", err)
	}
	if _, err := c.Changes(ctx, "HEAD"); err != nil {
		t.Errorf("Changes(HEAD): %v", err)
	}
	_, _ = c.Changes(ctx, "no-such-branch") // diagnose runs more
	r, err := c.Revision(ctx, "main")
	if err != nil {
		t.Fatalf("Revision: %v", err)
	}
	if _, err := r.ReadFile("rules.txt", 100); err != nil {
		t.Errorf("ReadFile: %v", err)
	}
	if _, err := r.ReadAll(".", "a.txt", 100); err != nil {
		t.Errorf("ReadAll: %v", err)
	}
	if _, err := c.MergeBase(ctx, mainID); err != nil {
		t.Errorf("MergeBase: %v", err)
	}
	if _, err := c.Renames(ctx, mainID, "docs"); err != nil {
		t.Errorf("Renames: %v", err)
	}
	if _, err := c.Added(ctx, mainID, mainID, "docs"); err != nil {
		t.Errorf("Added: %v", err)
	}
}
