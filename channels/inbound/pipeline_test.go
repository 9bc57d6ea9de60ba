package inbound

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/the-loop/the-loop/channels"
	"github.com/the-loop/the-loop/channels/route"
)

// row is one reading of a work item's graph, set up for real: a checkout,
// its bindings and its graph-state.json.
type row struct {
	name  string
	setup func(w *world)
	// gate is what the read must return.
	gate channels.Gate
}

// rows are the seed's table of the three-valued read, row by row.
var rows = []row{
	{"parked at a human gate", func(w *world) { w.bind(workRef, w.checkout, "") }, channels.GateOpen},
	{"at a node no person answers", func(w *world) {
		w.bind(workRef, w.checkout, "")
		w.setState("design")
	}, channels.GateNone},
	{"no graph coupling", func(w *world) {
		w.rebuildWith("  graph:\n    enabled: false\n")
		w.bind(workRef, w.checkout, "")
	}, channels.GateNone},
	{"bound to a thread and no checkout", func(w *world) { w.bind(workRef, "", "") }, channels.GateUnknown},
	{"not started under requireStartCommand", func(w *world) { w.bind(workRef, w.checkout, "-") }, channels.GateUnknown},
	{"paused", func(w *world) { w.bind(workRef, w.checkout, channels.CommandPause) }, channels.GateUnknown},
	{"the checkout is gone", func(w *world) {
		w.bind(workRef, w.checkout, "")
		if err := os.RemoveAll(w.checkout); err != nil {
			w.t.Fatal(err)
		}
	}, channels.GateUnknown},
	{"a foreign checkout", func(w *world) {
		w.bind(workRef, w.copyFixture("https://github.com/someone/else.git"), "")
	}, channels.GateUnknown},
	{"no spec folder in the checkout", func(w *world) {
		os.RemoveAll(filepath.Join(w.checkout, "docs", "specs", "issue-12"))
		w.bind(workRef, w.checkout, "")
	}, channels.GateUnknown},
	{"not entered its loop", func(w *world) {
		os.Remove(filepath.Join(w.checkout, "docs", "specs", "issue-12", "graph-state.json"))
		w.bind(workRef, w.checkout, "")
	}, channels.GateUnknown},
	{"a state that does not read", func(w *world) {
		writeFile(w.t, filepath.Join(w.checkout, "docs", "specs", "issue-12", "graph-state.json"), "{not json")
		w.bind(workRef, w.checkout, "")
	}, channels.GateUnknown},
	{"a state file that links out of the checkout", func(w *world) {
		state := filepath.Join(w.checkout, "docs", "specs", "issue-12", "graph-state.json")
		outside := filepath.Join(w.t.TempDir(), "graph-state.json")
		data, _ := os.ReadFile(state)
		writeFile(w.t, outside, string(data))
		os.Remove(state)
		if err := os.Symlink(outside, state); err != nil {
			w.t.Fatal(err)
		}
		w.bind(workRef, w.checkout, "")
	}, channels.GateUnknown},
	{"a state file that is a FIFO", func(w *world) {
		state := filepath.Join(w.checkout, "docs", "specs", "issue-12", "graph-state.json")
		os.Remove(state)
		if err := syscall.Mkfifo(state, 0o644); err != nil {
			w.t.Skip(err)
		}
		w.bind(workRef, w.checkout, "")
	}, channels.GateUnknown},
	{"a checkout whose engine cannot be built", func(w *world) {
		writeFile(w.t, filepath.Join(w.checkout, ".the-loop", "harness-config.yaml"), "workflow: [this is not the schema\n")
		w.bind(workRef, w.checkout, "")
	}, channels.GateUnknown},
}

// rebuildWith reloads the CLI config with extra routing YAML.
func (w *world) rebuildWith(routing string) {
	w.t.Helper()
	nw := newWorld(w.t, opts{publish: w.p.cfg.Channel.Publish, routing: routing})
	nw.checkout = w.checkout
	*w = *nw
}

// TestEachRowOfTheClassificationTable takes "approved" through the
// pipeline for every row of the read, with and without the gate.feedback
// grant: open is a gate answer whatever the grant (dropped when it is not
// granted, never downgraded), none is a reply whatever the grant, and
// unknown is a gate answer only when the channel holds that grant.
func TestEachRowOfTheClassificationTable(t *testing.T) {
	for _, r := range rows {
		for _, granted := range []bool{true, false} {
			name := r.name + "/without the grant"
			publish := replyGrant
			if granted {
				name, publish = r.name+"/with the grant", gateGrant
			}
			t.Run(name, func(t *testing.T) {
				w := newWorld(t, opts{publish: publish})
				r.setup(w)
				res, err := w.say(memberID, "approved")
				if err != nil {
					t.Fatal(err)
				}
				if res.Gate != r.gate {
					t.Fatalf("gate = %q, want %q (%+v)\n%s", res.Gate, r.gate, res, w.log)
				}
				wantKind := channels.EventReply
				if r.gate == channels.GateOpen || (r.gate == channels.GateUnknown && granted) {
					wantKind = channels.EventGateFeedback
				}
				if res.Event != wantKind {
					t.Fatalf("event = %q, want %q", res.Event, wantKind)
				}
				bodies := w.ledger.bodies()
				if wantKind == channels.EventGateFeedback && !granted {
					if res.Outcome != DropUnpublishable || len(bodies) != 0 || len(w.inbox()) != 0 {
						t.Fatalf("an ungranted gate answer was not dropped whole: %+v, %d records, %d delivered", res, len(bodies), len(w.inbox()))
					}
					return
				}
				if res.Outcome != OutcomeProcessed || len(bodies) != 1 {
					t.Fatalf("got %+v and %d records, want processed and one record", res, len(bodies))
				}
				body := bodies[0]
				if e := envelopeOf(t, body); e.Type != wantKind || e.Source != channels.ChannelSlack || e.Actor["github"] != memberGH || e.Actor["slack"] != memberID {
					t.Errorf("envelope = %+v", e)
				}
				switch wantKind {
				case channels.EventGateFeedback:
					if marked(body) || len(w.inbox()) != 0 || res.Delivered != nil {
						t.Errorf("a gate answer must be an unmarked record and nothing else: marked %v, inbox %d, %+v", marked(body), len(w.inbox()), res)
					}
					want := "an answer to the open gate"
					if r.gate == channels.GateUnknown {
						want = "recorded a reply"
					}
					if !strings.Contains(body, want) || !strings.Contains(body, "> approved") {
						t.Errorf("the record does not say %q and quote the answer:\n%s", want, body)
					}
				default:
					if !marked(body) || len(w.inbox()) != 1 || res.Delivered == nil || !*res.Delivered {
						t.Errorf("a reply must be a marked record delivered once: marked %v, inbox %d, %+v", marked(body), len(w.inbox()), res)
					}
				}
				got := w.events.named("channel.reply_received")
				if len(got) != 1 || got[0]["kind"] != wantKind || got[0]["gate"] != string(r.gate) || got[0]["actor"] != memberID {
					t.Errorf("channel.reply_received = %v", got)
				}
			})
		}
	}
}

// TestTheReplyEventSaysWhatTheGateReadReturned is R2.1: the event carries
// kind and gate, and never the text.
func TestTheReplyEventSaysWhatTheGateReadReturned(t *testing.T) {
	var got [][2]any
	for _, i := range []int{0, 1, 3} { // open, none, unknown
		w := newWorld(t, opts{publish: gateGrant})
		rows[i].setup(w)
		if _, err := w.say(memberID, "approved"); err != nil {
			t.Fatal(err)
		}
		for _, e := range w.events.named("channel.reply_received") {
			got = append(got, [2]any{e["gate"], e["kind"]})
			for k, v := range e {
				if s, ok := v.(string); ok && strings.Contains(s, "approved") {
					t.Errorf("channel.reply_received.%s carries the text: %q", k, s)
				}
			}
		}
	}
	want := [][2]any{{"open", channels.EventGateFeedback}, {"none", channels.EventReply}, {"unknown", channels.EventGateFeedback}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("(gate, kind) = %v, want %v", got, want)
	}
}

// TestAnUnreadableGateWithoutTheGrantIsAMarkedReplyAsBefore is A1: the
// grant still bounds what a message may become.
func TestAnUnreadableGateWithoutTheGrantIsAMarkedReplyAsBefore(t *testing.T) {
	w := newWorld(t, opts{publish: replyGrant})
	w.bind(workRef, "", "")
	res, err := w.say(memberID, "approved")
	if err != nil {
		t.Fatal(err)
	}
	if res.Event != channels.EventReply || res.Gate != channels.GateUnknown || res.Delivered == nil || !*res.Delivered {
		t.Fatalf("got %+v, want a delivered work-item.reply", res)
	}
	if b := w.ledger.bodies(); len(b) != 1 || !marked(b[0]) {
		t.Fatalf("want one marked record, got %q", b)
	}
}

// TestAnUnlistedMemberIsDroppedBeforeTheGateIsEvenRead is A2: a
// stranger's "approved" reads no graph and records nothing, grant or not.
func TestAnUnlistedMemberIsDroppedBeforeTheGateIsEvenRead(t *testing.T) {
	for _, publish := range [][]string{gateGrant, replyGrant} {
		w := newWorld(t, opts{publish: publish})
		// A state that does not read: any read of the graph would log why.
		w.bind(workRef, w.checkout, "")
		writeFile(t, filepath.Join(w.checkout, "docs", "specs", "issue-12", "graph-state.json"), "{not json")
		res, err := w.say(strangerID, "approved")
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != DropUnauthorized || res.Event != "" {
			t.Errorf("got %+v, want unauthorized-actor", res)
		}
		if len(w.ledger.bodies()) != 0 || len(w.inbox()) != 0 {
			t.Errorf("a stranger's reply was recorded or delivered")
		}
		if strings.Contains(w.log.String(), "could not read the graph") {
			t.Errorf("the graph was read for a stranger:\n%s", w.log)
		}
		if d := w.events.named("channel.dropped"); len(d) != 1 || d[0]["reason"] != DropUnauthorized || d[0]["actor"] != strangerID {
			t.Errorf("channel.dropped = %v", d)
		}
	}
}

// TestAnEmptyAllowListDeniesEveryone: fail closed.
func TestAnEmptyAllowListDeniesEveryone(t *testing.T) {
	w := newWorld(t, opts{publish: gateGrant, people: "    []\n"})
	w.bind(workRef, w.checkout, "")
	if res, _ := w.say(memberID, "approved"); res.Outcome != DropUnauthorized {
		t.Errorf("got %+v, want unauthorized-actor", res)
	}
}

// TestAGitHubOnlyPersonCannotSpeakOnSlack: an id is a person's on the
// channel it is declared for, and nowhere else.
func TestAGitHubOnlyPersonCannotSpeakOnSlack(t *testing.T) {
	w := newWorld(t, opts{publish: gateGrant, people: "    - " + memberID + "\n"})
	w.bind(workRef, w.checkout, "")
	if res, _ := w.say(memberID, "approved"); res.Outcome != DropUnauthorized {
		t.Errorf("a GitHub login spelled as the Slack id was let in: %+v", res)
	}
}

// TestAControlKeywordOutranksAnUnreadableGate is A3: keyword → gate →
// reply whatever the read returns, and a keyword reads no graph at all.
func TestAControlKeywordOutranksAnUnreadableGate(t *testing.T) {
	w := newWorld(t, opts{publish: allGrants})
	w.bind(workRef, "", "")
	res, err := w.say(memberID, "approved, and the-loop stop")
	if err != nil {
		t.Fatal(err)
	}
	if res.Event != channels.EventControl || res.Gate != channels.GateNotRead || res.Delivered != nil {
		t.Fatalf("got %+v, want an undelivered control.command", res)
	}
	body := w.ledger.bodies()[0]
	if marked(body) || !strings.Contains(body, "a control command") || !strings.Contains(body, "the-loop stop") {
		t.Errorf("the record must be unmarked, say control command, and keep the keyword intact:\n%s", body)
	}
	if strings.Contains(w.log.String(), "could not read the graph") {
		t.Errorf("the graph was read for a control keyword:\n%s", w.log)
	}

	w = newWorld(t, opts{publish: gateGrant})
	w.bind(workRef, "", "")
	res, _ = w.say(memberID, "the-loop start")
	if res.Outcome != DropUnpublishable || res.Event != channels.EventControl {
		t.Fatalf("got %+v, want a control.command dropped as unpublishable, never a gate answer", res)
	}
	if len(w.ledger.bodies()) != 0 || len(w.inbox()) != 0 {
		t.Errorf("an ungranted keyword was recorded or delivered as prose")
	}
}

// TestTwoCommandsAreAControlCommandForTheIngressToRefuse: never a gate
// answer, never prose.
func TestTwoCommandsAreAControlCommandForTheIngressToRefuse(t *testing.T) {
	w := newWorld(t, opts{publish: allGrants})
	w.bind(workRef, w.checkout, "")
	if res, _ := w.say(memberID, "approved: the-loop stop, no, the-loop start"); res.Event != channels.EventControl {
		t.Errorf("got %+v, want control.command", res)
	}
}

// TestAnUnreadableGateDefersToTheLedgerWhenTheChannelMayAnswerGates is A4
// and R1.3: with the grant, "cannot tell" is an unmarked gate.feedback
// attributed as a reply, for the ingress to judge, and the pipeline
// delivers nothing itself: the session hears it once, from the ingress.
func TestAnUnreadableGateDefersToTheLedgerWhenTheChannelMayAnswerGates(t *testing.T) {
	w := newWorld(t, opts{publish: gateGrant})
	w.bind(workRef, "", "")
	res, err := w.say(memberID, "approved")
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != OutcomeProcessed || res.Event != channels.EventGateFeedback || res.Gate != channels.GateUnknown ||
		res.Mirrored == nil || !*res.Mirrored || res.Delivered != nil {
		t.Fatalf("got %+v", res)
	}
	body := w.ledger.bodies()[0]
	if marked(body) || !strings.Contains(body, "recorded a reply from") || strings.Contains(body, "answer to the open gate") {
		t.Errorf("want an unmarked record attributed as a reply:\n%s", body)
	}
	if n := len(w.inbox()); n != 0 {
		t.Errorf("the pipeline delivered a gate answer itself (%d in the inbox)", n)
	}
}

// TestThePipelinesReadMovesNothing is A5: classifying reads the graph and
// writes nothing, in the checkout or the state root, at a gate or not, in
// a repository the-loop has not adopted.
func TestThePipelinesReadMovesNothing(t *testing.T) {
	for _, i := range []int{0, 1, 4} { // open, none, unknown (not started)
		t.Run(rows[i].name, func(t *testing.T) {
			w := newWorld(t, opts{publish: gateGrant})
			rows[i].setup(w)
			before := snapshot(t, w.checkout, w.state)
			read := w.p.Link().Gate(mustRef(t, workRef))
			if read.Gate != rows[i].gate {
				t.Fatalf("read %+v, want %s", read, rows[i].gate)
			}
			if after := snapshot(t, w.checkout, w.state); !reflect.DeepEqual(before, after) {
				t.Errorf("reading the graph changed files:\nbefore %v\nafter  %v", before, after)
			}
			if _, err := os.Stat(filepath.Join(w.checkout, ".the-loop")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("reading adopted the repository: %v", err)
			}
		})
	}
}

// TestThePipelineReadsTheGraphThroughTheRoutersOwnLink is R1.2, the drift
// guard: the pipeline's reader is built by the constructor the router's
// link is, from the same config, and reads under the same bindings,
// allow-list, control settings and vocabulary.
func TestThePipelineReadsTheGraphThroughTheRoutersOwnLink(t *testing.T) {
	w := newWorld(t, opts{publish: gateGrant, routing: "  control:\n    requireStartCommand: true\n    keywords:\n      stop: halt now\n"})
	cfg := route.Config{CLI: w.cli, Integration: w.ledger}
	router, err := route.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	link, err := route.NewLink(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got, want := w.p.Link().Settings(), router.Link.Settings()
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(link.Settings(), want) {
		t.Fatalf("the pipeline reads under %+v, the router drives under %+v", got, want)
	}
	if !want.ControlEnabled || !want.RequireStart || want.Commands[channels.CommandStop] != "halt now" ||
		!reflect.DeepEqual(want.AuthorizedUsers, []string{"operator", memberGH}) || want.Bindings != w.store.Path() {
		t.Errorf("settings = %+v", want)
	}
	p, err := NewSlack(SlackOptions{Link: router.Link})
	if err != nil {
		t.Fatal(err)
	}
	if p.Link() != router.Link {
		t.Error("a Slack pipeline built on the router's link reads through another")
	}
}

// TestTheReadAgreesWithTheRouter: where the read gives the graph's answer,
// it is the router's: open exactly when the router hands "approved" to the
// gate and moves the item, none when the router finds no gate. Where it
// cannot tell, it says why.
func TestTheReadAgreesWithTheRouter(t *testing.T) {
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			w := newWorld(t, opts{publish: gateGrant})
			r.setup(w)
			read := w.p.Link().Gate(mustRef(t, workRef))
			if read.Gate != r.gate {
				t.Fatalf("read %+v, want %s", read, r.gate)
			}
			if r.gate == channels.GateUnknown {
				if read.Why == "" {
					t.Error("an unknown read does not say why")
				}
				return
			}
			router, err := route.New(route.Config{CLI: w.cli, Integration: w.ledger})
			if err != nil {
				t.Fatal(err)
			}
			body, _ := json.Marshal(map[string]any{"action": "created", "repository": map[string]any{"full_name": "acme/shop"},
				"issue":   map[string]any{"number": 12},
				"comment": map[string]any{"id": 7001, "body": "approved", "created_at": time.Now().UTC().Format(time.RFC3339), "user": map[string]any{"login": "operator", "type": "User"}},
				"sender":  map[string]any{"login": "operator", "type": "User"}})
			out, err := router.Process(context.Background(), channels.Delivery{ID: "d1", Event: "issue_comment", Body: body, Item: workRef})
			router.WaitReactions(time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			moved := out.Routed && out.Fields["to"] != nil
			if moved != (read.Gate == channels.GateOpen) {
				t.Errorf("read %s, but the router answered %+v", read.Gate, out)
			}
			// none at an agent's node: the router delivers the comment to
			// whoever works it, and no gate hears it
			if read.Gate == channels.GateNone && r.name != "no graph coupling" && (!out.Routed || out.Fields["delivery"] == nil || out.Fields["node"] != "design") {
				t.Errorf("read none, but the router answered %+v", out)
			}
		})
	}
}
