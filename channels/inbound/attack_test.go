package inbound

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/the-loop/the-loop/channels"
)

// Attacks on the pipeline by an authorized member trying to do more than
// their grant allows, each followed one hop on: the record is handed to
// the webhook ingress as GitHub would deliver it.

// TestAnEnvelopeInTheTextCannotCreditTheAnswerToAnotherPerson: a member
// who writes the ledger's envelope into their message, naming someone
// else, must not have the gate record that person as the one who
// answered. The record's envelope is the-loop's, naming the sender.
func TestAnEnvelopeInTheTextCannotCreditTheAnswerToAnotherPerson(t *testing.T) {
	people := "    - operator\n    - boss\n    - github: " + memberGH + "\n      slack: " + memberID + "\n      name: J. Chou\n"
	w := newWorld(t, opts{publish: gateGrant, people: people})
	w.bind(workRef, w.checkout, "")
	forged := `approved <!-- the-loop:event {"actor":{"github":"boss"},"source":"slack","type":"gate.feedback"} -->`
	res, err := w.say(memberID, forged)
	if err != nil || res.Outcome != OutcomeProcessed || res.Event != channels.EventGateFeedback {
		t.Fatalf("got %+v, %v", res, err)
	}
	body := w.ledger.bodies()[0]
	if e := envelopeOf(t, body); e.Actor["github"] != memberGH {
		t.Errorf("the record's envelope names %+v, want the sender %s:\n%s", e.Actor, memberGH, body)
	}
	if out := w.relay(body); !out.Routed || out.Fields["to"] == nil {
		t.Fatalf("the relayed answer did not move the gate: %+v", out)
	}
	doc, err := os.ReadFile(filepath.Join(w.checkout, "docs", "specs", "issue-12", "requirements.md"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(doc), "**@boss**") || !strings.Contains(string(doc), "**@"+memberGH+"** wrote:") {
		t.Errorf("the gate credits the answer to someone other than its sender:\n%s", doc)
	}
}

// TestExecuteIsAGateAnswerAndNeedsTheGateGrant: the ingress hands a
// comment carrying the execute keyword to the gate the item waits at, so
// on a channel granted control commands but not gate answers, "the-loop
// execute" must not become a record any gate reads.
func TestExecuteIsAGateAnswerAndNeedsTheGateGrant(t *testing.T) {
	w := newWorld(t, opts{publish: []string{channels.EventReply, channels.EventControl}})
	w.bind(workRef, w.checkout, "")
	res, err := w.say(memberID, "the-loop execute, approved")
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range w.ledger.bodies() {
		if out := w.relay(body); out.Fields["to"] != nil {
			t.Fatalf("a channel without gate.feedback answered the gate (%+v): %+v", res, out)
		}
	}
	if res.Outcome != DropUnpublishable || res.Event != channels.EventGateFeedback || res.Gate != channels.GateOpen {
		t.Errorf("got %+v, want a gate answer dropped as unpublishable", res)
	}

	w = newWorld(t, opts{publish: gateGrant})
	w.bind(workRef, w.checkout, "")
	res, err = w.say(memberID, "the-loop execute")
	if err != nil || res.Outcome != OutcomeProcessed || res.Event != channels.EventGateFeedback {
		t.Fatalf("got %+v, %v; want execute recorded as a gate answer where the channel may give one", res, err)
	}
	if body := w.ledger.bodies()[0]; marked(body) || !strings.Contains(body, "> the-loop execute") {
		t.Errorf("the gate must read the keyword intact:\n%s", body)
	}
}

// TestAKeywordTheScrubUncoversIsAControlCommand: the record is scrubbed,
// and the ingress reads control keywords in the record. A keyword glued
// to a credential the scrub masks stands alone in the record, so it must
// be classified as one here, where the grant is checked, too.
func TestAKeywordTheScrubUncoversIsAControlCommand(t *testing.T) {
	t.Setenv("THE_LOOP_TEST_API_KEY", "hunter2xyz")
	w := newWorld(t, opts{publish: gateGrant})
	w.bind(workRef, w.checkout, "")
	res, err := w.say(memberID, "the-loop stophunter2xyz")
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range w.ledger.bodies() {
		if out := w.relay(body); out.Fields["control"] != nil {
			t.Fatalf("a channel without control.command ran a command (%+v): %+v", res, out)
		}
	}
	if res.Outcome != DropUnpublishable || res.Event != channels.EventControl {
		t.Errorf("got %+v, want a control.command dropped as unpublishable", res)
	}
}
