package builtins

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

func publishCtx(t *testing.T, in graph.Integration, initialized bool) *graph.Context {
	ctx := obCtx(in, &graph.Node{ID: "plan-approval", Actor: graph.ActorHuman}, t.TempDir())
	ctx.Settings.RepoInitialized = initialized
	ctx.Params["artifact"] = "contribution.md"
	return ctx
}

func TestPublishArtifactPostsTheFileInAnUnadoptedRepository(t *testing.T) {
	fake := &obFake{}
	ctx := publishCtx(t, fake, false)
	obWriteFile(t, itemDir(ctx), "contribution.md", "## Goal\n\nship it\n")
	r, err := publishArtifact{}.Run(ctx)
	if err != nil || r.Status != graph.StatusPass || r.Data["posted"] != true || r.Data["artifact"] != "contribution.md" {
		t.Fatalf("got %s %v %v, want posted", r.Status, r.Data, err)
	}
	body := fake.posted()[0]
	if !strings.Contains(body, "ship it") || !strings.Contains(body, "`contribution.md`") || !isSelfAuthored(body) {
		t.Errorf("posted body:\n%s", body)
	}
}

func TestPublishArtifactSkips(t *testing.T) {
	cases := []struct {
		name        string
		initialized bool
		prep        func(t *testing.T, ctx *graph.Context)
	}{
		{"an adopted repository carries the file", true, func(t *testing.T, ctx *graph.Context) {
			obWriteFile(t, itemDir(ctx), "contribution.md", "x")
		}},
		{"a missing artifact publishes nothing and blocks nothing", false, nil},
		{"no artifact named", false, func(t *testing.T, ctx *graph.Context) { delete(ctx.Params, "artifact") }},
		{"a directory is not an artifact", false, func(t *testing.T, ctx *graph.Context) {
			os.Mkdir(filepath.Join(itemDir(ctx), "contribution.md"), 0o755)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := &obFake{}
			ctx := publishCtx(t, fake, tc.initialized)
			if tc.prep != nil {
				tc.prep(t, ctx)
			}
			r, err := publishArtifact{}.Run(ctx)
			if err != nil || r.Status != graph.StatusSkip {
				t.Fatalf("got %s %v, want skip", r.Status, err)
			}
			if len(fake.Calls) > 0 {
				t.Errorf("called out: %v", fake.ops())
			}
		})
	}
}

func TestPublishArtifactNeverPublishesThroughALinkOutOfTheSpecFolder(t *testing.T) {
	fake := &obFake{}
	ctx := publishCtx(t, fake, false)
	secret := obWriteFile(t, t.TempDir(), "id_rsa", "PRIVATE KEY")
	if err := os.Symlink(secret, filepath.Join(itemDir(ctx), "contribution.md")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	r, _ := publishArtifact{}.Run(ctx)
	if len(fake.posted()) > 0 {
		t.Fatalf("published through a link: %q", fake.posted())
	}
	if r.Status != graph.StatusPass || r.Data["error"] == nil {
		t.Errorf("got %s %v, want a degraded pass", r.Status, r.Data)
	}
}

func TestPublishArtifactRefusesAnEscapingName(t *testing.T) {
	ctx := publishCtx(t, &obFake{}, false)
	ctx.Params["artifact"] = "../requirements.md"
	if _, err := (publishArtifact{}).Run(ctx); err == nil {
		t.Error("an escaping artifact name was accepted")
	}
}
