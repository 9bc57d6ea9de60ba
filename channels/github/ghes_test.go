package github

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

// A GitHub Enterprise Server named by routing.workspace.defaultHost alone
// is where the integration's API is too, not github.com.
func TestDefaultHostAloneNamesTheAPIsHost(t *testing.T) {
	for _, tc := range []struct{ config, want string }{
		{"integrations:\n  github:\n    transport: api\n", DefaultBaseURL},
		{"routing:\n  workspace:\n    defaultHost: github.com\nintegrations:\n  github:\n    transport: api\n", DefaultBaseURL},
		{"routing:\n  workspace:\n    defaultHost: ghe.example\nintegrations:\n  github:\n    transport: api\n", "https://ghe.example/api/v3"},
		{"routing:\n  workspace:\n    defaultHost: ghe.example\nintegrations:\n  github:\n    transport: api\n    api: {baseUrl: 'https://ghe.example/api/v3'}\n", "https://ghe.example/api/v3"},
	} {
		in, err := FromConfig(cliConfig(t, tc.config), env(map[string]string{"GH_TOKEN": "t"}))
		if err != nil {
			t.Fatalf("%s: %v", tc.config, err)
		}
		if got := in.transport.(*apiTransport).base.String(); got != tc.want {
			t.Errorf("%s: base %s, want %s", tc.config, got, tc.want)
		}
	}
	in, err := FromConfig(cliConfig(t, "routing:\n  workspace:\n    defaultHost: ghe.example\nintegrations:\n  github:\n    transport: api\n    api: {baseUrl: 'https://gh-proxy.corp.example/api/v3'}\n"), env(map[string]string{"GH_TOKEN": "t"}))
	if err != nil || in.transport.(*apiTransport).base.String() != "https://gh-proxy.corp.example/api/v3" {
		t.Errorf("a proxy's base URL beside defaultHost: got %v", err)
	}
	_, err = FromConfig(cliConfig(t, "routing:\n  workspace:\n    defaultHost: 'ghe.example/x'\nintegrations:\n  github: {}\n"), env(nil))
	var ce *graph.ConfigError
	if !errors.As(err, &ce) || ce.Key != "routing.workspace.defaultHost" {
		t.Errorf("a bad defaultHost: got %v", err)
	}
}

// gh asks github.com unless told otherwise: on a GitHub Enterprise Server
// every run names its host.
func TestTheCLITransportAsksTheEnterpriseHost(t *testing.T) {
	for base, want := range map[string][]string{
		"":                           nil,
		"https://api.github.com":     nil,
		"https://ghe.example/api/v3": {"--hostname", "ghe.example"},
	} {
		runs := fakeGH(t, `[]`)
		in, err := New(Options{Transport: TransportCLI, BaseURL: base, Env: env(nil)})
		if err != nil || in.Available() != nil {
			t.Fatalf("%s: %v %v", base, err, in.Available())
		}
		if _, err := in.Call(OpListLabels, map[string]any{"ref": "github:acme/shop#3"}); err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		argv, _ := run(t, runs, 1)
		i := slices.Index(argv, "--hostname")
		switch {
		case want == nil && i >= 0:
			t.Errorf("%s: gh %q names a host", base, argv)
		case want != nil && (i < 0 || !slices.Equal(argv[i:i+2], want)):
			t.Errorf("%s: gh %q, want %q", base, argv, want)
		}
	}
}

// Under GitHub Actions the runner names its API in $GITHUB_API_URL (an
// Enterprise Server's runner its own): the integration calls it there
// when the operator's config names no host, and the config wins when it
// does. Outside Actions the variable is not read.
func TestTheRunnersAPIURLIsUsedWhenTheConfigNamesNoHost(t *testing.T) {
	const api = "transport: api\n"
	runner := map[string]string{"GH_TOKEN": "t", "GITHUB_ACTIONS": "true", "GITHUB_API_URL": "https://ghe.example/api/v3"}
	for _, tc := range []struct {
		name, config string
		env          map[string]string
		want         string
	}{
		{"no config, a runner", "integrations:\n  github:\n    " + api, runner, "https://ghe.example/api/v3"},
		{"not a runner", "integrations:\n  github:\n    " + api, map[string]string{"GH_TOKEN": "t", "GITHUB_API_URL": "https://ghe.example/api/v3"}, DefaultBaseURL},
		{"a runner naming none", "integrations:\n  github:\n    " + api, map[string]string{"GH_TOKEN": "t", "GITHUB_ACTIONS": "true"}, DefaultBaseURL},
		{"the config's baseUrl wins", "integrations:\n  github:\n    " + api + "    api: {baseUrl: 'https://gh-proxy.corp.example/api/v3'}\n", runner, "https://gh-proxy.corp.example/api/v3"},
		{"the config's defaultHost wins", "routing:\n  workspace:\n    defaultHost: github.com\nintegrations:\n  github:\n    " + api, runner, DefaultBaseURL},
	} {
		in, err := FromConfig(cliConfig(t, tc.config), env(tc.env))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := in.transport.(*apiTransport).base.String(); got != tc.want {
			t.Errorf("%s: base %s, want %s", tc.name, got, tc.want)
		}
	}
	bad := map[string]string{"GH_TOKEN": "t", "GITHUB_ACTIONS": "true", "GITHUB_API_URL": "http://ghe.example/api/v3"}
	if _, err := FromConfig(cliConfig(t, "integrations:\n  github:\n    "+api), env(bad)); err == nil || !strings.Contains(err.Error(), "$GITHUB_API_URL") {
		t.Errorf("a runner's plain-http API URL: got %v, want an error naming $GITHUB_API_URL", err)
	}
}

func TestARefusedCredentialIsA401Or403ThatIsNoRateLimit(t *testing.T) {
	for _, tc := range []struct {
		err  Error
		want bool
	}{
		{Error{Status: 401}, true},
		{Error{Status: 403}, true},
		{Error{Status: 403, RateLimited: true}, false},
		{Error{Status: 404}, false},
		{Error{Status: 502}, false},
		{Error{}, false},
	} {
		if got := tc.err.Refused(); got != tc.want {
			t.Errorf("%+v: Refused %v, want %v", tc.err, got, tc.want)
		}
	}
}
