package route

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/github"
	"github.com/the-loop/the-loop/graph"
)

func TestAnApprovalByAnAuthorizedUserMovesTheGateItWaitsAt(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", channels.CommandStart)
	d := newComment("d1", "acme/shop", 12, "alice", "Approved")
	id := d.p["comment"].(map[string]any)["id"]
	out, err := e.process(d.build())
	f := wantRouted(t, out, err)
	if f["node"] != "requirements-approval" || f["status"] != "pass" || f["outcome"] != "approved" || f["to"] != "design" {
		t.Errorf("fields = %v", f)
	}
	if st := e.state("docs/specs/issue-12/graph-state.json"); st.CurrentNode != "design" {
		t.Errorf("the item is at %q, want design", st.CurrentNode)
	}
	if req := e.read("docs/specs/issue-12/requirements.md"); !strings.Contains(req, "**@alice** wrote:") {
		t.Errorf("the approval was not recorded in requirements.md:\n%s", req)
	}
	if got := e.in.reactions(); !slices.Equal(got, []string{"eyes", "hooray"}) {
		t.Errorf("reactions = %v, want eyes then hooray", got)
	}
	for _, c := range e.in.calls {
		if c.Op == OpAddReaction && (c.Params["ref"] != "github:acme/shop#12" || c.Params[github.ParamCommentID] != id) {
			t.Errorf("a reaction went to %v", c.Params)
		}
	}
	if _, ok := e.events.find("graph.advanced"); !ok {
		t.Errorf("events: %v", e.events.names())
	}
	// the checkout was proved the work item's own, so it was adopted on the way
	if cfg := e.read(".the-loop/harness-config.yaml"); !strings.Contains(cfg, `owner: "acme"`) || !strings.Contains(cfg, `repo: "shop"`) {
		t.Errorf("adopted config:\n%s", cfg)
	}
}

func TestWhatIsNotAnAnswerLeavesTheGateWhereItWas(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    *delivery
		want string
	}{
		{"an unauthorized actor", newComment("d1", "acme/shop", 12, "mallory", "Approved"), channels.DropUnauthorizedActor},
		{"the-loop's own comment", newComment("d2", "acme/shop", 12, "alice", "Approved\n\n🤖 _the-loop, autonomous comment_\n"+marker), channels.DropSelfAuthored},
		{"an ambiguous keyword", newComment("d3", "acme/shop", 12, "alice", "Approved. the-loop pause, or the-loop stop?"), DropControlAmbiguous},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "")
			e.bind("github:acme/shop#12", channels.CommandStart)
			before := e.read("docs/specs/issue-12/graph-state.json")
			out, err := e.process(tc.d.build())
			wantDropped(t, out, err, tc.want)
			if e.read("docs/specs/issue-12/graph-state.json") != before {
				t.Error("the state changed")
			}
			if !e.binding("github:acme/shop#12").Started() {
				t.Error("the start record changed")
			}
		})
	}
}

func TestAnAmbiguousCommandIsRecordedAndAnsweredConfused(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", channels.CommandStart)
	e.process(newComment("d1", "acme/shop", 12, "alice", "the-loop pause, the-loop stop").build())
	rec, ok := e.events.find("control.ambiguous")
	if !ok || !slices.Equal(rec.Fields["commands"].([]string), []string{"stop", "pause"}) || rec.Fields["actor"] != "alice" {
		t.Errorf("control.ambiguous = %+v (%v)", rec, e.events.names())
	}
	if got := e.in.reactions(); !slices.Equal(got, []string{"confused"}) {
		t.Errorf("reactions = %v", got)
	}
}

func TestStartAdoptsAnUnadoptedCheckoutOfTheWorkItemsRepository(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#7", "")
	out, err := e.process(newComment("d1", "acme/shop", 7, "alice", "the-loop start").build())
	f := wantRouted(t, out, err)
	if f["control"] != "start" || f["effect"] != "started" || f["entered"] != "phase-selection" {
		t.Errorf("fields = %v", f)
	}
	cfg := e.read(".the-loop/harness-config.yaml")
	if !strings.Contains(cfg, "Written by the-loop when it adopted this repository") || !strings.Contains(cfg, `owner: "acme"`) {
		t.Errorf("harness config:\n%s", cfg)
	}
	rec, ok := e.events.find("harness.config_scaffolded")
	if !ok || rec.Fields["work_item"] != "github:acme/shop#7" || rec.Fields["repo"] != "acme/shop" {
		t.Errorf("harness.config_scaffolded = %+v", rec)
	}
	b := e.binding("github:acme/shop#7")
	if !b.Started() || b.Control.Actor != "alice" || b.Control.Delivery != "d1" {
		t.Errorf("start record = %+v", b.Control)
	}
	st := e.state("docs/specs/issue-7/graph-state.json")
	if st.CurrentNode != "phase-selection" || st.Loop != graph.WorkItemLoop || st.Parked == nil {
		t.Errorf("state = %+v, want parked at phase-selection", st)
	}
	if rec, ok := e.events.find("control.command"); !ok || rec.Fields["effect"] != "started" {
		t.Errorf("control.command = %+v", rec)
	}
	// eyes when it acted, hooray when the item entered its loop
	if got := e.in.reactions(); !slices.Equal(got, []string{"eyes", "hooray"}) {
		t.Errorf("reactions = %v", got)
	}
	// a second start changes nothing
	before := e.read("docs/specs/issue-7/graph-state.json")
	out, err = e.process(newComment("d2", "acme/shop", 7, "alice", "the-loop start").build())
	if f := wantRouted(t, out, err); f["entered"] != nil {
		t.Errorf("a second start entered again: %v", f)
	}
	if e.read("docs/specs/issue-7/graph-state.json") != before {
		t.Error("a second start changed the state")
	}
}

func TestStartInACheckoutWhoseTheLoopLinksOutEntersTheLoopOnTheDefaults(t *testing.T) {
	e := newEnv(t, "")
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(e.checkout, ".the-loop")); err != nil {
		t.Fatal(err)
	}
	e.bind("github:acme/shop#7", "")
	out, err := e.process(newComment("d1", "acme/shop", 7, "alice", "the-loop start").build())
	f := wantRouted(t, out, err)
	if f["effect"] != "started" || f["entered"] != "phase-selection" {
		t.Errorf("fields = %v", f)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Error("wrote through the link out of the checkout")
	}
	rec, ok := e.events.find("harness.config_scaffold_failed")
	if !ok || rec.Fields["work_item"] != "github:acme/shop#7" {
		t.Errorf("harness.config_scaffold_failed = %+v (%v)", rec, e.events.names())
	}
	if _, ok := e.events.find("graph.link_failed"); ok {
		t.Error("the delivery failed")
	}
}

func TestStartNeverAdoptsAForeignCheckout(t *testing.T) {
	for name, origin := range map[string]string{
		"another repository": "git@github.com:evil/shop.git",
		"no origin":          "",
		"not GitHub":         "https://gitlab.com/acme/shop.git",
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, "")
			e.checkout = e.copyFixture(origin)
			e.bind("github:acme/shop#7", "")
			out, err := e.process(newComment("d1", "acme/shop", 7, "alice", "the-loop start").build())
			wantDropped(t, out, err, DropControlRejected)
			if out.Fields["why"] != DropForeignCheckout {
				t.Errorf("fields = %v", out.Fields)
			}
			if _, err := os.Stat(filepath.Join(e.checkout, ".the-loop")); !errors.Is(err, os.ErrNotExist) {
				t.Error("a foreign checkout was adopted")
			}
			if e.read("docs/specs/issue-7/graph-state.json") != "" {
				t.Error("a foreign checkout's item was entered")
			}
			if e.binding("github:acme/shop#7").Control != nil {
				t.Error("a refused start was recorded")
			}
			if rec, ok := e.events.find("control.rejected"); !ok || rec.Fields["reason"] != DropForeignCheckout {
				t.Errorf("control.rejected = %+v", rec)
			}
			if got := e.in.reactions(); !slices.Equal(got, []string{"confused"}) {
				t.Errorf("reactions = %v", got)
			}
		})
	}
}

func TestAForeignCheckoutIsNeverDriven(t *testing.T) {
	e := newEnv(t, "")
	e.checkout = e.copyFixture("https://github.com/evil/shop")
	e.bind("github:acme/shop#12", channels.CommandStart)
	before := e.read("docs/specs/issue-12/graph-state.json")
	out, err := e.process(newComment("d1", "acme/shop", 12, "alice", "Approved").build())
	wantDropped(t, out, err, DropForeignCheckout)
	if e.read("docs/specs/issue-12/graph-state.json") != before || e.read(".the-loop/harness-config.yaml") != "" {
		t.Error("a foreign checkout was written")
	}
}

func TestAContributionNeverAdopts(t *testing.T) {
	t.Run("contribute", func(t *testing.T) {
		e := newEnv(t, "")
		e.bind("github:acme/shop#7", "")
		out, err := e.process(newComment("d1", "acme/shop", 7, "alice", "the-loop contribute\n\nGoal: faster links").build())
		f := wantRouted(t, out, err)
		if f["control"] != "contribute" || f["entered"] != "goal-definition" {
			t.Errorf("fields = %v", f)
		}
		if st := e.state("docs/specs/issue-7/graph-state.json"); st.Loop != graph.ContributionLoop {
			t.Errorf("loop = %q", st.Loop)
		}
		if !e.binding("github:acme/shop#7").Started() {
			t.Error("contribute does not arm")
		}
		// and a later comment on it adopts nothing either
		e.process(newComment("d2", "acme/shop", 7, "alice", "Goal: faster links\nSuccess criteria:\n- p99 under 50ms").build())
		if e.read(".the-loop/harness-config.yaml") != "" {
			t.Error("a contribution adopted its host repository")
		}
	})
	t.Run("a start on an item walking the contribution loop", func(t *testing.T) {
		e := newEnv(t, "")
		writeFile(t, filepath.Join(e.checkout, "docs/specs/issue-7/graph-state.json"),
			`{"version": 1, "workItem": "issue-7", "currentNode": "goal-definition", "loop": "pdlc-contribution-loop"}`)
		e.bind("github:acme/shop#7", "")
		out, err := e.process(newComment("d1", "acme/shop", 7, "alice", "the-loop start").build())
		wantRouted(t, out, err)
		if e.read(".the-loop/harness-config.yaml") != "" {
			t.Error("a contribution adopted its host repository")
		}
		if st := e.state("docs/specs/issue-7/graph-state.json"); st.Loop != graph.ContributionLoop {
			t.Errorf("a start re-shaped a contribution into %q", st.Loop)
		}
	})
}

func TestDoWalksTheAdhocLoop(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#7", "")
	out, err := e.process(newComment("d1", "acme/shop", 7, "alice", "the-loop do").build())
	f := wantRouted(t, out, err)
	if f["control"] != "do" || f["entered"] != "work" {
		t.Errorf("fields = %v", f)
	}
	if st := e.state("docs/specs/issue-7/graph-state.json"); st.Loop != graph.AdhocLoop {
		t.Errorf("loop = %q", st.Loop)
	}
}

func TestTheStartRequirementHoldsAnItemUntilStart(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", "")
	out, err := e.process(newComment("d1", "acme/shop", 12, "alice", "Approved").build())
	wantDropped(t, out, err, DropAwaitingStart)
	if got := e.in.reactions(); len(got) != 0 {
		t.Errorf("a held comment was reacted to: %v", got)
	}
	// without the requirement, the same comment moves it
	e2 := newEnv(t, "routing:\n  authorizedUsers: [alice]\n  control:\n    requireStartCommand: false\n")
	e2.bind("github:acme/shop#12", "")
	out, err = e2.process(newComment("d1", "acme/shop", 12, "alice", "Approved").build())
	if f := wantRouted(t, out, err); f["to"] != "design" {
		t.Errorf("fields = %v", f)
	}
	// and with control off there is no start to wait for, nor keywords
	e3 := newEnv(t, "routing:\n  authorizedUsers: [alice]\n  control:\n    enabled: false\n")
	e3.bind("github:acme/shop#12", "")
	out, err = e3.process(newComment("d1", "acme/shop", 12, "alice", "Approved. the-loop stop").build())
	if f := wantRouted(t, out, err); f["to"] != "design" {
		t.Errorf("fields = %v", f)
	}
}

func TestPauseResumeAndStop(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", channels.CommandStart)
	ref := "github:acme/shop#12"
	step := func(id, body string) map[string]any {
		t.Helper()
		out, err := e.process(newComment(id, "acme/shop", 12, "alice", body).build())
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]any{"routed": out.Routed, "reason": out.Reason}
		for k, v := range out.Fields {
			m[k] = v
		}
		return m
	}
	if got := step("d1", "the-loop pause"); got["effect"] != "paused" || e.binding(ref).Command() != "pause" {
		t.Errorf("pause: %v", got)
	}
	if got := step("d2", "Approved"); got["reason"] != DropPaused {
		t.Errorf("a paused item was driven: %v", got)
	}
	if got := step("d3", "the-loop resume"); got["effect"] != "resumed" || !e.binding(ref).Started() {
		t.Errorf("resume: %v", got)
	}
	if got := step("d4", "the-loop stop"); got["effect"] != "stopped" || e.binding(ref).Started() {
		t.Errorf("stop: %v", got)
	}
	if got := step("d5", "Approved"); got["reason"] != DropStopped {
		t.Errorf("a stopped item was driven: %v", got)
	}
	// resume wakes a pause, never a stop
	if got := step("d6", "the-loop resume"); got["reason"] != DropControlRejected || got["why"] != "nothing-to-resume" {
		t.Errorf("resume after stop: %v", got)
	}
	if e.binding(ref).Command() != "stop" {
		t.Error("a refused resume was recorded")
	}
	if got := step("d7", "the-loop cleanup"); got["effect"] != "recorded" || e.binding(ref).Started() {
		t.Errorf("cleanup: %v", got)
	}
	if st := e.state("docs/specs/issue-12/graph-state.json"); st.CurrentNode != "requirements-approval" {
		t.Errorf("control commands moved the item to %s", st.CurrentNode)
	}
}

func TestExecuteIsHandedToTheGate(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#7", channels.CommandStart)
	out, err := e.process(newComment("d1", "acme/shop", 7, "alice", "the-loop execute").build())
	f := wantRouted(t, out, err)
	// the item had not entered its loop: the comment enters it, and the
	// phase-selection gate it lands on reads the keyword and moves
	if f["entered"] != "phase-selection" || f["node"] != "phase-selection" || f["outcome"] != "selected" {
		t.Errorf("fields = %v", f)
	}
	if rec, ok := e.events.find("control.command"); !ok || rec.Fields["effect"] != "handed-to-graph" {
		t.Errorf("control.command = %+v", rec)
	}
	if !e.binding("github:acme/shop#7").Started() || e.binding("github:acme/shop#7").Command() != "start" {
		t.Error("execute replaced the start record")
	}
}

func TestAnItemWithNoSpecFolderIsSkippedButItsRepositoryAdopted(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#99", channels.CommandStart)
	out, err := e.process(newComment("d1", "acme/shop", 99, "alice", "Approved").build())
	wantDropped(t, out, err, DropNoSpecDir)
	if rec, ok := e.events.find("graph.skipped"); !ok || rec.Fields["reason"] != "no-spec-dir" || rec.Fields["spec_dir"] != "docs/specs" {
		t.Errorf("graph.skipped = %+v", rec)
	}
	if e.read(".the-loop/harness-config.yaml") == "" {
		t.Error("the repository was not adopted")
	}
	// a start on it is recorded all the same
	out, err = e.process(newComment("d2", "acme/shop", 99, "alice", "the-loop start").build())
	if f := wantRouted(t, out, err); f["graph"] != DropNoSpecDir {
		t.Errorf("fields = %v", f)
	}
}

func TestAFaultFailsClosedAndIsAnError(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", channels.CommandStart)
	broken := `{"version": 1, "currentNode": 12}`
	writeFile(t, filepath.Join(e.checkout, "docs/specs/issue-12/graph-state.json"), broken)
	out, err := e.process(newComment("d1", "acme/shop", 12, "alice", "Approved").build())
	if err == nil {
		t.Fatalf("a corrupt state file was not a fault: %+v", out)
	}
	if e.read("docs/specs/issue-12/graph-state.json") != broken {
		t.Error("the corrupt state file was rewritten")
	}
	if rec, ok := e.events.find("graph.link_failed"); !ok || rec.Fields["action"] != "advance" {
		t.Errorf("graph.link_failed = %+v", rec)
	}
	if got := e.in.reactions(); !slices.Equal(got, []string{"confused"}) {
		t.Errorf("reactions = %v", got)
	}
}

func TestABrokenHarnessConfigIsAFault(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", channels.CommandStart)
	writeFile(t, filepath.Join(e.checkout, ".the-loop/harness-config.yaml"), "workflow: [\n")
	before := e.read("docs/specs/issue-12/graph-state.json")
	if _, err := e.process(newComment("d1", "acme/shop", 12, "alice", "Approved").build()); err == nil {
		t.Fatal("a broken harness config was not a fault")
	}
	if e.read("docs/specs/issue-12/graph-state.json") != before {
		t.Error("the state changed")
	}
}

func TestReactionsAreBestEffort(t *testing.T) {
	t.Run("a failing integration", func(t *testing.T) {
		e := newEnv(t, "")
		e.in.fail = map[string]error{OpAddReaction: errors.New("502 from GitHub")}
		e.bind("github:acme/shop#12", channels.CommandStart)
		out, err := e.process(newComment("d1", "acme/shop", 12, "alice", "Approved").build())
		if f := wantRouted(t, out, err); f["to"] != "design" {
			t.Errorf("fields = %v", f)
		}
		if rec, ok := e.events.find("reaction.failed"); !ok || rec.Fields["content"] != "eyes" {
			t.Errorf("reaction.failed = %+v", rec)
		}
	})
	t.Run("the none integration", func(t *testing.T) {
		e := newEnv(t, "")
		var err error
		e.router, err = New(Config{CLI: e.router.cli, Events: e.events})
		if err != nil {
			t.Fatal(err)
		}
		e.bind("github:acme/shop#12", channels.CommandStart)
		out, err := e.process(newComment("d1", "acme/shop", 12, "alice", "Approved").build())
		wantRouted(t, out, err)
		if _, ok := e.events.find("reaction.failed"); ok {
			t.Error("the none integration's reactions failed loudly")
		}
	})
	t.Run("turned off", func(t *testing.T) {
		e := newEnv(t, "routing:\n  authorizedUsers: [alice]\n  reactions:\n    enabled: false\n")
		e.bind("github:acme/shop#12", channels.CommandStart)
		e.process(newComment("d1", "acme/shop", 12, "alice", "Approved").build())
		if got := e.in.reactions(); len(got) != 0 {
			t.Errorf("reactions = %v", got)
		}
	})
	t.Run("one moment turned off", func(t *testing.T) {
		e := newEnv(t, "routing:\n  authorizedUsers: [alice]\n  reactions:\n    started: \"\"\n    completed: rocket\n")
		e.bind("github:acme/shop#12", channels.CommandStart)
		e.process(newComment("d1", "acme/shop", 12, "alice", "Approved").build())
		if got := e.in.reactions(); !slices.Equal(got, []string{"rocket"}) {
			t.Errorf("reactions = %v", got)
		}
	})
}
