package channels

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestAGrantNamesOnlyPublishableEventsAndATypoWidensNothing(t *testing.T) {
	for _, tc := range []struct {
		name             string
		publish          []string
		set              bool
		granted, ignored []string
	}{
		{name: "unset is the reply grant", granted: []string{EventReply}},
		{name: "empty grants nothing", set: true, granted: []string{}},
		{name: "gate and reply", set: true, publish: []string{EventReply, EventGateFeedback}, granted: []string{EventReply, EventGateFeedback}},
		{name: "a repeat is one grant", set: true, publish: []string{EventGateFeedback, EventGateFeedback}, granted: []string{EventGateFeedback}},
		{name: "a subscribable type is not a grant", set: true, publish: []string{"phase-approval-pending", EventControl}, granted: []string{EventControl}, ignored: []string{"phase-approval-pending"}},
		{name: "a typo is ignored", set: true, publish: []string{"gate.feedbak"}, granted: []string{}, ignored: []string{"gate.feedbak"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			granted, ignored := Grants(tc.publish, tc.set)
			if !slices.Equal(granted, tc.granted) || !slices.Equal(ignored, tc.ignored) {
				t.Errorf("Grants(%q) = %q, ignored %q; want %q, ignored %q", tc.publish, granted, ignored, tc.granted, tc.ignored)
			}
		})
	}
}

func TestTheCatalogNamesEachEventOnceAndDescribesIt(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Catalog {
		if seen[s.Name] {
			t.Errorf("%s is in the catalog twice", s.Name)
		}
		seen[s.Name] = true
		if s.Description == "" {
			t.Errorf("%s has no description", s.Name)
		}
		if s.Publishable && s.Origin != OriginChannel {
			t.Errorf("%s is publishable but does not originate on a channel", s.Name)
		}
	}
	if got := Publishable(); !slices.Equal(got, []string{EventReply, EventGateFeedback, EventControl, EventCreate}) {
		t.Errorf("Publishable() = %q", got)
	}
}

// TestTheGuideNamesEveryGrant holds docs/channels.md to the catalog: a
// grant an operator can write is one the guide explains.
func TestTheGuideNamesEveryGrant(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "channels.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range Publishable() {
		if name == EventCreate {
			continue // the-loop opens no work item from a channel
		}
		if !strings.Contains(string(doc), name) {
			t.Errorf("docs/channels.md does not mention the grant %s", name)
		}
	}
	for _, g := range []Gate{GateOpen, GateNone, GateUnknown} {
		if !strings.Contains(string(doc), "`"+string(g)+"`") {
			t.Errorf("docs/channels.md does not explain the read %s", g)
		}
	}
}
