package github

import (
	"errors"
	"slices"
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
