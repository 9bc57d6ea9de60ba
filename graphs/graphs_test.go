package graphs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestFileName(t *testing.T) {
	tests := []struct {
		name string
		want string
	}{
		{"pdlc-work-item-loop", "pdlc-work-item-loop.yaml"},
		{"pdlc-pr-loop", "pdlc-pr-loop.yaml"},
		{"pdlc-contribution-loop", "pdlc-contribution-loop.yaml"},
		{"pdlc-adhoc-loop", "pdlc-adhoc-loop.yaml"},
		{"anything", "anything.yaml"},
	}
	for _, tt := range tests {
		if got := FileName(tt.name); got != tt.want {
			t.Errorf("FileName(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestLoop(t *testing.T) {
	tests := []struct {
		name    string
		wantErr bool
	}{
		{"pdlc-work-item-loop", false},
		{"pdlc-pr-loop", false},
		{"pdlc-contribution-loop", false},
		{"pdlc-adhoc-loop", false},
		{"", true},
		{"pdlc-project-management-loop", true},
		{"pdlc-work-item-loop.yaml", true},
		{"PDLC-PR-LOOP", true},
		{"../graphs/pdlc-pr-loop", true},
		{"harness-config.default", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := Loop(tt.name)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Loop(%q) succeeded, want an error", tt.name)
				}
				if !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("error %v does not wrap fs.ErrNotExist", err)
				}
				for _, n := range Names {
					if !strings.Contains(err.Error(), n) {
						t.Errorf("error %q does not name the known loop %s", err, n)
					}
				}
				if src != nil {
					t.Errorf("got %d bytes alongside the error", len(src))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var head struct {
				Version int    `yaml:"version"`
				Name    string `yaml:"name"`
			}
			if err := yaml.Unmarshal(src, &head); err != nil {
				t.Fatal(err)
			}
			if head.Name != tt.name || head.Version != 1 {
				t.Errorf("file declares name %q version %d, want %q version 1", head.Name, head.Version, tt.name)
			}
		})
	}
}

func TestLoopReturnsACopy(t *testing.T) {
	a, err := Loop(Names[0])
	if err != nil {
		t.Fatal(err)
	}
	clear(a)
	b, _ := Loop(Names[0])
	if bytes.Equal(a, b) {
		t.Fatal("changing one result changed the next")
	}
}

func TestDefaultHarnessConfig(t *testing.T) {
	a := DefaultHarnessConfig()
	clear(a)
	cfg := DefaultHarnessConfig()
	if bytes.Equal(a, cfg) {
		t.Fatal("changing one result changed the next")
	}
	var doc map[string]any
	if err := yaml.Unmarshal(cfg, &doc); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		path string
		want any
	}{
		{"version", "0.2.0"},
		{"ticketing.system", "github"},
		{"ticketing.github.owner", ""},
		{"ticketing.github.repo", ""},
		{"ticketing.github.useProjects", true},
		{"workflow.specDir", "docs/specs"},
		{"workflow.phaseLabelPrefix", "loop:"},
		{"autonomy.defaultTier", 3},
		{"autonomy.tiers.5", "human-approves-spec-and-pr"},
		{"security.review.humanSignOffMinTier", 4},
		{"reviews.critics", []any{}},
		{"notifications.events.pr-review-pending", []any{"reviewer", "approver"}},
	}
	for _, tt := range tests {
		got, ok := lookup(doc, tt.path)
		if !ok {
			t.Errorf("%s: missing", tt.path)
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) || fmt.Sprintf("%T", got) != fmt.Sprintf("%T", tt.want) {
			t.Errorf("%s = %#v, want %#v", tt.path, got, tt.want)
		}
	}
	if _, ok := doc["graph"]; ok {
		t.Error("the graph.hooks example must stay commented out")
	}
}

func lookup(doc map[string]any, path string) (any, bool) {
	var cur any = doc
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// The scaffolder substitutes owner and repo line by line inside the
// ticketing block, so those two lines must keep their exact shape.
func TestDefaultHarnessConfigPlaceholders(t *testing.T) {
	topLevel := regexp.MustCompile(`^[A-Za-z]`)
	placeholder := regexp.MustCompile(`^    (owner|repo): ""$`)
	inside := false
	found := map[string]int{}
	for _, line := range strings.Split(string(DefaultHarnessConfig()), "\n") {
		if topLevel.MatchString(line) {
			inside = strings.HasPrefix(line, "ticketing:")
			continue
		}
		if m := placeholder.FindStringSubmatch(line); m != nil {
			if !inside {
				t.Errorf("placeholder %q outside the ticketing block", line)
			}
			found[m[1]]++
		}
	}
	if found["owner"] != 1 || found["repo"] != 1 {
		t.Errorf("placeholder lines: got %v, want one owner and one repo", found)
	}
}

// shippedHooks are the hook names the builtins package registers.
var shippedHooks = []string{
	"await-inner-loops", "classify-adhoc-reply", "classify-feedback", "classify-goal",
	"classify-phase-selection", "deliver-assignment", "enforces-boundaries-from",
	"lint-artifacts", "log-entry", "mcp-call", "notify", "post-goal-request",
	"post-phase-selection", "publish-artifact", "record-feedback", "request-review",
	"set-phase-label", "validate-artifacts", "verify-tests",
}

var outcomes = []string{
	"pass", "skipped", "selected", "approved", "approved-with-comments",
	"changes-requested", "defined", "more-work", "done",
}

type loopFile struct {
	Version  int                 `yaml:"version"`
	Name     string              `yaml:"name"`
	Start    string              `yaml:"start"`
	SkipSets map[string][]string `yaml:"skipSets"`
	Nodes    []struct {
		ID        string   `yaml:"id"`
		Phase     string   `yaml:"phase"`
		Actor     string   `yaml:"actor"`
		Required  bool     `yaml:"required"`
		Skippable bool     `yaml:"skippable"`
		OptIn     bool     `yaml:"optIn"`
		Terminal  bool     `yaml:"terminal"`
		Entry     []any    `yaml:"entry"`
		Exit      []any    `yaml:"exit"`
		Produces  []string `yaml:"produces"`
	} `yaml:"nodes"`
	Edges []loopEdge `yaml:"edges"`
}

type loopEdge struct {
	From string `yaml:"from"`
	To   string `yaml:"to"`
	On   string `yaml:"on"`
}

func loadLoop(t *testing.T, name string) loopFile {
	t.Helper()
	src, err := Loop(name)
	if err != nil {
		t.Fatal(err)
	}
	var lf loopFile
	dec := yaml.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&lf); err != nil {
		t.Fatal(err)
	}
	return lf
}

// A structural check that runs without the Python mirror: the shipped loops
// are self-consistent and use only shipped hooks and known outcomes.
func TestLoopsAreWellFormed(t *testing.T) {
	for _, name := range Names {
		t.Run(name, func(t *testing.T) {
			lf := loadLoop(t, name)
			nodes := map[string]int{}
			skippable := map[string]bool{}
			for i, n := range lf.Nodes {
				if _, dup := nodes[n.ID]; dup {
					t.Errorf("duplicate node %s", n.ID)
				}
				nodes[n.ID] = i
				if !slices.Contains([]string{"agent", "human", "code"}, n.Actor) {
					t.Errorf("node %s: actor %q", n.ID, n.Actor)
				}
				if n.Required && (n.Skippable || n.OptIn) {
					t.Errorf("node %s is both required and skippable", n.ID)
				}
				skippable[n.ID] = n.Skippable || n.OptIn
				for _, chain := range [][]any{n.Entry, n.Exit} {
					for _, e := range chain {
						hook, _ := e.(string)
						if m, ok := e.(map[string]any); ok {
							hook, _ = m["hook"].(string)
						}
						if !slices.Contains(shippedHooks, hook) {
							t.Errorf("node %s: unknown hook %v", n.ID, e)
						}
					}
				}
			}
			if _, ok := nodes[lf.Start]; !ok {
				t.Errorf("start %q is not a node", lf.Start)
			}
			for _, e := range lf.Edges {
				if _, ok := nodes[e.From]; !ok {
					t.Errorf("edge from unknown node %s", e.From)
				}
				if _, ok := nodes[e.To]; !ok {
					t.Errorf("edge to unknown node %s", e.To)
				}
				if !slices.Contains(outcomes, e.On) {
					t.Errorf("edge %s->%s on unknown outcome %q", e.From, e.To, e.On)
				}
				if e.On == "skipped" && !skippable[e.From] {
					t.Errorf("skipped edge leaves %s, which cannot be skipped", e.From)
				}
			}
			for id, ok := range skippable {
				if ok && !slices.ContainsFunc(lf.Edges, func(e loopEdge) bool {
					return e.From == id && e.On == "skipped"
				}) {
					t.Errorf("skippable node %s has no skipped edge", id)
				}
			}
			for set, members := range lf.SkipSets {
				for _, m := range members {
					i, ok := nodes[m]
					switch {
					case !ok:
						t.Errorf("skip set %s names unknown node %s", set, m)
					case !lf.Nodes[i].Skippable || lf.Nodes[i].OptIn:
						t.Errorf("skip set %s names %s, which is not plainly skippable", set, m)
					}
				}
			}
		})
	}
}

// Every phase a loop's nodes carry appears in the default config's
// workflow.phases, in the same order, so the labels the graph sets exist.
func TestDefaultPhasesCoverTheLoops(t *testing.T) {
	var cfg struct {
		Workflow struct {
			Phases []string `yaml:"phases"`
		} `yaml:"workflow"`
	}
	if err := yaml.Unmarshal(DefaultHarnessConfig(), &cfg); err != nil {
		t.Fatal(err)
	}
	for _, name := range Names {
		last := -1
		for _, n := range loadLoop(t, name).Nodes {
			if n.Phase == "" {
				continue
			}
			i := slices.Index(cfg.Workflow.Phases, n.Phase)
			if i < 0 {
				t.Errorf("%s: phase %s of node %s missing from workflow.phases", name, n.Phase, n.ID)
				continue
			}
			if i < last {
				t.Errorf("%s: phase %s of node %s is out of order in workflow.phases", name, n.Phase, n.ID)
			}
			last = i
		}
	}
}

func ExampleLoop() {
	_, err := Loop("pdlc-sprint-loop")
	fmt.Println(errors.Is(err, fs.ErrNotExist))
	src, _ := Loop("pdlc-adhoc-loop")
	fmt.Println(bytes.Contains(src, []byte("start: work")))
	// Output:
	// true
	// true
}
