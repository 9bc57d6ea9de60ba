package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/repo"
)

// gitIgnoreFile is the ignore file init keeps the lock files out of git
// with: the repository root's, which every checkout reads.
const gitIgnoreFile = ".gitignore"

// gitIgnoreLimit bounds the .gitignore init reads: a committed file is
// untrusted, and a real one is a few kilobytes.
const gitIgnoreLimit = 1 << 20

// ignoredFiles are the files the-loop writes into a checkout that are
// never content: the lock beside each work item's state, outer and inner
// loops alike. A pattern without a slash matches at any depth. Everything
// else the-loop writes there (state, the harness config, spec folders) is
// meant to be committed.
var ignoredFiles = []string{graph.LockFile}

// IgnoredFiles are the patterns init adds to .gitignore.
func IgnoredFiles() []string { return append([]string(nil), ignoredFiles...) }

// GitIgnoreReport is what init did to .gitignore.
type GitIgnoreReport struct {
	// Path is the ignore file, repository-relative.
	Path string `json:"path"`
	// Created is set when there was no .gitignore.
	Created bool `json:"created"`
	// Added are the patterns written (or, with DryRun, to be written);
	// empty when the file already ignored them all.
	Added []string `json:"added"`
	// Skipped says why the file was left alone, "" when it was not.
	Skipped string `json:"skipped,omitempty"`
}

// ignoreLocks adds the lock files to the root's .gitignore, creating it
// when missing, and adds nothing twice. A .gitignore that is a link (to
// anywhere: writing would replace it), not a regular file, or too large is
// left alone and the report says why: it does not stop the adoption.
//
// Departure from the original (docs/compatibility.md#the-pull-request-gate-and-adoption): init adds the lock file to .gitignore.
func ignoreLocks(co *repo.Checkout, dryRun bool) (*GitIgnoreReport, error) {
	rep := &GitIgnoreReport{Path: gitIgnoreFile, Added: []string{}}
	fi, err := co.Lstat(gitIgnoreFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		rep.Created = true
	case err != nil:
		rep.Skipped = fmt.Sprintf("cannot be inspected: %v", repo.Cause(err))
		return rep, nil
	case fi.Mode()&fs.ModeSymlink != 0:
		rep.Skipped = "it is a symbolic link; the-loop writes only a regular file"
		return rep, nil
	case !fi.Mode().IsRegular():
		rep.Skipped = "it is not a regular file"
		return rep, nil
	case fi.Size() > gitIgnoreLimit:
		rep.Skipped = fmt.Sprintf("%d bytes, over the limit of %d", fi.Size(), gitIgnoreLimit)
		return rep, nil
	}
	var body []byte
	perm := fs.FileMode(0o644)
	if !rep.Created {
		if body, err = co.ReadFile(gitIgnoreFile, gitIgnoreLimit); err != nil {
			rep.Skipped = fmt.Sprintf("cannot be read: %v", repo.Cause(err))
			return rep, nil
		}
		perm = fi.Mode().Perm()
	}
	rep.Added = missingPatterns(string(body), ignoredFiles)
	if len(rep.Added) == 0 || dryRun {
		return rep, nil
	}
	var b strings.Builder
	b.Write(body)
	if len(body) > 0 && body[len(body)-1] != '\n' {
		b.WriteByte('\n')
	}
	for _, p := range rep.Added {
		b.WriteString(p + "\n")
	}
	if err := co.WriteFile(gitIgnoreFile, []byte(b.String()), perm); err != nil {
		return nil, fmt.Errorf("write %s: %w", gitIgnoreFile, err)
	}
	return rep, nil
}

// missingPatterns are those of want that no line of body already states.
// A line counts with or without a leading slash or "**/", and with
// trailing blanks (which git strips unless escaped); a negation or a
// comment does not.
func missingPatterns(body string, want []string) []string {
	have := map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimRight(line, " \t\r")
		line = strings.TrimPrefix(line, "**/")
		line = strings.TrimPrefix(line, "/")
		have[line] = true
	}
	out := []string{}
	for _, p := range want {
		if !have[p] {
			out = append(out, p)
		}
	}
	return out
}
