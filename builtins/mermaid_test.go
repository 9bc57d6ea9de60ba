package builtins

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The fixtures under testdata/content/mermaid/valid must parse cleanly; they
// include every diagram in the design seeds. Each file under invalid/ opens
// with "%% want N: text": the checker must report an issue on line N whose
// message contains text.

func TestMermaidAcceptsValidDiagrams(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "content", "mermaid", "valid", "*.mmd"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no valid fixtures: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if issues := checkMermaid(string(src)); len(issues) > 0 {
				t.Errorf("valid diagram reported: %+v", issues)
			}
		})
	}
}

var ctWantIssue = regexp.MustCompile(`^%% want (\d+): (.+)$`)

func TestMermaidRejectsInvalidDiagrams(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "content", "mermaid", "invalid", "*.mmd"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no invalid fixtures: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(src), "\n")
			m := ctWantIssue.FindStringSubmatch(first)
			if m == nil {
				t.Fatalf("fixture does not open with %%%% want N: text")
			}
			line, _ := strconv.Atoi(m[1])
			issues := checkMermaid(string(src))
			for _, is := range issues {
				if is.Line == line && strings.Contains(is.Msg, m[2]) {
					return
				}
			}
			t.Errorf("want an issue on line %d containing %q, got %+v", line, m[2], issues)
		})
	}
}

func TestMermaidReportsEveryFaultNotJustTheFirst(t *testing.T) {
	src := "flowchart LR\n  A[x (y)] --> B\n  C -->|a (b)| D\n  subgraph open\n"
	issues := checkMermaid(src)
	if len(issues) != 3 {
		t.Fatalf("want 3 issues (two labels, one unclosed subgraph), got %+v", issues)
	}
	for i, want := range []int{2, 3, 4} {
		if issues[i].Line != want {
			t.Errorf("issue %d on line %d, want %d", i, issues[i].Line, want)
		}
	}
}

func TestMermaidMultiLineFaultNamesItsOwnLine(t *testing.T) {
	src := "flowchart LR\n  A[\"two\nlines\" extra] --> B\n"
	issues := checkMermaid(src)
	if len(issues) != 1 || issues[0].Line != 3 {
		t.Fatalf("want one issue on line 3, got %+v", issues)
	}
}

func TestMermaidKnowsEveryDiagramHeader(t *testing.T) {
	for _, header := range []string{
		"flowchart TD", "flowchart", "graph LR", "graph BT;", "flowchart-elk TB",
		"sequenceDiagram", "classDiagram", "classDiagram-v2", "stateDiagram", "stateDiagram-v2",
		"erDiagram", "gantt", "pie", "pie showData", "journey", "gitGraph", "mindmap", "timeline",
		"quadrantChart", "requirementDiagram", "C4Context", "C4Container", "sankey-beta",
		"xychart-beta", "block-beta", "packet-beta", "architecture-beta", "kanban",
	} {
		if issues := checkMermaid(header + "\n"); len(issues) > 0 {
			t.Errorf("%s: %+v", header, issues)
		}
	}
}

func TestMermaidRefusesLookalikeHeaders(t *testing.T) {
	// The reference implementation matched type names as prefixes, so
	// "graphs" and "flowchartLR" passed; mermaid itself rejects both.
	for _, header := range []string{"graphs TD", "flowchartLR", "Flowchart TD", "sequence", "sequencediagram"} {
		issues := checkMermaid(header + "\n  A --> B\n")
		if len(issues) != 1 || !strings.Contains(issues[0].Msg, "unknown diagram type") {
			t.Errorf("%s: want unknown diagram type, got %+v", header, issues)
		}
	}
}

func FuzzMermaid(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "content", "mermaid", "*", "*.mmd"))
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(string(b))
		}
	}
	for _, s := range []string{
		"", "graph", "graph TD;", "flowchart LR\nA[", "flowchart LR\nA@{", "flowchart LR\nA -- ",
		"flowchart LR\nA[\"", "sequenceDiagram\n->>", "sequenceDiagram\nnote", "erDiagram\n}|--|{",
		"---\n", "flowchart LR\n\"", "flowchart LR\nA-->|", "flowchart LR\nA:::", "flowchart LR\nA e@",
		"flowchart LR\nsubgraph [\"", "sequenceDiagram\n<<", "graph\n\xff\xfe[",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		for _, is := range checkMermaid(src) {
			if is.Line < 1 || is.Msg == "" {
				t.Fatalf("malformed issue %+v", is)
			}
			if n := strings.Count(src, "\n") + 1; is.Line > n {
				t.Fatalf("issue on line %d of a %d-line diagram", is.Line, n)
			}
		}
	})
}
