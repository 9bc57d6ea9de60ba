package route

import (
	"context"
	"errors"
	"fmt"
	"github.com/the-loop/the-loop/builtins"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/policy"
)

const marker = "<!-- the-loop:agent-comment -->"

func TestTheRouterDropsInTheOriginalsOrder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		config string // "" authorizes alice
		d      *delivery
		want   string
	}{
		{"an item nobody bound", "", newComment("d1", "acme/shop", 99, "alice", "approved"), channels.DropNoWorkItem},
		{"a payload naming no item", "", newComment("d2", "acme/shop", 12, "alice", "approved").set("issue", nil), channels.DropNoWorkItem},
		{"another repository's issue of the same number", "", newComment("d3", "acme/other", 12, "alice", "approved"), channels.DropNoWorkItem},
		{"the-loop's marker, from an authorized login", "", newComment("d4", "acme/shop", 12, "alice", "approved\n"+marker), channels.DropSelfAuthored},
		{"the-loop's marker outranks the author", "", newComment("d5", "acme/shop", 12, "mallory", "approved "+marker), channels.DropSelfAuthored},
		{"a bot", "", newComment("d6", "acme/shop", 12, "alice", "approved").bot(), channels.DropSelfAuthored},
		{"someone not on the allowlist", "", newComment("d7", "acme/shop", 12, "mallory", "approved"), channels.DropUnauthorizedActor},
		{"a comment naming nobody", "", newComment("d8", "acme/shop", 12, "", "approved"), channels.DropUnauthorizedActor},
		{"an empty allowlist denies everyone", "routing:\n  authorizedUsers: []\n", newComment("d9", "acme/shop", 12, "alice", "approved"), channels.DropUnauthorizedActor},
		{"a slack id is no GitHub login, even spelled like one", "routing:\n  authorizedUsers:\n    - {slack: alice}\n", newComment("d15", "acme/shop", 12, "alice", "approved"), channels.DropUnauthorizedActor},
		{"a person entry's github id is their login", "routing:\n  authorizedUsers:\n    - {github: Alice, slack: U0ALICE, name: A}\n", newComment("d17", "acme/shop", 12, "alice", "approved"), DropAwaitingStart},
		{"a person's name is no GitHub login", "routing:\n  authorizedUsers:\n    - {name: alice, slack: U0ALICE}\n", newComment("d16", "acme/shop", 12, "alice", "approved"), channels.DropUnauthorizedActor},
		{"an edited comment is read as one, and the item is held", "", newComment("d10", "acme/shop", 12, "alice", "approved").set("action", "edited"), DropAwaitingStart},
		{"a deleted comment nothing acted on", "", newComment("d11", "acme/shop", 12, "alice", "approved").set("action", "deleted"), DropCommentDeleted},
		{"a comment pinned", "", newComment("d18", "acme/shop", 12, "alice", "approved").set("action", "pinned"), DropNotANewComment},
		{"an issues event", "", newComment("d12", "acme/shop", 12, "alice", "").set("comment", nil).set("action", "labeled").as("issues"), DropNotANewComment},
		{"a start is held for", "", newComment("d13", "acme/shop", 12, "alice", "approved"), DropAwaitingStart},
		{"an ambiguous keyword", "", newComment("d14", "acme/shop", 12, "alice", "the-loop start, no, the-loop stop"), DropControlAmbiguous},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.config)
			e.bind("github:acme/shop#12", "")
			before := e.read("docs/specs/issue-12/graph-state.json")
			out, err := e.process(tc.d.build())
			wantDropped(t, out, err, tc.want)
			if after := e.read("docs/specs/issue-12/graph-state.json"); after != before {
				t.Errorf("a dropped delivery changed the state:\n%s", after)
			}
			if e.read(".the-loop/harness-config.yaml") != "" {
				t.Error("a dropped delivery adopted the repository")
			}
			if b := e.binding("github:acme/shop#12"); b.Control != nil {
				t.Errorf("a dropped delivery recorded %+v", b.Control)
			}
		})
	}
}

func TestNothingIsSaidToSomeoneTheRouterDoesNotListenTo(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", channels.CommandStart)
	for _, d := range []*delivery{
		newComment("d1", "acme/shop", 12, "mallory", "the-loop start"),
		newComment("d2", "acme/shop", 12, "alice", "the-loop start "+marker),
		newComment("d3", "acme/shop", 13, "alice", "the-loop start"),
	} {
		out, err := e.process(d.build())
		if err != nil || out.Routed {
			t.Fatalf("%s: %+v %v", d.id, out, err)
		}
	}
	if ops := e.in.ops(); len(ops) != 0 {
		t.Errorf("dropped deliveries made calls: %v", ops)
	}
	if names := e.events.names(); len(names) != 0 {
		t.Errorf("dropped deliveries emitted %v; the ingress says routing.dropped", names)
	}
}

func TestAnOutcomeNamesTheWorkItemAndWhoActed(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", "")
	out, err := e.process(newComment("d1", "ACME/Shop", 12, "mallory", "approved").build())
	wantDropped(t, out, err, channels.DropUnauthorizedActor)
	if out.Fields["work_item"] != "github:acme/shop#12" || out.Fields["actor"] != "mallory" {
		t.Errorf("fields = %v", out.Fields)
	}
	out, err = e.process(newComment("d2", "acme/shop", 40, "alice", "approved").build())
	wantDropped(t, out, err, channels.DropNoWorkItem)
	if got := out.Fields["work_items"]; !slices.Equal(got.([]string), []string{"github:acme/shop#40"}) {
		t.Errorf("work_items = %v", got)
	}
}

func TestAPullRequestCommentReachesTheWorkItemItDelivers(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", channels.CommandStart)
	out, err := e.process(newComment("d1", "acme/shop", 30, "alice", "looks right").onPR("Rate limits.\n\nCloses #12").build())
	f := wantRouted(t, out, err)
	if f["work_item"] != "github:acme/shop#12" || f["pull_request"] != "github:acme/shop#30" {
		t.Errorf("fields = %v", f)
	}
	// its own inner loop was entered, at implementation (an agent's node)
	st := e.state("docs/specs/issue-12/pr-loops/pr-30/graph-state.json")
	if st.CurrentNode != "implementation" || st.Loop != "pdlc-pr-loop" {
		t.Errorf("inner loop: %+v", st)
	}
	// and the outer loop was not touched
	if st := e.state("docs/specs/issue-12/graph-state.json"); st.CurrentNode != "requirements-approval" {
		t.Errorf("outer loop moved to %s", st.CurrentNode)
	}
	// a pull request in another repository addresses its own inner loop
	out, err = e.process(newComment("d2", "acme/api", 5, "alice", "see").onPR("Fixes acme/shop#12").build())
	f = wantRouted(t, out, err)
	if f["pull_request"] != "github:acme/api#5" {
		t.Errorf("fields = %v", f)
	}
	if st := e.state("docs/specs/issue-12/pr-loops/acme__api/pr-5/graph-state.json"); st.CurrentNode != "implementation" {
		t.Errorf("cross-repository inner loop: %+v", st)
	}
	// a pull request linked to nothing bound is no work item
	out, err = e.process(newComment("d3", "acme/shop", 31, "alice", "hm").onPR("Closes #77").build())
	wantDropped(t, out, err, channels.DropNoWorkItem)
	if got := out.Fields["work_items"]; !slices.Equal(got.([]string), []string{"github:acme/shop#31", "github:acme/shop#77"}) {
		t.Errorf("looked for %v", got)
	}
}

func TestABoundPullRequestIsItsOwnWorkItem(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", channels.CommandStart)
	// #12 is a pull request here: bound itself, it is the work item
	out, err := e.process(newComment("d1", "acme/shop", 12, "alice", "approved").onPR("Closes #40").build())
	f := wantRouted(t, out, err)
	if _, ok := f["pull_request"]; ok || f["to"] != "design" {
		t.Errorf("fields = %v", f)
	}
}

func TestLinkedWorkItems(t *testing.T) {
	pr, _ := channels.ParseRef("github:acme/shop#30")
	for _, tc := range []struct {
		body, branch string
		want         []string
	}{
		{"Closes #12", "", []string{"github:acme/shop#12"}},
		{"fixes: #12 and resolves #13", "", []string{"github:acme/shop#12", "github:acme/shop#13"}},
		{"Resolved GH-14", "", []string{"github:acme/shop#14"}},
		{"closes acme/api#3", "", []string{"github:acme/api#3"}},
		{"Fix https://github.com/acme/api/issues/4", "", []string{"github:acme/api#4"}},
		{"", "claude/github-issue-15-x", []string{"github:acme/shop#15"}},
		{"Closes #12", "feature/issue-16", []string{"github:acme/shop#16", "github:acme/shop#12"}},
		{"Closes #12. Also closes #12", "issue-12", []string{"github:acme/shop#12"}},
		{"Closes #30", "", nil},            // itself
		{"see #12; prefixes #13", "", nil}, // no closing keyword
		{"enclosed #12", "", nil},          // not a whole word
		{"Closes #0", "", nil},             // not an issue
		{"closes ../x#3", "", nil},         // not a repository
		{"CLOSES #12", "", []string{"github:acme/shop#12"}},
	} {
		var got []string
		for _, r := range LinkedWorkItems(pr, tc.body, tc.branch) {
			got = append(got, r.String())
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("LinkedWorkItems(%q, %q) = %v, want %v", tc.body, tc.branch, got, tc.want)
		}
	}
}

func TestAnUnreadableBindingsFileIsAnErrorNotADrop(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", channels.CommandStart)
	os.WriteFile(e.bindings.Path(), []byte("{"), 0o600)
	_, err := e.process(newComment("d1", "acme/shop", 12, "alice", "approved").build())
	if err == nil {
		t.Fatal("a corrupt bindings file was read as no bindings")
	}
}

func TestACancelledDeliveryChangesNothing(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", channels.CommandStart)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	before := e.read("docs/specs/issue-12/graph-state.json")
	_, err := e.router.Process(ctx, newComment("d1", "acme/shop", 12, "alice", "approved").build())
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	if e.read("docs/specs/issue-12/graph-state.json") != before {
		t.Error("a cancelled delivery moved the item")
	}
}

func TestNewNeedsACLIConfig(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("New without a CLI config")
	}
	r, err := New(Config{CLI: policy.DefaultCLIConfig()})
	if err != nil || r.bindings.Path() != filepath.Join(policy.DefaultCLIConfig().StateRoot(), "sessions", "bindings.json") {
		t.Errorf("defaults: %v %v", r, err)
	}
}

func TestDeliveriesOfOneWorkItemAreProcessedOneAtATime(t *testing.T) {
	e := newEnv(t, "")
	e.bind("github:acme/shop#12", channels.CommandStart)
	const n = 6
	outs := make([]channels.Outcome, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = e.process(newComment(fmt.Sprintf("d%d", i), "acme/shop", 12, "alice", "Approved").build())
		}()
	}
	wg.Wait()
	moved := 0
	for i := range n {
		switch {
		case errs[i] != nil:
			t.Errorf("delivery %d: %v", i, errs[i])
		case outs[i].Routed && outs[i].Fields["to"] == "design":
			moved++
		case !outs[i].Routed || outs[i].Fields["node"] != "design" || outs[i].Fields["delivery"] != "inbox":
			// the rest reach the agent's node the first moved it to
			t.Errorf("delivery %d: %+v", i, outs[i])
		}
	}
	if moved != 1 {
		t.Errorf("%d deliveries moved the gate, want exactly one", moved)
	}
}

// TestARelayedRecordsOwnLineIsNeverACommand: control keywords are read in
// the words the person wrote, not in the line the-loop adds around them,
// whatever keyword the operator chose.
func TestARelayedRecordsOwnLineIsNeverACommand(t *testing.T) {
	e := newEnv(t, "routing:\n  authorizedUsers: [alice]\n  control:\n    keywords:\n      stop: recorded an answer\n")
	e.bind("github:acme/shop#12", channels.CommandStart)
	record := builtins.StampEnvelope("💬 **the-loop** recorded an answer to the open gate from `slack:U1`:\n\n> approved",
		builtins.Envelope{Type: "gate.feedback", Source: "slack", Actor: map[string]string{"slack": "U1"}})
	out, err := e.process(newComment("d1", "acme/shop", 12, "alice", record).build())
	fields := wantRouted(t, out, err)
	if fields["control"] != nil || fields["to"] != "design" {
		t.Errorf("got %v, want the answer handed to the gate", fields)
	}
}
