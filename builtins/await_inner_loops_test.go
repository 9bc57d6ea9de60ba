package builtins

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/graph"
)

func ctInnerCtx(t *testing.T, origin string) *graph.Context {
	ctx := ctCtx(t, nil, nil)
	ctx.Node = &graph.Node{ID: "implementation"}
	ctx.Settings.OriginRepo = origin
	return ctx
}

// ctInnerState writes an inner loop's state: repo "" is the origin layout.
func ctInnerState(t *testing.T, ctx *graph.Context, repo string, pr int, current string) {
	t.Helper()
	dir := prLoopsDir + "/"
	if repo != "" {
		key, err := repoStateKey(repo)
		if err != nil {
			t.Fatal(err)
		}
		dir += key + "/"
	}
	ctWrite(t, ctx, dir+"pr-"+strconv.Itoa(pr)+"/graph-state.json", `{"workItem": "issue-1", "currentNode": "`+current+`"}`)
}

func ctDeclareRepos(t *testing.T, ctx *graph.Context, repos ...string) {
	front := "---\ntype: execution-log\n"
	if repos != nil {
		front += "repos:\n"
		for _, r := range repos {
			front += "  - " + r + "\n"
		}
	}
	ctWrite(t, ctx, "execution-log.md", front+"---\n\n# Execution Log\n")
}

func TestAwaitInnerLoopsPassesVacuouslyWithoutInnerLoops(t *testing.T) {
	r := ctRun(t, awaitInnerLoops{}, ctInnerCtx(t, ""))
	ctWantStatus(t, r, graph.StatusPass)
	if r.Data["inner_loops"] != 0 || r.Data["declared"] != 0 {
		t.Errorf("data %v", r.Data)
	}
}

func TestAwaitInnerLoopsWaitsForAnUnfinishedLoop(t *testing.T) {
	ctx := ctInnerCtx(t, "")
	ctInnerState(t, ctx, "", 16, "verification")
	ctInnerState(t, ctx, "", 17, "complete")
	r := ctRun(t, awaitInnerLoops{}, ctx)
	ctWantStatus(t, r, graph.StatusWait)
	if !reflect.DeepEqual(r.Data["pending"], []string{"pr-16"}) || !strings.Contains(r.Messages[0].Text, "pr-16") {
		t.Errorf("got %v %q", r.Data, r.Messages[0].Text)
	}
}

func TestAwaitInnerLoopsPassesWhenEveryLoopIsComplete(t *testing.T) {
	ctx := ctInnerCtx(t, "")
	ctInnerState(t, ctx, "", 16, "complete")
	ctInnerState(t, ctx, "", 17, "complete")
	r := ctRun(t, awaitInnerLoops{}, ctx)
	ctWantStatus(t, r, graph.StatusPass)
	if r.Data["inner_loops"] != 2 {
		t.Errorf("data %v", r.Data)
	}
}

func TestAwaitInnerLoopsHoldsOnACorruptState(t *testing.T) {
	ctx := ctInnerCtx(t, "")
	ctWrite(t, ctx, "pr-loops/pr-16/graph-state.json", "{not json")
	ctWrite(t, ctx, "pr-loops/pr-17/graph-state.json", `["complete"]`)
	r := ctRun(t, awaitInnerLoops{}, ctx)
	ctWantStatus(t, r, graph.StatusWait)
	if !reflect.DeepEqual(r.Data["pending"], []string{"pr-16", "pr-17"}) {
		t.Errorf("pending %v", r.Data["pending"])
	}
}

func TestAwaitInnerLoopsIgnoresFoldersWithoutState(t *testing.T) {
	ctx := ctInnerCtx(t, "")
	ctWrite(t, ctx, "pr-loops/pr-16/notes.md", "x")
	ctWrite(t, ctx, "pr-loops/readme.md", "x")
	ctWantStatus(t, ctRun(t, awaitInnerLoops{}, ctx), graph.StatusPass)
}

func TestAwaitInnerLoopsWaitsForAContributingRepository(t *testing.T) {
	ctx := ctInnerCtx(t, "")
	ctInnerState(t, ctx, "", 16, "complete")
	ctInnerState(t, ctx, "octo/infra", 7, "verification")
	r := ctRun(t, awaitInnerLoops{}, ctx)
	ctWantStatus(t, r, graph.StatusWait)
	if !reflect.DeepEqual(r.Data["pending"], []string{"octo__infra/pr-7"}) {
		t.Errorf("pending %v", r.Data["pending"])
	}
}

func TestAwaitInnerLoopsKeepsSameNumberedPullRequestsApart(t *testing.T) {
	ctx := ctInnerCtx(t, "")
	ctInnerState(t, ctx, "octo/infra", 7, "complete")
	ctInnerState(t, ctx, "octo/app", 7, "self-review")
	r := ctRun(t, awaitInnerLoops{}, ctx)
	ctWantStatus(t, r, graph.StatusWait)
	if !reflect.DeepEqual(r.Data["pending"], []string{"octo__app/pr-7"}) || r.Data["inner_loops"] != 2 {
		t.Errorf("data %v", r.Data)
	}
}

func TestAwaitInnerLoopsWaitsForADeclaredRepositoryWithNoLoop(t *testing.T) {
	ctx := ctInnerCtx(t, "octo/repo")
	ctDeclareRepos(t, ctx, "octo/repo", "octo/infra")
	ctInnerState(t, ctx, "", 16, "complete")
	r := ctRun(t, awaitInnerLoops{}, ctx)
	ctWantStatus(t, r, graph.StatusWait)
	if !reflect.DeepEqual(r.Data["missing_repos"], []string{"octo/infra"}) || !strings.Contains(r.Messages[0].Text, "octo/infra") {
		t.Errorf("got %v %q", r.Data, r.Messages[0].Text)
	}
}

func TestAwaitInnerLoopsPassesWhenEveryDeclaredRepositoryFinished(t *testing.T) {
	ctx := ctInnerCtx(t, "octo/repo")
	ctDeclareRepos(t, ctx, "octo/repo", "octo/infra")
	ctInnerState(t, ctx, "", 16, "complete")
	ctInnerState(t, ctx, "octo/infra", 7, "complete")
	r := ctRun(t, awaitInnerLoops{}, ctx)
	ctWantStatus(t, r, graph.StatusPass)
	if r.Data["declared"] != 2 {
		t.Errorf("data %v", r.Data)
	}
}

func TestAwaitInnerLoopsSaysWhenTheOriginIsUnknown(t *testing.T) {
	ctx := ctInnerCtx(t, "")
	ctDeclareRepos(t, ctx, "octo/repo")
	ctInnerState(t, ctx, "", 16, "complete")
	r := ctRun(t, awaitInnerLoops{}, ctx)
	ctWantStatus(t, r, graph.StatusWait)
	if !strings.Contains(r.Messages[0].Text, "ticketing.github") {
		t.Errorf("got %q", r.Messages[0].Text)
	}
}

func TestAwaitInnerLoopsBlocksOnAnUnusableDeclaredRepositoryPointingAtTheDeclaration(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		line      int
	}{
		{"the repos key", "---\ntype: execution-log\nrepos:\n  - ../../etc\n---\n\n# Log\n", 3},
		{"CRLF", "---\r\ntype: execution-log\r\nstatus: x\r\nrepos: [octo/app, ../../etc]\r\n---\r\n", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctInnerCtx(t, "")
			ctWrite(t, ctx, "execution-log.md", tc.log)
			r := ctRun(t, awaitInnerLoops{}, ctx)
			ctWantStatus(t, r, graph.StatusBlock)
			if m := r.Messages[0]; m.Path != ctSpecRel+"/execution-log.md" || m.Line != tc.line || m.Column != 0 {
				t.Errorf("got %s at %d:%d, want %s at %d", m.Path, m.Line, m.Column, ctSpecRel+"/execution-log.md", tc.line)
			}
		})
	}
}

func TestAwaitInnerLoopsReadsTheFixtureDeclaration(t *testing.T) {
	ctx := ctFixture(t, "issue-7", nil, nil)
	ctx.Settings.OriginRepo = "octo/app"
	ctInnerState(t, ctx, "", 3, "complete")
	r := ctRun(t, awaitInnerLoops{}, ctx)
	ctWantStatus(t, r, graph.StatusWait)
	if !reflect.DeepEqual(r.Data["missing_repos"], []string{"octo/infra"}) {
		t.Errorf("data %v", r.Data)
	}
}

func TestAwaitInnerLoopsTreatsANonListDeclarationAsNone(t *testing.T) {
	ctx := ctInnerCtx(t, "")
	ctWrite(t, ctx, "execution-log.md", "---\nrepos: octo/app\n---\n")
	ctWantStatus(t, ctRun(t, awaitInnerLoops{}, ctx), graph.StatusPass)
	ctDeclareRepos(t, ctx)
	ctWantStatus(t, ctRun(t, awaitInnerLoops{}, ctx), graph.StatusPass)
}

func TestRepoStateKeyRefusesRatherThanSanitises(t *testing.T) {
	for repo, want := range map[string]string{"octo/infra": "octo__infra", " octo/.github ": "octo__.github"} {
		if got, err := repoStateKey(repo); err != nil || got != want {
			t.Errorf("%q: %q %v", repo, got, err)
		}
	}
	// A GitHub Enterprise host before owner/repo, which the original takes,
	// names no inner loop any verb here makes.
	for _, repo := range []string{"../../etc", "a/../b", "a//b", "octo", "", "octo/repo/../..", `a\..\b`, "octo/re po", "ghe.corp.example/octo/infra", "octo/infra.git"} {
		if _, err := repoStateKey(repo); err == nil {
			t.Errorf("%q accepted", repo)
		}
	}
}

func TestAwaitInnerLoopsTakesNoParameters(t *testing.T) {
	if err := (awaitInnerLoops{}).CheckParams(map[string]any{"timeout": 3}); err == nil {
		t.Error("an unknown parameter was accepted")
	}
}
