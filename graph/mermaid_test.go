package graph

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// goldenFile compares got with testdata/name, or rewrites it under -update.
func goldenFile(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test ./graph -run %s -update rewrites it):\n--- got\n%s\n--- want\n%s", name, t.Name(), got, want)
	}
}

func TestMermaidDrawsTheLoopAndAnItemOnIt(t *testing.T) {
	rt, _ := newRuntime(t)
	plain := Mermaid(rt.Graph, nil)
	goldenFile(t, "mini.mermaid", plain)

	// Forced to build: the selection gate waits, draft blocks, review
	// waits, build passes on the record of a force, done is not reached.
	if _, err := rt.Force("item", "build", "jump", "me"); err != nil {
		t.Fatal(err)
	}
	rep, err := rt.Status("item", false)
	if err != nil {
		t.Fatal(err)
	}
	status := Mermaid(rt.Graph, rep)
	goldenFile(t, "mini-status.mermaid", status)
	if again := Mermaid(rt.Graph, rep); again != status {
		t.Errorf("two renderings differ:\n%s\n---\n%s", status, again)
	}
}

func TestMermaidLinksEachPairOnceAndDotsTheWayBack(t *testing.T) {
	rt, _ := newRuntime(t)
	got := Mermaid(rt.Graph, nil)
	for _, want := range []string{
		`  n1_draft -->|"pass, skipped"| n2_review` + "\n",
		`  n2_review -.->|"changes-requested"| n1_draft` + "\n",
		`  n0_select{{"select"}}` + "\n", // a human gate
		`  n4_done(["done"])` + "\n",     // terminal
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "n1_draft -->"); n != 1 {
		t.Errorf("draft -> review drawn %d times, want once", n)
	}
}

func TestMermaidMarksTheCurrentNodeAndGreysWhatIsAhead(t *testing.T) {
	rt, _ := newRuntime(t)
	rep, err := rt.Status("item", false)
	if err != nil {
		t.Fatal(err)
	}
	got := Mermaid(rt.Graph, rep)
	for _, want := range []string{
		`  n0_select{{"◉ select<br>wait"}}` + "\n",
		"  class n0_select waiting\n",
		"  class n1_draft,n2_review,n3_build,n4_done notReached\n",
		"  class n0_select current\n",
		"  accDescr: item at select: unmet\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	// A node past the pointer shows no verdict: it is not a finding yet.
	if strings.Contains(got, `"draft<br>`) {
		t.Errorf("draft is ahead and shows a verdict:\n%s", got)
	}
}

func TestMermaidIDsAreDistinctIdentifiers(t *testing.T) {
	ids := []string{"end", "a-b", "a_b", "o", "x-->y", "", "désign", "subgraph", "a b"}
	valid := regexp.MustCompile(`^n[0-9]+(_[A-Za-z0-9_]*)?$`)
	seen := map[string]string{}
	for i, id := range ids {
		got := mermaidID(i, id)
		if !valid.MatchString(got) {
			t.Errorf("%q -> %q, want letters, digits and underscores after n<index>", id, got)
		}
		if prev, dup := seen[got]; dup {
			t.Errorf("%q and %q share the id %q", prev, id, got)
		}
		seen[got] = id
	}
	if got := mermaidID(3, "design-approval"); got != "n3_design_approval" {
		t.Errorf("got %q", got)
	}
}

func TestMermaidTextEscapesWhatWouldBreakALabel(t *testing.T) {
	cases := []struct{ in, want string }{
		{"design", "design"},
		{`say "hi"`, "say #quot;hi#quot;"},
		{"[x] (y) {z} |w|", "[x] (y) {z} |w|"}, // inside quotes brackets are text
		{"a#quot;b", "a#35;quot;b"},            // an entity in the id stays text
		{"<b>&</b>", "#lt;b#gt;#amp;#lt;/b#gt;"},
		{"`md`", "#96;md#96;"},
		{"two\nlines\tand\x1b[31m", "two lines and [31m"},
	}
	for _, c := range cases {
		if got := mermaidText(c.in); got != c.want {
			t.Errorf("mermaidText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestMermaidVerdictClassesEveryStatus(t *testing.T) {
	for status, want := range map[Status]string{
		StatusPass: mermaidPassed, StatusSkip: mermaidSkipped, StatusBlock: mermaidBlocked, StatusWait: mermaidWaiting, "": "", "unknown": "",
	} {
		if got := mermaidVerdict(string(status)); got != want {
			t.Errorf("mermaidVerdict(%q) = %q, want %q", status, got, want)
		}
	}
}
