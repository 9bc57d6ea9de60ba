package graph

import (
	"strings"
	"testing"
)

func TestParseRefIsRefForsInverseAndAsStrict(t *testing.T) {
	owner, repo, n, err := ParseRef(RefFor("acme/shop.js", 12))
	if err != nil || owner != "acme" || repo != "shop.js" || n != 12 {
		t.Fatalf("got %q %q %d %v", owner, repo, n, err)
	}
	for _, ref := range []string{
		"issue-12", "acme/shop#12", "gitlab:acme/shop#12", "github:acme#12", "github:acme/shop",
		"github:acme/shop#", "github:acme/shop#0", "github:acme/shop#-3", "github:acme/shop#+3",
		"github:acme/shop#012", "github:acme/shop#12/x", "github:acme/sh/op#12", "github:../shop#1",
		"github:acme/shop#1 ", " github:acme/shop#1", "github:ac me/shop#1", "github:acme/shop#99999999999999999999",
	} {
		if _, _, _, err := ParseRef(ref); err == nil {
			t.Errorf("ParseRef(%q) accepted it", ref)
		} else if !strings.Contains(err.Error(), "want github:OWNER/REPO#N") {
			t.Errorf("ParseRef(%q): %v does not say what a ref looks like", ref, err)
		}
	}
}
