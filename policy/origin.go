package policy

import (
	"path/filepath"
	"strings"

	"github.com/the-loop/the-loop/repo"
)

// maxGitFile bounds a read of .git, its commondir or its config.
const maxGitFile = 1 << 20

// originURL reads the origin remote's URL from the checkout's git config,
// without running git: "" when it is not a checkout or has no origin. A
// .git file (a worktree or submodule) is followed to its gitdir, which
// lies outside the checkout by design; that read is bounded and of a
// regular file only, like every other.
func originURL(co *repo.Checkout) string {
	var config []byte
	if data, err := co.ReadFile(".git", maxGitFile); err == nil {
		dir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
		if !ok {
			return ""
		}
		gitDir := strings.TrimSpace(dir)
		if !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(co.Root(), gitDir)
		}
		// A worktree's config lives in the common directory.
		if common, err := repo.ReadRegular(filepath.Join(gitDir, "commondir"), maxGitFile); err == nil {
			gitDir = filepath.Join(gitDir, strings.TrimSpace(string(common)))
		}
		config, _ = repo.ReadRegular(filepath.Join(gitDir, "config"), maxGitFile)
	} else {
		config, _ = co.ReadFile(".git/config", maxGitFile)
	}
	inOrigin := false
	for line := range strings.Lines(string(config)) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			inOrigin = line == `[remote "origin"]`
			continue
		}
		if key, value, ok := strings.Cut(line, "="); inOrigin && ok && strings.TrimSpace(key) == "url" {
			return strings.TrimSpace(value)
		}
	}
	return ""
}

// checkoutOrigin is the owner and name of the checkout's origin remote
// when it is a GitHub repository on host whose names pass
// graph.ParseRepoName; ok is false otherwise.
func checkoutOrigin(co *repo.Checkout, host string) (owner, name string, ok bool) {
	return parseGitHubURL(originURL(co), host)
}
