package github

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/channels/github/githubtest"
	"github.com/the-loop/the-loop/graph"
	"github.com/the-loop/the-loop/policy"
)

func lookPath(found bool) func(string) (string, error) {
	return func(name string) (string, error) {
		if !found {
			return "", errors.New("not found")
		}
		return "/usr/bin/" + name, nil
	}
}

func TestTheTransportIsChosenAsConfiguredAndNeverFallsBack(t *testing.T) {
	withToken := env(map[string]string{"GITHUB_TOKEN": "t"})
	noToken := env(nil)
	for _, c := range []struct {
		name      string
		transport string
		env       func(string) string
		gh        bool
		want      string // the transport, or what the unavailable error says
	}{
		{"auto takes a token first", "", withToken, true, "api"},
		{"auto takes gh without a token", "auto", noToken, true, "cli"},
		{"auto with neither names both remedies", "auto", noToken, false, "no GitHub transport: set GH_TOKEN or GITHUB_TOKEN for the api transport, or put gh on PATH (integrations.github.cli.binary) for the cli transport"},
		{"api without a token does not fall back to gh", "api", noToken, true, "the GitHub api transport has no token: set GH_TOKEN or GITHUB_TOKEN (integrations.github.api.tokenEnv)"},
		{"cli without gh does not fall back to the token", "cli", withToken, false, "the GitHub cli transport needs gh"},
		{"cli with a token still uses gh", "cli", withToken, true, "cli"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, err := New(Options{Transport: c.transport, Env: c.env, LookPath: lookPath(c.gh)})
			if err != nil {
				t.Fatal(err)
			}
			if in.Available() == nil {
				if in.Transport() != c.want {
					t.Errorf("transport %q, want %q", in.Transport(), c.want)
				}
				return
			}
			if !strings.Contains(in.Available().Error(), c.want) || !errors.Is(in.Available(), graph.ErrIntegrationUnavailable) {
				t.Errorf("unavailable: %v, want %q", in.Available(), c.want)
			}
			_, err = in.Call(OpAddComment, map[string]any{"ref": "github:acme/shop#3", "body": "x"})
			if !errors.Is(err, graph.ErrIntegrationUnavailable) || !strings.HasPrefix(err.Error(), "github add-comment github:acme/shop#3: "+c.want) {
				t.Errorf("call: %v", err)
			}
		})
	}
}

func TestABaseURLThatWouldLeakTheTokenIsAConfigError(t *testing.T) {
	for url, ok := range map[string]bool{
		"https://ghe.example.com/api/v3":  true,
		"http://127.0.0.1:8080":           true,
		"http://localhost:9/api":          true,
		"http://ghe.example.com/api/v3":   false,
		"ftp://ghe.example.com":           false,
		"ghe.example.com":                 false,
		"https://user:pw@ghe.example.com": false,
		"https://ghe.example.com/?x=1":    false,
	} {
		_, err := New(Options{BaseURL: url})
		var ce *graph.ConfigError
		if ok != (err == nil) || (!ok && (!errors.As(err, &ce) || ce.Key != "integrations.github.api.baseUrl")) {
			t.Errorf("%s: got %v", url, err)
		}
	}
	if _, err := New(Options{Transport: "ssh"}); err == nil || !strings.Contains(err.Error(), `got "ssh", want auto, api or cli`) {
		t.Errorf("unknown transport: %v", err)
	}
}

func cliConfig(t *testing.T, body string) *policy.CLIConfig {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cli-config.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := policy.LoadCLIConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestFromConfigReadsTheIntegrationsGithubBlock(t *testing.T) {
	srv := fakeGitHub(t, githubtest.Issue{})
	srv.SetToken("from-my-var")
	cfg := cliConfig(t, "integrations:\n  github:\n    transport: api\n    api:\n      tokenEnv: [MY_TOKEN, GH_TOKEN]\n      baseUrl: "+srv.URL+"\n")
	in, err := FromConfig(cfg, env(map[string]string{"GH_TOKEN": "not-this-one", "MY_TOKEN": "from-my-var"}))
	if err != nil || in.Transport() != TransportAPI {
		t.Fatalf("got %v, %v", in, err)
	}
	if _, err := in.Call(OpListLabels, map[string]any{"ref": "github:acme/shop#3"}); err != nil {
		t.Errorf("a call with the first variable's token to the configured base: %v", err)
	}

	cfg = cliConfig(t, "integrations:\n  github:\n    api: {baseUrl: 'http://ghe.example.com'}\n")
	_, err = FromConfig(cfg, env(nil))
	var ce *graph.ConfigError
	if !errors.As(err, &ce) || ce.File != cfg.Path || !strings.Contains(err.Error(), "key integrations.github.api.baseUrl") {
		t.Errorf("got %v, want a config error naming the file and key", err)
	}
}

func TestOnlyADeclaredBlockTurnsTheIntegrationOnForMovingVerbs(t *testing.T) {
	in, err := Configured(policy.DefaultCLIConfig(), env(map[string]string{"GH_TOKEN": "t"}))
	if err != nil || in.Name() != "none" {
		t.Errorf("no block: got %v, %v; want the none integration even with a token set", in, err)
	}
	in, err = Configured(cliConfig(t, "integrations:\n  github: {}\n"), env(map[string]string{"GH_TOKEN": "t"}))
	if err != nil || in.Name() != "github" {
		t.Errorf("a declared block: got %v, %v", in, err)
	}
}

func TestParseRefAndStringRoundTrip(t *testing.T) {
	r, err := ParseRef("github:acme/shop#12")
	if err != nil || r != (Ref{Owner: "acme", Repo: "shop", Number: 12}) || r.String() != "github:acme/shop#12" {
		t.Errorf("got %+v, %v", r, err)
	}
	if _, err := ParseRef("acme/shop#12"); err == nil {
		t.Error("a ref without its provider was accepted")
	}
}
