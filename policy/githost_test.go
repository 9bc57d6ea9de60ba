package policy

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

func TestGitHubHostIsTheOperatorsOneHost(t *testing.T) {
	tests := []struct {
		name, config string
		want         string
		wantErrKey   string
	}{
		{name: "nothing set is github.com", config: "{}\n", want: "github.com"},
		{name: "api.github.com is github.com",
			config: "integrations: {github: {api: {baseUrl: https://api.github.com}}}\n", want: "github.com"},
		{name: "a GHES base URL is its host",
			config: "integrations: {github: {api: {baseUrl: https://GHE.example/api/v3/}}}\n", want: "ghe.example"},
		{name: "a GHES base URL on a port is its host",
			config: "integrations: {github: {api: {baseUrl: \"https://ghe.example:8443/api/v3\"}}}\n", want: "ghe.example"},
		{name: "GHE.com's api subdomain is its host",
			config: "integrations: {github: {api: {baseUrl: https://api.octo.ghe.com}}}\n", want: "octo.ghe.com"},
		{name: "defaultHost alone names the host",
			config: "routing: {workspace: {defaultHost: Ghe.Example}}\n", want: "ghe.example"},
		{name: "defaultHost agreeing with the base URL",
			config: "routing: {workspace: {defaultHost: ghe.example}}\nintegrations: {github: {api: {baseUrl: https://ghe.example/api/v3}}}\n", want: "ghe.example"},
		{name: "defaultHost outranks the base URL (a proxy)",
			config: "routing: {workspace: {defaultHost: ghe.example}}\nintegrations: {github: {api: {baseUrl: https://gh-proxy.corp.example/api/v3}}}\n", want: "ghe.example"},
		{name: "a loopback base URL names no host",
			config: "integrations: {github: {api: {baseUrl: \"http://127.0.0.1:8080\"}}}\n", want: "github.com"},
		{name: "localhost names no host",
			config: "integrations: {github: {api: {baseUrl: \"http://localhost:8080/api/v3\"}}}\n", want: "github.com"},
		{name: "a loopback base URL beside defaultHost",
			config: "routing: {workspace: {defaultHost: ghe.example}}\nintegrations: {github: {api: {baseUrl: \"http://[::1]:8080\"}}}\n", want: "ghe.example"},
		{name: "a base URL that is no URL",
			config: "integrations: {github: {api: {baseUrl: \"ghe.example/api/v3\"}}}\n", wantErrKey: "integrations.github.api.baseUrl"},
		{name: "defaultHost that is a URL",
			config: "routing: {workspace: {defaultHost: \"https://ghe.example\"}}\n", wantErrKey: "routing.workspace.defaultHost"},
		{name: "defaultHost with a port",
			config: "routing: {workspace: {defaultHost: \"ghe.example:22\"}}\n", wantErrKey: "routing.workspace.defaultHost"},
		{name: "defaultHost empty",
			config: "routing: {workspace: {defaultHost: \"\"}}\n", wantErrKey: "routing.workspace.defaultHost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cliEnv(t)
			p := writeCLI(t, t.TempDir(), tt.config)
			c, err := LoadCLIConfig(p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.GitHubHost()
			var ce *graph.ConfigError
			switch {
			case tt.wantErrKey != "":
				if !errors.As(err, &ce) || ce.Key != tt.wantErrKey || ce.File != p {
					t.Fatalf("got %q, %v; want a config error at %s in %s", got, err, tt.wantErrKey, p)
				}
			case err != nil || got != tt.want:
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	var none *CLIConfig
	if got, err := none.GitHubHost(); got != DefaultGitHubHost || err != nil {
		t.Errorf("nil config: got %q, %v", got, err)
	}
}

func TestGitHubAPIBaseOfAHost(t *testing.T) {
	for host, want := range map[string]string{"github.com": "https://api.github.com", "ghe.example": "https://ghe.example/api/v3"} {
		if got := GitHubAPIBase(host); got != want {
			t.Errorf("%s: got %s, want %s", host, got, want)
		}
	}
}

func TestAGHESOriginIsOnlyOnItsHost(t *testing.T) {
	cases := map[string]string{
		"https://ghe.example/acme/shop.git":      "acme/shop",
		"https://GHE.example/acme/shop":          "acme/shop",
		"https://ghe.example:8443/acme/shop.git": "acme/shop",
		"git@ghe.example:acme/shop.git":          "acme/shop",
		"ssh://git@ghe.example:2222/acme/shop":   "acme/shop",
		"https://github.com/acme/shop.git":       "",
		"git@github.com:acme/shop.git":           "",
		"https://other.example/acme/shop.git":    "",
		"https://ghe.example.evil/acme/shop":     "",
		"https://evil/ghe.example/acme/shop":     "",
		"git@ghe.example:acme/shop/extra.git":    "",
	}
	for url, want := range cases {
		owner, name, ok := parseGitHubURL(url, "ghe.example")
		got := ""
		if ok {
			got = owner + "/" + name
		}
		if got != want {
			t.Errorf("%q: got %q, want %q", url, got, want)
		}
	}
	if _, _, ok := parseGitHubURL("https://ghe.example/acme/shop", ""); ok {
		t.Error("an empty host trusted a URL")
	}
}

func TestCheckoutOriginOnAGHESHost(t *testing.T) {
	for url, want := range map[string]string{
		"https://ghe.example/acme/shop.git": "acme/shop",
		"git@ghe.example:acme/shop.git":     "acme/shop",
		"https://github.com/acme/shop.git":  "",
	} {
		root := t.TempDir()
		gitOrigin(t, root, url)
		got, ok := CheckoutOrigin(root, "ghe.example")
		if got != want || ok != (want != "") {
			t.Errorf("%s: got %q %v, want %q", url, got, ok, want)
		}
	}
}

// A checkout cannot widen the trusted host: its own files (a CLI config
// beside it, a git config naming another host) are never read for it.
func TestACheckoutsOwnFilesDoNotWidenTheHost(t *testing.T) {
	_, work := cliEnv(t)
	writeCLI(t, filepath.Join(work, ".the-loop"), "routing: {workspace: {defaultHost: ghe.example}}\n")
	gitOrigin(t, work, "https://ghe.example/acme/shop.git")
	c, err := LoadCLIConfig("")
	if err != nil {
		t.Fatal(err)
	}
	host, err := c.GitHubHost()
	if err != nil || host != DefaultGitHubHost {
		t.Fatalf("got %q, %v; want github.com, the checkout's CLI config unread", host, err)
	}
	if got, ok := CheckoutOrigin(work, host); ok {
		t.Errorf("a GHES origin passed as github.com's: %q", got)
	}
}

func TestInitNamesAGHESOriginOnTheOperatorsHost(t *testing.T) {
	root := newItemRepo(t, "")
	gitOrigin(t, root, "git@ghe.example:acme/shop.git")
	cfg := writeCLI(t, t.TempDir(), "routing: {workspace: {defaultHost: ghe.example}}\n")
	e, err := Open(Options{Repo: root, CLIConfig: cfg, NoAdopt: true})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := e.Init("", true)
	if err != nil || rep.Origin != "acme/shop" {
		t.Fatalf("got %+v, %v", rep, err)
	}
	// the same origin under a github.com operator is no origin at all
	e2, err := Open(Options{Repo: root, CLIConfig: writeCLI(t, t.TempDir(), "{}\n"), NoAdopt: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := e2.Init("", true); err != nil || rep.Origin != "" {
		t.Fatalf("github.com operator: got %+v, %v", rep, err)
	}
	bad := writeCLI(t, t.TempDir(), "routing: {workspace: {defaultHost: \"a/b\"}}\n")
	e3, err := Open(Options{Repo: root, CLIConfig: bad, NoAdopt: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e3.Init("", true); err == nil || !strings.Contains(err.Error(), "defaultHost") {
		t.Fatalf("a bad defaultHost: got %v", err)
	}
}
