package repo

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// Rename is a file git's rename detection found moved between two
// commits: From in the older, To in the newer, both relative to the
// checkout root.
type Rename struct {
	From, To string
}

// maxRenameCandidates bounds git's inexact rename detection (diff -l):
// past this many files on either side it pairs only files whose content
// is the same, which costs a hash each. The configuration cannot raise it.
const maxRenameCandidates = 1000

// MergeBase is the best common ancestor of the commit id commit and HEAD,
// or "" when they have none (unrelated histories, or a shallow clone that
// does not reach it). Replace refs and grafts are not followed (gitEnv):
// the parents are the commits' own.
func (c *Checkout) MergeBase(ctx context.Context, commit string) (string, error) {
	if !isObjectID(commit) {
		return "", &GitError{Rev: commit, Msg: fmt.Sprintf("merge base of %q: want a whole commit id", commit)}
	}
	out, err := c.git(ctx, maxGitStderr, "merge-base", commit, "HEAD")
	var f *gitFailure
	var exit *exec.ExitError
	if errors.As(err, &f) && errors.As(f.err, &exit) && exit.ExitCode() == 1 && strings.TrimSpace(f.stderr) == "" {
		return "", nil
	}
	if err != nil {
		return "", c.diagnose(ctx, "", "", err)
	}
	id := strings.TrimSpace(string(out))
	if !isObjectID(id) {
		return "", &GitError{Rev: commit, Msg: fmt.Sprintf("git merge-base printed %q, want a commit id", id)}
	}
	return id, nil
}

// Renames are the files under dir (relative to the checkout root) that
// git finds moved between the commit id from and HEAD, sorted by From:
// moved whole, or moved and edited (up to git's default similarity), or
// swapped with another (a file rewritten in place is broken into a
// deletion and an addition first, -B, so two files that traded names
// pair up). It reads the commits only; what the work tree moved since is
// not seen. Nothing configured runs: no external diff, no textconv.
func (c *Checkout) Renames(ctx context.Context, from, dir string) ([]Rename, error) {
	out, err := c.diffBetween(ctx, from, "HEAD", dir, "--name-status", "-M", "-B", fmt.Sprintf("-l%d", maxRenameCandidates))
	if err != nil {
		return nil, err
	}
	return parseRenames(out)
}

// parseRenames reads git diff --name-status -z: a status, then one path,
// or two for a rename or copy, each ended by NUL. Paths are the
// checkout's, so any byte but NUL may be in them.
func parseRenames(out []byte) ([]Rename, error) {
	var renames []Rename
	fields := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	for i := 0; i < len(fields); {
		status := fields[i]
		switch {
		case status == "":
			return renames, nil
		case strings.HasPrefix(status, "R") || strings.HasPrefix(status, "C"):
			if i+2 >= len(fields) {
				return nil, &GitError{Msg: fmt.Sprintf("git diff --name-status printed %q without both its paths", status)}
			}
			if status[0] == 'R' {
				renames = append(renames, Rename{From: fields[i+1], To: fields[i+2]})
			}
			i += 3
		default:
			i += 2
		}
	}
	return renames, nil
}

// Added are the files under dir (relative to the checkout root) that the
// commit id to has and the commit id from had not, sorted.
func (c *Checkout) Added(ctx context.Context, from, to, dir string) ([]string, error) {
	if !isObjectID(to) {
		return nil, &GitError{Rev: to, Msg: fmt.Sprintf("diff to %q: want a whole commit id", to)}
	}
	out, err := c.diffBetween(ctx, from, to, dir, "--name-only", "--diff-filter=A", "--no-renames")
	if err != nil {
		return nil, err
	}
	return appendZ(nil, out), nil
}

// diffBetween runs git diff -z between two commits under dir, with how.
func (c *Checkout) diffBetween(ctx context.Context, from, to, dir string, how ...string) ([]byte, error) {
	if !isObjectID(from) {
		return nil, &GitError{Rev: from, Msg: fmt.Sprintf("diff from %q: want a whole commit id", from)}
	}
	p, err := Clean(dir)
	if err != nil {
		return nil, err
	}
	args := append([]string{"diff", "-z", "--no-ext-diff", "--no-textconv", "--ignore-submodules=none", "--relative"}, how...)
	out, err := c.git(ctx, maxGitOutput, append(args, from, to, "--", p)...)
	if err != nil {
		return nil, c.diagnose(ctx, "", "", err)
	}
	return out, nil
}
