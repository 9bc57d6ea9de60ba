package policy

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// originURL reads the origin remote's URL from root's git config, without
// running git: "" when root is not a checkout or has no origin. A .git file
// (a worktree or submodule) is followed to its gitdir.
func originURL(root string) string {
	gitDir := filepath.Join(root, ".git")
	if data, err := os.ReadFile(gitDir); err == nil {
		if dir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:"); ok {
			gitDir = strings.TrimSpace(dir)
			if !filepath.IsAbs(gitDir) {
				gitDir = filepath.Join(root, gitDir)
			}
			// A worktree's config lives in the common directory.
			if common, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
				gitDir = filepath.Join(gitDir, strings.TrimSpace(string(common)))
			}
		}
	}
	f, err := os.Open(filepath.Join(gitDir, "config"))
	if err != nil {
		return ""
	}
	defer f.Close()
	inOrigin := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
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

// githubRemote matches the https, ssh and scp-like forms of a GitHub URL.
var githubRemote = regexp.MustCompile(`^(?:https://(?:[^@/]+@)?github\.com/|ssh://git@github\.com/|git@github\.com:)([^/]+)/([^/]+?)(?:\.git)?/?$`)

// GitHubOrigin is the owner and name of root's origin remote when it is a
// GitHub repository whose names pass ValidGitHubName; ok is false otherwise.
func GitHubOrigin(root string) (owner, name string, ok bool) {
	return parseGitHubURL(originURL(root))
}

func parseGitHubURL(url string) (owner, name string, ok bool) {
	m := githubRemote.FindStringSubmatch(url)
	if m == nil || !ValidGitHubName(m[1]) || !ValidGitHubName(m[2]) {
		return "", "", false
	}
	return m[1], m[2], true
}
