package policy

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/internal/lazyregexp"
)

// DefaultGitHubHost is the GitHub host a CLI config that names no other
// works with.
const DefaultGitHubHost = "github.com"

// hostName is a DNS host name as an operator writes one: no scheme, port,
// path or user.
var hostName = lazyregexp.New(`^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$`)

// GitHubHost is the one GitHub host this machine's integration works
// with, lower case: routing.workspace.defaultHost when it is set; else the
// host of integrations.github.api.baseUrl (api.github.com is github.com;
// https://ghe.example/api/v3, a GitHub Enterprise Server, is ghe.example;
// api.octo.ghe.com is octo.ghe.com), unless that is a loopback address, a
// stand-in or proxy that says nothing of where repositories live; else
// github.com. A checkout is the work item's repository only when its
// origin remote is on this host.
//
// It comes from the operator's CLI config alone, never from a checkout:
// which host is trusted is the operator's to say. A defaultHost that is
// not a host name is a *graph.ConfigError.
//
// Departure from the original (docs/compatibility.md#what-routingworkspacedefaulthost-means): defaultHost names the host work items live on, not a workspace directory.
func (c *CLIConfig) GitHubHost() (string, error) {
	if c == nil {
		return DefaultGitHubHost, nil
	}
	if def, ok := stringAt(c.Doc, "routing.workspace.defaultHost"); ok {
		def = strings.ToLower(strings.TrimSpace(def))
		if !hostName.MatchString(def) {
			return "", &graph.ConfigError{File: c.Path, Key: "routing.workspace.defaultHost",
				Msg: fmt.Sprintf("got %q, want a host name such as %s or ghe.example (no scheme, port or path)", def, DefaultGitHubHost)}
		}
		return def, nil
	}
	base, _ := stringAt(c.Doc, "integrations.github.api.baseUrl")
	if base = strings.TrimSpace(base); base == "" {
		return DefaultGitHubHost, nil
	}
	host, err := GitHubWebHost(base)
	if err != nil {
		return "", &graph.ConfigError{File: c.Path, Key: "integrations.github.api.baseUrl", Msg: err.Error()}
	}
	if loopback(host) {
		return DefaultGitHubHost, nil
	}
	return host, nil
}

// NamesGitHubHost reports whether the operator's CLI config says which
// GitHub it works with (routing.workspace.defaultHost or
// integrations.github.api.baseUrl): then it is the config's to say, and
// nothing the environment suggests stands in for it.
func (c *CLIConfig) NamesGitHubHost() bool {
	if c == nil {
		return false
	}
	for _, key := range []string{"routing.workspace.defaultHost", "integrations.github.api.baseUrl"} {
		if v, ok := stringAt(c.Doc, key); ok && strings.TrimSpace(v) != "" {
			return true
		}
	}
	return false
}

// loopback reports whether host is this machine.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// GitHubAPIBase is the REST API root of a GitHub host: api.github.com for
// github.com, https://HOST/api/v3 for a GitHub Enterprise Server.
func GitHubAPIBase(host string) string {
	if host == DefaultGitHubHost {
		return "https://api.github.com"
	}
	return "https://" + host + "/api/v3"
}

// GitHubWebHost is the host people and git use for a REST API root,
// lower case: GitHub's API lives on api.HOST (github.com, and GHE.com's
// api.SUB.ghe.com), a GitHub Enterprise Server's at HOST/api/v3.
func GitHubWebHost(base string) (string, error) {
	u, err := url.Parse(strings.TrimRight(base, "/"))
	if err != nil || u.Hostname() == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", fmt.Errorf("got %q, want an absolute https URL", base)
	}
	host := strings.ToLower(u.Hostname())
	if rest, ok := strings.CutPrefix(host, "api."); ok && strings.Trim(u.Path, "/") == "" && strings.Contains(rest, ".") {
		host = rest
	}
	return host, nil
}

// parseGitHubURL reads owner and name from a git remote URL on host, in
// the forms git and GitHub write one: https://[user@]HOST[:port]/O/R[.git],
// ssh://git@HOST[:port]/O/R[.git] and git@HOST:O/R[.git]. A URL on any
// other host, in any other form, or whose OWNER/NAME graph.ParseRepoName
// refuses is not one: ok is false.
//
// Departure from the original (docs/compatibility.md#the-host-a-checkouts-origin-must-be-on): the origin must be on the operator's GitHub host, not any host.
func parseGitHubURL(raw, host string) (owner, name string, ok bool) {
	var h, p string
	switch {
	case strings.HasPrefix(raw, "https://"), strings.HasPrefix(raw, "ssh://"):
		u, err := url.Parse(raw)
		if err != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
			return "", "", false
		}
		if u.Scheme == "ssh" && (u.User == nil || u.User.Username() != "git") {
			return "", "", false
		}
		h, p = u.Hostname(), u.Path
	case strings.HasPrefix(raw, "git@"):
		h, p, ok = strings.Cut(strings.TrimPrefix(raw, "git@"), ":")
		if !ok || strings.HasPrefix(p, "/") {
			return "", "", false
		}
	default:
		return "", "", false
	}
	if host == "" || !strings.EqualFold(h, host) {
		return "", "", false
	}
	p = strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(p, "/"), "/"), ".git")
	r, err := graph.ParseRepoName(p)
	if err != nil {
		return "", "", false
	}
	return r.Owner, r.Name, true
}
