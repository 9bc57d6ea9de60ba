package graph

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// transitionLoop exercises every rule a transition has: a selection gate, a
// skippable node, an opt-in node, a human gate whose session is inherited,
// a node with a low maxAttempts and a terminal node.
const transitionLoop = `
version: 1
name: transition-loop
start: select
nodes:
  - {id: select, actor: human, required: true, exit: [gate]}
  - {id: plan, skippable: true, produces: [plan.md], exit: [ok]}
  - {id: critic, optIn: true, exit: [ok]}
  - {id: review, actor: human, skippable: true, session: inherit, exit: [gate]}
  - {id: build, maxAttempts: 2, exit: [ok]}
  - {id: done, terminal: true}
edges:
  - {from: select, to: plan, on: selected}
  - {from: plan, to: critic, on: pass}
  - {from: plan, to: critic, on: skipped}
  - {from: critic, to: review, on: pass}
  - {from: critic, to: review, on: skipped}
  - {from: review, to: build, on: approved}
  - {from: review, to: plan, on: changes-requested}
  - {from: review, to: build, on: skipped}
  - {from: build, to: done, on: pass}
`

// The moment every transition in these tests is made at.
var (
	moment = time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC)
	stamp  = Timestamp(moment)
)

// testMachine is the state machine of transitionLoop with nothing behind
// it: no checkout, no clock, no event log. A transition needs none.
func testMachine(t *testing.T) machine {
	t.Helper()
	g, err := Compile("transition-loop.yaml", []byte(transitionLoop), testRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return machine{g: g, ref: "github:acme/shorty#7", root: "/work/checkout", statePath: "docs/specs/item/graph-state.json"}
}

// itemAt is a state whose pointer is at node, entered attempts times, with
// the edits applied.
func itemAt(node string, attempts int, edits ...func(*State)) *State {
	st := NewState("item")
	if node != "" {
		st.CurrentNode = node
		rec := st.Record(node)
		rec.Attempts, rec.EnteredAt = attempts, "2026-04-30T08:00:00+00:00"
	}
	for _, edit := range edits {
		edit(st)
	}
	return st
}

func passed(results ...Result) ChainOutcome {
	return ChainOutcome{Status: StatusPass, Results: results}
}

// stoppedBy is the outcome of a chain r stopped (a block or a wait).
func stoppedBy(r Result) ChainOutcome {
	rs := []Result{r}
	return ChainOutcome{Status: r.Status, Results: rs, Blocking: &rs[0]}
}

func routed(outcome string) Result {
	return Pass("gate", map[string]any{"outcome": outcome})
}

// encoded is st as it would be written, for comparisons.
func encoded(t *testing.T, st *State) string {
	t.Helper()
	data, err := st.format()
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func eventNames(events []emission) []string {
	names := make([]string, len(events))
	for i, e := range events {
		names[i] = e.event
	}
	return names
}

func TestAnAdvanceTransition(t *testing.T) {
	m := testMachine(t)
	finding := Block("ok", Errorf("plan.md is missing a section"))
	findingText := "`ok` did not pass:\n- plan.md is missing a section"
	for _, c := range []struct {
		name   string
		st     *State
		out    ChainOutcome
		step   Step
		events []string
		enter  string
		// state checks what the new state must say beyond the step.
		state func(t *testing.T, st *State)
	}{{
		name:   "a wait parks the item where it is",
		st:     itemAt("select", 1),
		out:    stoppedBy(Wait("gate", "no authorized feedback yet")),
		step:   Step{Node: "select", Status: "wait", Outcome: "wait", Messages: []string{"no authorized feedback yet"}, Attempts: 1},
		events: []string{"graph.parked"},
		state: func(t *testing.T, st *State) {
			want := map[string]any{"node": "select", "reason": "`gate` did not pass:\n- no authorized feedback yet", "since": stamp}
			if st.CurrentNode != "select" || !reflect.DeepEqual(st.Parked, want) {
				t.Errorf("at %q parked %v; want at select parked %v", st.CurrentNode, st.Parked, want)
			}
		},
	}, {
		name:   "an item not yet started is evaluated at its start and a wait does not enter it",
		st:     NewState("item"),
		out:    stoppedBy(Wait("gate", "no authorized feedback yet")),
		step:   Step{Node: "select", Status: "wait", Outcome: "wait", Messages: []string{"no authorized feedback yet"}},
		events: []string{"graph.parked"},
		state: func(t *testing.T, st *State) {
			if st.CurrentNode != "" || st.Nodes["select"] == nil || st.Nodes["select"].Attempts != 0 || st.Parked["node"] != "select" {
				t.Errorf("at %q, select %+v, parked %v; want not entered, parked at select", st.CurrentNode, st.Nodes["select"], st.Parked)
			}
		},
	}, {
		name:   "a block below maxAttempts records the finding and stays",
		st:     itemAt("build", 1),
		out:    stoppedBy(finding),
		step:   Step{Node: "build", Status: "block", Outcome: "block", Messages: []string{"plan.md is missing a section"}, Attempts: 1},
		events: []string{"graph.blocked"},
		state: func(t *testing.T, st *State) {
			if st.CurrentNode != "build" || st.Nodes["build"].LastBlock != findingText {
				t.Errorf("at %q lastBlock %q; want at build with the finding recorded", st.CurrentNode, st.Nodes["build"].LastBlock)
			}
		},
	}, {
		name:   "a block once the node was entered maxAttempts times escalates",
		st:     itemAt("build", 2),
		out:    stoppedBy(finding),
		step:   Step{Node: "build", Status: "escalated", Outcome: "block", Attempts: 2, Messages: []string{"plan.md is missing a section", "escalated for a human to look at: 2 attempts reached maxAttempts 2; the pointer has not moved"}},
		events: []string{"graph.escalated"},
	}, {
		name: "the same finding twice in a row escalates",
		st:   itemAt("plan", 1, func(st *State) { st.Nodes["plan"].LastBlock = findingText }),
		out:  stoppedBy(finding),
		step: Step{Node: "plan", Status: "escalated", Outcome: "block", Attempts: 1, Messages: []string{"plan.md is missing a section",
			"escalated for a human to look at: the same finding was reported twice in a row; the pointer has not moved, so fix it and advance again"}},
		events: []string{"graph.escalated"},
	}, {
		name:   "a stored finding names no machine's path",
		st:     itemAt("plan", 1),
		out:    stoppedBy(Block("ok", Errorf("cannot read /work/checkout/docs/specs/item/plan.md"))),
		step:   Step{Node: "plan", Status: "block", Outcome: "block", Attempts: 1, Messages: []string{"cannot read /work/checkout/docs/specs/item/plan.md"}},
		events: []string{"graph.blocked"},
		state: func(t *testing.T, st *State) {
			if got := st.Nodes["plan"].LastBlock; got != "`ok` did not pass:\n- cannot read docs/specs/item/plan.md" {
				t.Errorf("lastBlock %q; want the checkout's location dropped", got)
			}
		},
	}, {
		name:   "a pass follows the edge for its outcome, enters the target and asks for its entry chain",
		st:     itemAt("review", 1),
		out:    passed(routed("changes-requested")),
		step:   Step{Node: "review", Status: "pass", Outcome: "changes-requested", Attempts: 1, To: "plan", Messages: []string{"advanced to plan"}},
		events: []string{"graph.advanced"},
		enter:  "plan",
		state: func(t *testing.T, st *State) {
			review, plan := st.Nodes["review"], st.Nodes["plan"]
			if st.CurrentNode != "plan" || review.Outcome != "changes-requested" || review.ExitedAt != stamp ||
				plan.Attempts != 1 || plan.EnteredAt != stamp || st.Parked != nil {
				t.Errorf("at %q, review %+v, plan %+v, parked %v", st.CurrentNode, review, plan, st.Parked)
			}
		},
	}, {
		name:   "entering a human gate that inherits a live session says so",
		st:     itemAt("critic", 1, func(st *State) { st.Session = map[string]any{"alive": true} }),
		out:    passed(Pass("ok", nil)),
		step:   Step{Node: "critic", Status: "pass", Outcome: "pass", Attempts: 1, To: "review", Messages: []string{"advanced to review"}},
		events: []string{"graph.advanced", "graph.gate_session"},
		enter:  "review",
	}, {
		name: "a pass routes around declared skips, recording each as skipped",
		st: itemAt("select", 1, func(st *State) {
			st.Skips["plan"] = map[string]any{"via": "cli", "by": "bob", "reason": "small"}
		}),
		out:    passed(routed("selected")),
		step:   Step{Node: "select", Status: "pass", Outcome: "selected", Attempts: 1, To: "review", Messages: []string{"advanced to review"}},
		events: []string{"graph.node_skipped", "graph.node_skipped", "graph.advanced", "graph.gate_session"},
		enter:  "review",
		state: func(t *testing.T, st *State) {
			for _, id := range []string{"plan", "critic"} {
				if r := st.Nodes[id]; r == nil || r.Outcome != OutcomeSkipped || r.Attempts != 0 {
					t.Errorf("%s: %+v; want recorded skipped, never entered", id, r)
				}
			}
		},
	}, {
		name: "a selection is recorded and routes the very move that made it",
		st:   itemAt("select", 1),
		out: passed(Pass("gate", map[string]any{"outcome": "selected", "decision": "phase-selection",
			"declaredSkips": map[string]any{"plan": map[string]any{"via": "selection", "by": "@alice"}},
			"optIns":        map[string]any{"critic": map[string]any{"via": "selection", "by": "@alice"}},
			"surface":       "pull-request", "frozenGraph": map[string]any{"nodes": []any{"select"}}, "selectionSource": "reply"})),
		step:   Step{Node: "select", Status: "pass", Outcome: "selected", Attempts: 1, To: "critic", Messages: []string{"advanced to critic"}},
		events: []string{"graph.skips_declared", "graph.opt_ins_selected", "graph.node_skipped", "graph.advanced"},
		enter:  "critic",
		state: func(t *testing.T, st *State) {
			d, _ := st.Decisions["phase-selection"].(map[string]any)
			if d["via"] != "reply" || d["surface"] != "pull-request" || st.Surface != "pull-request" ||
				st.Skips["plan"]["at"] != stamp || st.OptIns["critic"]["by"] != "@alice" {
				t.Errorf("decision %v, surface %q, skips %v, opt-ins %v", d, st.Surface, st.Skips, st.OptIns)
			}
		},
	}, {
		name: "a selection cannot skip a protected node or one already entered",
		st:   itemAt("select", 1, func(st *State) { st.Record("plan").EnteredAt = "2026-04-29T08:00:00+00:00" }),
		out: passed(Pass("gate", map[string]any{"outcome": "selected", "decision": "phase-selection",
			"declaredSkips": map[string]any{"select": map[string]any{}, "plan": map[string]any{}, "build": map[string]any{}}})),
		step:   Step{Node: "select", Status: "pass", Outcome: "selected", Attempts: 1, To: "plan", Messages: []string{"advanced to plan"}},
		events: []string{"graph.advanced"},
		enter:  "plan",
		state: func(t *testing.T, st *State) {
			if len(st.Skips) != 0 {
				t.Errorf("skips %v; want none declared", st.Skips)
			}
		},
	}, {
		name:   "a pass at a terminal node with no edge completes it",
		st:     itemAt("done", 1),
		out:    passed(),
		step:   Step{Node: "done", Status: "pass", Outcome: "pass", Attempts: 1, Terminal: true, Messages: []string{}},
		events: []string{"graph.completed"},
	}, {
		name:   "an outcome with no edge parks the item and escalates",
		st:     itemAt("build", 1),
		out:    passed(routed("nowhere")),
		step:   Step{Node: "build", Status: "escalated", Outcome: "nowhere", Attempts: 1, Messages: []string{`no declared edge from build on outcome "nowhere"`}},
		events: []string{"graph.no_edge"},
		state: func(t *testing.T, st *State) {
			if st.CurrentNode != "build" || st.Parked["reason"] != `no declared edge from build on outcome "nowhere"` {
				t.Errorf("at %q parked %v", st.CurrentNode, st.Parked)
			}
		},
	}, {
		name:   "degraded hooks are said once per cause, each with its event",
		st:     itemAt("build", 1),
		out:    passed(Degraded("notify", ErrIntegrationUnavailable), Degraded("set-phase-label", ErrIntegrationUnavailable)),
		step:   Step{Node: "build", Status: "pass", Outcome: "pass", Attempts: 1, To: "done", Terminal: true, Messages: []string{"warning: notify, set-phase-label did not complete: no integration configured", "advanced to done"}},
		events: []string{"graph.hook_degraded", "graph.hook_degraded", "graph.advanced"},
		enter:  "done",
	}, {
		name:   "a repository hook's dropped outcome is said",
		st:     itemAt("build", 1),
		out:    ChainOutcome{Status: StatusPass, Warnings: []Finding{{Hook: "x-steer", Text: "x-steer declared outcome done; repository hooks do not route, so it was ignored"}}},
		step:   Step{Node: "build", Status: "pass", Outcome: "pass", Attempts: 1, To: "done", Terminal: true, Messages: []string{"warning: x-steer declared outcome done; repository hooks do not route, so it was ignored", "advanced to done"}},
		events: []string{"graph.advanced"},
		enter:  "done",
	}} {
		t.Run(c.name, func(t *testing.T) {
			before := encoded(t, c.st)
			tr, err := m.advance(c.st, c.out, moment)
			if err != nil {
				t.Fatal(err)
			}
			if encoded(t, c.st) != before {
				t.Error("the transition changed the state it was decided from")
			}
			if c.step.Messages == nil {
				c.step.Messages = []string{}
			}
			if !reflect.DeepEqual(tr.step, c.step) {
				t.Errorf("step\n got %+v\nwant %+v", tr.step, c.step)
			}
			if got := eventNames(tr.effects.events); !slices.Equal(got, c.events) {
				t.Errorf("events %q, want %q", got, c.events)
			}
			if !tr.effects.write || tr.effects.enter != c.enter {
				t.Errorf("effects write %v enter %q; want a write and enter %q", tr.effects.write, tr.effects.enter, c.enter)
			}
			if tr.state.Loop != m.g.Name {
				t.Errorf("loop %q; want the first write to record %q", tr.state.Loop, m.g.Name)
			}
			if c.state != nil {
				c.state(t, tr.state)
			}
			again, _ := m.advance(c.st, c.out, moment)
			if encoded(t, again.state) != encoded(t, tr.state) || !reflect.DeepEqual(again.step, tr.step) || !reflect.DeepEqual(again.effects, tr.effects) {
				t.Error("the same state and outcome decided two different transitions")
			}
		})
	}
}

func TestAnAdvanceFromAPointerTheLoopDoesNotHaveIsAStateError(t *testing.T) {
	m := testMachine(t)
	st := itemAt("gone", 1)
	var se *StateError
	if _, err := m.at(st); !errors.As(err, &se) || se.Path != m.statePath || !strings.Contains(se.Msg, `currentNode "gone"`) {
		t.Errorf("at: %v; want a *StateError naming the state file and the pointer", err)
	}
	if _, err := m.advance(st, passed(), moment); !errors.As(err, &se) {
		t.Errorf("advance: %v; want a *StateError", err)
	}
}

func TestAtIsTheStartRoutedAroundSkipsUntilTheItemEntersTheLoop(t *testing.T) {
	m := testMachine(t)
	for _, c := range []struct {
		name string
		st   *State
		want string
	}{
		{"not started", NewState("item"), "select"},
		{"at a node", itemAt("review", 1), "review"},
	} {
		if n, err := m.at(c.st); err != nil || n.ID != c.want {
			t.Errorf("%s: at = %v, %v; want %s", c.name, n, err, c.want)
		}
	}
}

func TestAStartTransitionEntersTheStartAndAsksForItsEntryChain(t *testing.T) {
	m := testMachine(t)
	st := NewState("item")
	tr := m.start(st, moment)
	want := Step{Node: "select", Status: "pass", Outcome: "pass", Attempts: 1, To: "select"}
	if !reflect.DeepEqual(tr.step, want) || tr.effects.enter != "select" || !tr.effects.write ||
		!slices.Equal(eventNames(tr.effects.events), []string{"graph.started"}) {
		t.Errorf("got %+v %+v; want %+v entering select", tr.step, tr.effects, want)
	}
	if st.CurrentNode != "" || tr.state.CurrentNode != "select" {
		t.Errorf("pointer before %q after %q", st.CurrentNode, tr.state.CurrentNode)
	}
}

func TestAClaimTransition(t *testing.T) {
	m := testMachine(t)
	for _, c := range []struct {
		name, node string
		st         *State
		// answer is the claim's answer when it is not recorded; "" when
		// it is.
		answer string
	}{
		{"an item not started is refused", "", NewState("item"), "refused not-started"},
		{"a node ahead of the pointer is refused", "build", itemAt("plan", 1), "refused not-current"},
		{"a node behind the pointer is a no-op", "select", itemAt("plan", 1), "noop already-past"},
		{"the current node is recorded", "", itemAt("plan", 1), ""},
		{"the current node named is recorded", "plan", itemAt("plan", 1), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			answer, tr, err := m.claim(c.st, c.node, "", moment)
			if err != nil {
				t.Fatal(err)
			}
			if c.answer != "" {
				if tr != nil || answer == nil || answer.Status+" "+answer.Reason != c.answer {
					t.Errorf("answer %+v, transition %v; want %s and nothing recorded", answer, tr, c.answer)
				}
				return
			}
			want := map[string]any{"at": stamp, "by": "cli"}
			if answer != nil || tr == nil || !tr.effects.write || tr.effects.enter != "" || len(tr.effects.events) != 0 ||
				!reflect.DeepEqual(tr.state.Completions["plan"], want) || len(c.st.Completions) != 0 {
				t.Fatalf("answer %+v, transition %+v; want the claim recorded on a copy", answer, tr)
			}
		})
	}
	if _, _, err := m.claim(itemAt("plan", 1), "nowhere", "", moment); !errors.Is(err, ErrUnknownNode) {
		t.Errorf("a claim for a node the loop lacks: %v", err)
	}
}

func TestAForceTransitionMovesThePointerAndRecordsWhy(t *testing.T) {
	m := testMachine(t)
	from, warnings, tr, err := m.force(itemAt("plan", 1), "done", "ship it", "carol", moment)
	if err != nil {
		t.Fatal(err)
	}
	if from != "plan" || len(warnings) != 1 || !strings.Contains(warnings[0], "plan -> done is not a declared edge") {
		t.Errorf("from %q warnings %q", from, warnings)
	}
	st := tr.state
	if st.CurrentNode != "done" || !st.Nodes["done"].Forced || len(st.Forced) != 1 || st.Forced[0]["actor"] != "carol" ||
		tr.effects.enter != "" || !slices.Equal(eventNames(tr.effects.events), []string{"graph.forced"}) {
		t.Errorf("state %s effects %+v; want the move recorded and no entry chain", encoded(t, st), tr.effects)
	}
	if _, warnings, _, _ := m.force(NewState("item"), "plan", "r", "carol", moment); len(warnings) != 1 || !strings.Contains(warnings[0], `node "select" is marked required`) {
		t.Errorf("a force off the required start: %q", warnings)
	}
}

func TestASkipTransitionDeclaresOnlyWhatLiesAhead(t *testing.T) {
	m := testMachine(t)
	declared, rejected, tr, _ := m.declareSkips(itemAt("critic", 1), []string{"review", "plan", "bogus"}, "small", "bob", moment)
	if !slices.Equal(declared, []string{"review"}) || len(rejected) != 2 || rejected[0].Token != "bogus" || rejected[1].Token != "plan" {
		t.Errorf("declared %q rejected %+v", declared, rejected)
	}
	if !tr.effects.write || !slices.Equal(eventNames(tr.effects.events), []string{"graph.skips_rejected", "graph.skips_rejected", "graph.skips_declared"}) {
		t.Errorf("effects %+v", tr.effects)
	}
	_, _, tr, _ = m.declareSkips(itemAt("critic", 1), []string{"plan"}, "small", "bob", moment)
	if tr.effects.write || tr.state.Loop != "" {
		t.Errorf("a declaration that declared nothing writes %v (loop %q); want no write", tr.effects.write, tr.state.Loop)
	}
}

func TestACloneSharesNothingATransitionChanges(t *testing.T) {
	st, err := ParseState("s", []byte(`{"currentNode": "plan", "nodes": {"plan": {"attempts": 1}},
		"decisions": {"d": {"at": "x"}}, "forced": [{"to": "plan"}], "parked": {"node": "plan"},
		"skips": {"review": {"via": "cli"}}, "optIns": {}, "completions": {}, "custom": [1]}`), "item")
	if err != nil {
		t.Fatal(err)
	}
	before := encoded(t, st)
	c := st.clone()
	c.Record("plan").Attempts++
	c.Record("review").Outcome = "skipped"
	c.Decisions["e"] = map[string]any{}
	c.Forced = append(c.Forced, map[string]any{})
	c.Parked["node"] = "build"
	c.Skips["build"] = map[string]any{}
	c.OptIns["critic"] = map[string]any{}
	c.Completions["plan"] = map[string]any{}
	c.noteKey("decisions", "e")
	if got := encoded(t, st); got != before {
		t.Errorf("changing the clone changed the original:\n%s\nwant\n%s", got, before)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(encoded(t, c)), &doc); err != nil || doc["custom"] == nil {
		t.Errorf("the clone lost a key another tool wrote: %v", doc)
	}
}
