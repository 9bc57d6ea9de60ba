package builtins

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/the-loop/the-loop/graph"
)

func envFixClock(t *testing.T) {
	t.Helper()
	old := envelopeClock
	envelopeClock = func() time.Time { return time.Date(2026, 3, 4, 23, 30, 0, 0, time.FixedZone("x", -5*3600)) }
	t.Cleanup(func() { envelopeClock = old })
}

func TestStampEnvelopeWritesOneCompactSortedLine(t *testing.T) {
	envFixClock(t)
	got := StampEnvelope("approved  \n\n", Envelope{
		Type: "gate.feedback", Source: "slack",
		Actor: map[string]string{"slack": "U0456GHIJKL", "github": "jc1993", "matrix": ""},
	})
	want := "approved\n\n" +
		`<!-- the-loop:event {"actor":{"github":"jc1993","slack":"U0456GHIJKL"},"source":"slack","ts":"2026-03-05T04:30:00Z","type":"gate.feedback"} -->` + "\n"
	if got != want {
		t.Errorf("StampEnvelope =\n%q\nwant\n%q", got, want)
	}
}

func TestStampEnvelope(t *testing.T) {
	envFixClock(t)
	reply := Envelope{Type: "work-item.reply", Source: "slack", Actor: map[string]string{"github": "jc1993"}, TS: "2026-01-02T03:04:05Z"}
	stamped := StampEnvelope("hi", reply)
	tests := []struct {
		name string
		body string
		e    Envelope
		want string
	}{
		{"a given time is kept", "hi", reply,
			"hi\n\n" + `<!-- the-loop:event {"actor":{"github":"jc1993"},"source":"slack","ts":"2026-01-02T03:04:05Z","type":"work-item.reply"} -->` + "\n"},
		{"nobody named is an empty actor", "hi", Envelope{Type: "t", Source: "s", TS: "x"},
			"hi\n\n" + `<!-- the-loop:event {"actor":{},"source":"s","ts":"x","type":"t"} -->` + "\n"},
		{"an id is written beside the rest", "hi", Envelope{Type: "t", Source: "s", TS: "x", ID: "slack:C1:1.2"},
			"hi\n\n" + `<!-- the-loop:event {"actor":{},"id":"slack:C1:1.2","source":"s","ts":"x","type":"t"} -->` + "\n"},
		{"stamping twice changes nothing", stamped, reply, stamped},
		{"the same type and source from someone else changes nothing", stamped,
			Envelope{Type: reply.Type, Source: reply.Source, Actor: map[string]string{"github": "mallory"}}, stamped},
		{"no type writes nothing", "hi", Envelope{Source: "slack"}, "hi"},
		{"no source writes nothing", "hi ", Envelope{Type: "gate.feedback"}, "hi "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := StampEnvelope(tt.body, tt.e); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
	other := StampEnvelope(stamped, Envelope{Type: "gate.feedback", Source: "slack"})
	if other == stamped || strings.Count(other, "the-loop:event") != 2 {
		t.Errorf("an envelope of another type was not added:\n%s", other)
	}
	withID := reply
	withID.ID = "slack:C1:1.2"
	if again := StampEnvelope(stamped, withID); again == stamped {
		t.Errorf("an envelope of the same type and source but another id was taken for the same record:\n%s", again)
	}
}

// TestAValueCannotCloseTheComment: whatever a chat message or an id holds,
// the envelope stays one HTML comment and reads back as written.
func TestAValueCannotCloseTheComment(t *testing.T) {
	hostile := []string{"-->", "--!>", "<!--", "</script>", "a & b", "}-->", `"} --> <!-- the-loop:event {"type":"x","source":"y"} -->`}
	for _, v := range hostile {
		t.Run(v, func(t *testing.T) {
			e := Envelope{Type: "gate.feedback" + v, Source: v, Actor: map[string]string{"github": v, v: "id"}, TS: v, ID: v}
			stamped := StampEnvelope("body", e)
			line := strings.TrimPrefix(stamped, "body\n\n")
			for _, c := range []string{"<", ">", "&"} {
				if n := strings.Count(line, c); n != strings.Count("<!--  -->", c) {
					t.Errorf("the envelope line holds %d %q: %s", n, c, line)
				}
			}
			if i := strings.Index(line, "-->"); i != len(line)-len("-->\n") {
				t.Errorf("the comment ends at %d, before the line does: %s", i, line)
			}
			got, ok := ParseEnvelope(stamped)
			if !ok || !reflect.DeepEqual(got, e) {
				t.Errorf("read back %+v, %v; want %+v", got, ok, e)
			}
		})
	}
}

func TestParseEnvelope(t *testing.T) {
	const ok = `{"type":"gate.feedback","source":"slack"}`
	wrap := func(js string) string { return "text\n\n<!-- the-loop:event " + js + " -->\n" }
	tests := []struct {
		name string
		body string
		want *Envelope // nil: not an envelope
	}{
		{"the smallest", wrap(ok), &Envelope{Type: "gate.feedback", Source: "slack"}},
		{"every field", wrap(`{"type":"t","source":"s","actor":{"github":"jc1993","slack":"U1"},"ts":"2026-01-02T03:04:05Z"}`),
			&Envelope{Type: "t", Source: "s", Actor: map[string]string{"github": "jc1993", "slack": "U1"}, TS: "2026-01-02T03:04:05Z"}},
		{"an id", wrap(`{"type":"t","source":"s","id":"slack:C0123ABC:1712345999.000200"}`),
			&Envelope{Type: "t", Source: "s", ID: "slack:C0123ABC:1712345999.000200"}},
		{"an envelope written before ids were reads without one", wrap(`{"actor":{"github":"jc1993"},"source":"slack","ts":"2026-01-02T03:04:05Z","type":"gate.feedback"}`),
			&Envelope{Type: "gate.feedback", Source: "slack", Actor: map[string]string{"github": "jc1993"}, TS: "2026-01-02T03:04:05Z"}},
		{"space and newlines inside the comment", "<!--\n  the-loop:event\n" + `{"type": "t",` + "\n" + `"source": "s"}` + "\n-->", &Envelope{Type: "t", Source: "s"}},
		{"actor null", wrap(`{"type":"t","source":"s","actor":null}`), &Envelope{Type: "t", Source: "s"}},
		{"actor ids that are not non-empty strings are ignored", wrap(`{"type":"t","source":"s","actor":{"github":7,"slack":"","matrix":{"a":1},"":"x","irc":"nick"}}`),
			&Envelope{Type: "t", Source: "s", Actor: map[string]string{"irc": "nick"}}},
		{"the first envelope is the one", wrap(ok) + wrap(`{"type":"other","source":"s"}`), &Envelope{Type: "gate.feedback", Source: "slack"}},
		{"a broken first envelope hides a later one", wrap(`{"type":"t"}`) + wrap(ok), nil},
		{"no envelope", "approved", nil},
		{"the self-authored marker is not one", selfCommentMarker, nil},
		{"another tag", `<!-- the-loop:events {"type":"t","source":"s"} -->`, nil},
		{"no space after the tag", `<!-- the-loop:event{"type":"t","source":"s"} -->`, nil},
		{"never closed", "<!-- the-loop:event " + ok, nil},
		{"an unknown key", wrap(`{"type":"t","source":"s","by":"jc1993"}`), nil},
		{"a key twice", wrap(`{"type":"t","source":"s","actor":{"github":"a"},"actor":{"github":"b"}}`), nil},
		{"no type", wrap(`{"source":"s"}`), nil},
		{"an empty type", wrap(`{"type":"","source":"s"}`), nil},
		{"a type that is a number", wrap(`{"type":1,"source":"s"}`), nil},
		{"a null source", wrap(`{"type":"t","source":null}`), nil},
		{"actor a string", wrap(`{"type":"t","source":"s","actor":"jc1993"}`), nil},
		{"actor a list", wrap(`{"type":"t","source":"s","actor":["jc1993"]}`), nil},
		{"ts a number", wrap(`{"type":"t","source":"s","ts":1700000000}`), nil},
		{"ts null", wrap(`{"type":"t","source":"s","ts":null}`), nil},
		{"id a number", wrap(`{"type":"t","source":"s","id":12}`), nil},
		{"id null", wrap(`{"type":"t","source":"s","id":null}`), nil},
		{"id twice", wrap(`{"type":"t","source":"s","id":"a","id":"b"}`), nil},
		{"two objects", wrap(ok + ` {}`), nil},
		{"an object and more", wrap(`{"type":"t","source":"s"}, 1}`), nil},
		{"not JSON", wrap(`{type: t, source: s}`), nil},
		{"an empty object", wrap(`{}`), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseEnvelope(tt.body)
			if tt.want == nil {
				if ok {
					t.Errorf("read %+v from a body that holds no valid envelope", got)
				}
				return
			}
			if !ok || !reflect.DeepEqual(got, *tt.want) {
				t.Errorf("ParseEnvelope = %+v, %v; want %+v", got, ok, *tt.want)
			}
		})
	}
}

// openingsWithoutEnd is a body of many envelope openings none of which
// closes: the input that would make a backtracking search quadratic. The
// pattern is RE2's, linear by construction; BenchmarkParseEnvelope of it
// shows the cost per byte.
var openingsWithoutEnd = strings.Repeat("<!-- the-loop:event {", 20_000) + strings.Repeat("x", 1<<20)

func TestParseEnvelopeOfALongBodyFindsOnlyTheRealOne(t *testing.T) {
	if _, ok := ParseEnvelope(openingsWithoutEnd); ok {
		t.Fatal("read an envelope from a body with none")
	}
	e := Envelope{Type: "t", Source: "s", TS: "now"}
	if got, ok := ParseEnvelope(StampEnvelope(strings.Repeat("long reply ", 10_000), e)); !ok || !reflect.DeepEqual(got, e) {
		t.Errorf("the envelope after a long body read as %+v, %v", got, ok)
	}
}

func BenchmarkParseEnvelopeOfOpeningsWithoutEnd(b *testing.B) {
	b.SetBytes(int64(len(openingsWithoutEnd)))
	for b.Loop() {
		ParseEnvelope(openingsWithoutEnd)
	}
}

func TestStampThenParseRoundTrips(t *testing.T) {
	envFixClock(t)
	tests := []struct {
		in, want Envelope
	}{
		{Envelope{Type: "gate.feedback", Source: "slack", Actor: map[string]string{"github": "jc1993", "slack": "U1"}, TS: "2026-01-02T03:04:05Z"},
			Envelope{Type: "gate.feedback", Source: "slack", Actor: map[string]string{"github": "jc1993", "slack": "U1"}, TS: "2026-01-02T03:04:05Z"}},
		{Envelope{Type: "work-item.reply", Source: "slack"},
			Envelope{Type: "work-item.reply", Source: "slack", TS: "2026-03-05T04:30:00Z"}},
		{Envelope{Type: "t", Source: "s", Actor: map[string]string{"github": "", "": "x"}, TS: "x"},
			Envelope{Type: "t", Source: "s", TS: "x"}},
		{Envelope{Type: "ünïcødé ✓", Source: "\x00\n\t\"\\", Actor: map[string]string{"github": "\u2028"}, TS: "x"},
			Envelope{Type: "ünïcødé ✓", Source: "\x00\n\t\"\\", Actor: map[string]string{"github": "\u2028"}, TS: "x"}},
	}
	for _, tt := range tests {
		got, ok := ParseEnvelope(StampEnvelope("reply", tt.in))
		if !ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Stamp then Parse of %+v = %+v, %v; want %+v", tt.in, got, ok, tt.want)
		}
	}
}

// FuzzParseEnvelope: whatever a comment holds, reading its envelope never
// panics, and what it reads is valid and stamps back to itself.
func FuzzParseEnvelope(f *testing.F) {
	for _, s := range []string{
		"", "approved", selfCommentMarker,
		`<!-- the-loop:event {"type":"gate.feedback","source":"slack","actor":{"github":"jc1993"},"ts":"2026-01-02T03:04:05Z"} -->`,
		`<!-- the-loop:event {"type":"t","source":"s","actor":null} -->`,
		`<!-- the-loop:event {"type":"t","source":"s","actor":{"github":7}} -->`,
		`<!-- the-loop:event {"type":"t","source":"s","type":"u"} -->`,
		`<!-- the-loop:event {"type":"t","source":"s"} {} -->`,
		`<!-- the-loop:event {"type":"t","source":"s","actor":{"a":{"b":{"c":[1,2,{"d":null}]}}}} -->`,
		`<!-- the-loop:event {"type":"\u003e","source":"\ud800"} -->`,
		"<!--the-loop:event\n{\"type\":\"t\",\n\"source\":\"s\"}\n-->",
		"<!-- the-loop:event {" + strings.Repeat("[", 5000) + "} -->",
		"<!-- the-loop:event {\"type\":\"t\xff\",\"source\":\"s\"} -->",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		e, ok := ParseEnvelope(body)
		if !ok {
			if !reflect.DeepEqual(e, Envelope{}) {
				t.Fatalf("a refusal returned %+v", e)
			}
			return
		}
		if e.Type == "" || e.Source == "" {
			t.Fatalf("accepted %+v without a type or a source", e)
		}
		for ch, id := range e.Actor {
			if ch == "" || id == "" {
				t.Fatalf("accepted an empty actor id: %+v", e.Actor)
			}
		}
		// What was read stamps onto a fresh body and reads back the same
		// (dated now when it was not dated).
		got, ok := ParseEnvelope(StampEnvelope("", e))
		if e.TS == "" {
			got.TS = ""
		}
		if !ok || !reflect.DeepEqual(got, e) {
			t.Fatalf("%+v stamped and read back as %+v, %v", e, got, ok)
		}
	})
}

func TestMarkSelfAuthoredIsTheHooksMark(t *testing.T) {
	if got, want := MarkSelfAuthored("posted"), markSelfAuthored("posted"); got != want || !IsSelfAuthored(got) {
		t.Errorf("MarkSelfAuthored = %q, want %q", got, want)
	}
}

// TestAGateRecordsWhoAnsweredFromAChatChannel drives the requirements-approval
// gate's exit chain (classify-feedback, then record-feedback) as an advance
// does, with a reply the operator's account posted on a Slack user's behalf.
func TestAGateRecordsWhoAnsweredFromAChatChannel(t *testing.T) {
	ctFixClock(t)
	envFixClock(t)
	fromSlack := func(github string) string {
		return StampEnvelope("approved", Envelope{Type: "gate.feedback", Source: "slack",
			Actor: map[string]string{"github": github, "slack": "U0456GHIJKL"}})
	}
	tests := []struct {
		name      string
		allowed   []string
		author    string
		body      string
		status    graph.Status
		wantActor string // who the record names; "" when nothing is recorded
	}{
		{"the person who answered, not the poster", []string{"operator", "jc1993"}, "operator", fromSlack("jc1993"), graph.StatusPass, "jc1993"},
		{"logins compare as the gates compare them", []string{"operator", "@JC1993"}, "Operator", fromSlack("jc1993"), graph.StatusPass, "jc1993"},
		{"an actor not on the list changes nothing", []string{"operator"}, "operator", fromSlack("jc1993"), graph.StatusPass, "operator"},
		{"an actor with no github id changes nothing", []string{"operator"}, "operator",
			StampEnvelope("approved", Envelope{Type: "gate.feedback", Source: "slack", Actor: map[string]string{"slack": "U0456GHIJKL"}}), graph.StatusPass, "operator"},
		{"an envelope from a stranger is never read", []string{"jc1993"}, "mallory", fromSlack("jc1993"), graph.StatusWait, ""},
		{"an envelope never makes the-loop's own comment a reply", []string{"operator", "jc1993"}, "operator", MarkSelfAuthored(fromSlack("jc1993")), graph.StatusWait, ""},
		{"a malformed envelope changes nothing", []string{"operator", "jc1993"}, "operator",
			"approved\n\n<!-- the-loop:event {\"type\":\"gate.feedback\",\"source\":\"slack\",\"actor\":{\"github\":\"jc1993\"},\"by\":\"x\"} -->", graph.StatusPass, "operator"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := ctGate(t, tt.allowed, tt.author, tt.body)
			ctx.Node = &graph.Node{ID: "requirements-approval", Actor: graph.ActorHuman}
			ctWrite(t, ctx, "requirements.md", "# R\n")
			gate := ctRun(t, classifyFeedback{}, ctx)
			ctWantStatus(t, gate, tt.status)
			ctx.Results = []graph.Result{gate}
			ctx.Params = map[string]any{"into": "requirements.md"}
			recorded := ctRun(t, recordFeedback{}, ctx)
			doc := ctRead(t, ctx, "requirements.md")
			if tt.wantActor == "" {
				if recorded.Status == graph.StatusPass || doc != "# R\n" {
					t.Errorf("a reply that is not read was recorded:\n%s", doc)
				}
				return
			}
			comments := fbComments(gate.Data["comments"])
			if len(comments) != 1 || comments[0].Author != tt.wantActor {
				t.Errorf("the gate passed on %v, want one reply by %s", comments, tt.wantActor)
			}
			if !strings.Contains(doc, "**@"+tt.wantActor+"** wrote:") || strings.Count(doc, "wrote:") != 1 {
				t.Errorf("requirements.md does not name %s as the one who answered:\n%s", tt.wantActor, doc)
			}
		})
	}
}

func TestFilterAuthorizedOnlyMapsOneAuthorizedLoginToAnother(t *testing.T) {
	ctx := obCtx(nil, nil, "")
	ctx.Settings.AuthorizedUsers = []string{"operator", "jc1993"}
	as := func(github string) string {
		return StampEnvelope("lgtm", Envelope{Type: "gate.feedback", Source: "slack", Actor: map[string]string{"github": github}})
	}
	got := filterAuthorized(ctx, []graph.Comment{
		{Author: "operator", Body: as("jc1993")},
		{Author: "operator", Body: as("mallory")},
		{Author: "mallory", Body: as("jc1993")},
		{Author: "jc1993", Body: as("operator")},
		{Author: "operator", Body: "plain"},
	})
	var authors []string
	for _, c := range got {
		authors = append(authors, c.Author)
	}
	if want := []string{"jc1993", "operator", "operator", "operator"}; !reflect.DeepEqual(authors, want) {
		t.Errorf("authors %q, want %q", authors, want)
	}
	for _, c := range got {
		if !isAuthorized(c.Author, ctx.Settings.AuthorizedUsers) {
			t.Errorf("attribution widened the list: %q", c.Author)
		}
	}
}

func TestAGateReadsOnlyThePersonsWordsInARelayedRecord(t *testing.T) {
	ctFixClock(t)
	envFixClock(t)
	// The attribution names Benito, whose name holds "nit", a hedge the
	// classifier reads as "with comments": only the quoted words count.
	record := StampEnvelope("💬 **the-loop** recorded an answer to the open gate from `Benito` (`slack:U0456`), sent on the **slack** channel:\n\n> approved",
		Envelope{Type: "gate.feedback", Source: "slack", Actor: map[string]string{"github": "benito", "slack": "U0456"}})
	ctx := ctGate(t, []string{"operator", "benito"}, "operator", record)
	ctx.Node = &graph.Node{ID: "requirements-approval", Actor: graph.ActorHuman}
	gate := ctRun(t, classifyFeedback{}, ctx)
	ctWantStatus(t, gate, graph.StatusPass)
	if got := gate.Data["outcome"]; got != graph.OutcomeApproved {
		t.Errorf("outcome = %v, want %s: the record's own line was read as the answer", got, graph.OutcomeApproved)
	}
	comments := fbComments(gate.Data["comments"])
	if len(comments) != 1 || comments[0].Body != "approved" || comments[0].Author != "benito" {
		t.Errorf("the gate read %+v, want benito's words alone", comments)
	}
}

func TestRelayedWords(t *testing.T) {
	relay := func(typ, body string) string {
		return StampEnvelope(body, Envelope{Type: typ, Source: "slack", Actor: map[string]string{"slack": "U1"}})
	}
	for _, tc := range []struct {
		name, body, want string
		ok               bool
	}{
		{"a gate answer", relay("gate.feedback", "head:\n\n> approved\n> with a nit"), "approved\nwith a nit", true},
		{"a control command", relay("control.command", "head:\n\n>the-loop stop"), "the-loop stop", true},
		{"a reply record is not relayed", relay("work-item.reply", "head:\n\n> approved"), "", false},
		{"no quote", relay("gate.feedback", "approved"), "", false},
		{"no envelope", "> approved", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := RelayedWords(tc.body)
			if got != tc.want || ok != tc.ok {
				t.Errorf("RelayedWords = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
