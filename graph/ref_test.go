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

// FuzzParseRef holds ParseRef to RefFor's inverse: whatever it accepts,
// RefFor writes back byte for byte.
func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"github:acme/shop#12", "github:a/b#1", "github:h/a/b#1", "github:acme/shop#012", "issue-3", "github:a/b#2147483648"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		owner, repo, n, err := ParseRef(s)
		if err != nil {
			return
		}
		if back := RefFor(owner+"/"+repo, n); back != s {
			t.Fatalf("ParseRef(%q) = %q %q %d, which RefFor writes %q", s, owner, repo, n, back)
		}
	})
}
