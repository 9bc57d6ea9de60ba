package graph

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// laughs is YAML whose nine lines of anchors stand for a billion values.
func laughs() string {
	var b strings.Builder
	b.WriteString("status: approved\na0: &a0 [x,x,x,x,x,x,x,x,x,x]\n")
	for i := 1; i < 9; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 10), ","))
	}
	return b.String()
}

func TestFrontMatterWhoseAliasesExplodeIsNoFrontMatter(t *testing.T) {
	start := time.Now()
	fm, body := SplitFrontMatter("---\n" + laughs() + "---\n# Design\n")
	if len(fm) != 0 || !strings.HasPrefix(body, "---\nstatus: approved") {
		t.Errorf("front matter %v; want none, and the whole text as the body", fm)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %s", took)
	}
	// Nor is front matter of megabytes parsed.
	fm, _ = SplitFrontMatter("---\nstatus: approved\nlist: [" + strings.Repeat("1,", 1<<20) + "1]\n---\n")
	if len(fm) != 0 {
		t.Errorf("a megabyte of front matter was read")
	}
	// A block that uses an alias as people do is read as ever.
	fm, _ = SplitFrontMatter("---\nbase: &b {status: approved}\ndesign: *b\n---\n")
	if d, _ := fm["design"].(map[string]any); d["status"] != "approved" {
		t.Errorf("an ordinary alias: %v", fm)
	}
}
