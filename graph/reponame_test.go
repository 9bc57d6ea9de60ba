package graph

import (
	"errors"
	"path"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseRepoNameTakesGitHubsNames(t *testing.T) {
	for _, tc := range []struct{ in, owner, name string }{
		{"acme/shop", "acme", "shop"},
		{"Acme/Shop", "Acme", "Shop"}, // case kept as written
		{"a/b", "a", "b"},
		{"octo-org/infra", "octo-org", "infra"},
		{"octocat_acme/notes", "octocat_acme", "notes"}, // an Enterprise Managed User
		{"old--login-/x", "old--login-", "x"},           // a login from before the hyphen rule
		{"acme/.github", "acme", ".github"},
		{"acme/_site", "acme", "_site"},
		{"acme/a.b_c-d", "acme", "a.b_c-d"},
		{"acme/...", "acme", "..."},
		{"acme/.git-tools", "acme", ".git-tools"},
		{"0/9", "0", "9"},
		{strings.Repeat("o", 39) + "/" + strings.Repeat("r", 100), strings.Repeat("o", 39), strings.Repeat("r", 100)},
	} {
		got, err := ParseRepoName(tc.in)
		if err != nil || got.Owner != tc.owner || got.Name != tc.name {
			t.Errorf("ParseRepoName(%q) = %+v, %v; want %s/%s", tc.in, got, err, tc.owner, tc.name)
			continue
		}
		if got.String() != tc.in {
			t.Errorf("ParseRepoName(%q).String() = %q", tc.in, got.String())
		}
	}
}

func TestParseRepoNameRefusesWhatIsNoOwnerSlashName(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want: a part of the message
	}{
		{"../../etc", `unusable repository segment ".." in "../../etc"`},
		{"evil/..", `unusable repository segment ".." in "evil/.."`},
		{"evil/.", `unusable repository segment "." in "evil/."`},
		{"./x", `unusable repository segment "." in "./x"`},
		{"../x", `unusable repository segment ".." in "../x"`},
		{"acme//app", `unusable repository segment "" in "acme//app"`},
		{"/app", `unusable repository segment "" in "/app"`},
		{"acme/", `unusable repository segment "" in "acme/"`},
		{"/", `unusable repository segment "" in "/"`},
		{"a/b/c", `3 segments`},
		{"ghe.corp.example/octo/infra", `3 segments`},
		{"acme/app/", `unusable repository segment ""`},
		{"", `empty`},
		{".", `no "/"`},
		{"acme", `no "/"`},
		{"-x/app", `unusable repository segment "-x"`},
		{"acme/-rf", `unusable repository segment "-rf"`},
		{"_x/app", `unusable repository segment "_x"`},
		{"a_/b", `unusable repository segment "a_"`},     // a_/b and a/_b would share a state key
		{"a__b/c", `unusable repository segment "a__b"`}, // and a__b/c and a/b__c
		{".x/app", `unusable repository segment ".x"`},
		{"ac.me/app", `unusable repository segment "ac.me"`},
		{"acme/my app", `unusable repository segment "my app"`},
		{" acme/app", `unusable repository segment " acme"`},
		{"acme/app ", `unusable repository segment "app "`},
		{"acme/app\n", `unusable repository segment "app\n"`},
		{"acme/app\x00", `unusable repository segment`},
		{"acme\\app", `no "/"`},
		{`acme/..\..`, `unusable repository segment`},
		{"acme/app.git", `clone URL`},
		{"acme/APP.GIT", `clone URL`},
		{"acme/.git", `clone URL`},
		{"https://github.com/acme/app", `unusable repository segment "https:"`},
		{"github.com/acme/app", `3 segments`},
		{"acme/app#3", `unusable repository segment "app#3"`},
		{"acme/app?x", `unusable repository segment`},
		{"acme/app:main", `unusable repository segment`},
		{"acme/%2e%2e", `unusable repository segment`},
		{"acmé/app", `unusable repository segment "acmé"`},
		{"acme/ápp", `unusable repository segment "ápp"`},
		{"acme／app", `no "/"`}, // a fullwidth solidus is no slash
		{"acme/app\u200b", `unusable repository segment`},
		{"ａcme/app", `unusable repository segment`},
		{strings.Repeat("o", 40) + "/app", `unusable repository segment "` + strings.Repeat("o", 40) + `"`},
		{"acme/" + strings.Repeat("r", 101), `unusable repository segment`},
		{strings.Repeat("a/", 5000), `bytes, longer than any`},
	} {
		got, err := ParseRepoName(tc.in)
		if err == nil {
			t.Errorf("ParseRepoName(%q) = %+v, want an error", tc.in, got)
			continue
		}
		var re *RepoNameError
		if !errors.As(err, &re) {
			t.Errorf("ParseRepoName(%q): %T, want a *RepoNameError", tc.in, err)
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "want OWNER/NAME") {
			t.Errorf("ParseRepoName(%q): %v\nwant it to say %q and what a name looks like", tc.in, err, tc.want)
		}
		if len(err.Error()) > 1000 {
			t.Errorf("ParseRepoName(%q): a message of %d bytes", tc.in, len(err.Error()))
		}
	}
}

func TestRefForAndParseRefShareTheRepositoryRule(t *testing.T) {
	for _, slug := range []string{"../../etc", "evil/..", "a/b/c", "acme/app.git", "-x/y", " acme/app"} {
		if got := RefFor(slug, 1); got != "" {
			t.Errorf("RefFor(%q) = %q, want none", slug, got)
		}
		if _, _, _, err := ParseRef(RefPrefix + slug + "#1"); err == nil {
			t.Errorf("ParseRef accepted %q", slug)
		}
	}
	if got := RefFor("acme/.github", 7); got != "github:acme/.github#7" {
		t.Errorf("RefFor(acme/.github) = %q", got)
	}
}

// FuzzParseRepoName holds what a caller relies on for any input: an
// accepted name is two path segments that stay below the directory they
// are joined to, round-trips through String, and is one StateKey segment;
// a refusal is a *RepoNameError of bounded size.
// TestNoTwoRepositoriesShareAStateKey: the key of an inner loop's state is
// the repository's own, however its names play with "_".
func TestNoTwoRepositoriesShareAStateKey(t *testing.T) {
	names := []string{"a", "b", "_b", "__b", "b_", "b__c", "a_b", "a-b", "_", "__", "a_b_c"}
	seen := map[string]string{}
	for _, owner := range names {
		for _, name := range names {
			r, err := ParseRepoName(owner + "/" + name)
			if err != nil {
				continue
			}
			if other, ok := seen[r.StateKey()]; ok {
				t.Errorf("%s and %s share the state key %q", other, r, r.StateKey())
			}
			seen[r.StateKey()] = r.String()
		}
	}
	if len(seen) < 40 {
		t.Errorf("only %d of the names were taken", len(seen))
	}
}

func FuzzParseRepoName(f *testing.F) {
	for _, s := range []string{"acme/shop", "../../etc", "evil/..", "a/b/c", "acme/.github", "octocat_acme/x",
		"acme/app.git", "-x/y", "acme//app", "acmé/app", "a/" + strings.Repeat("r", 100), ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRepoName(s)
		if err != nil {
			var re *RepoNameError
			if !errors.As(err, &re) {
				t.Fatalf("%q: %T", s, err)
			}
			if len(err.Error()) > 1200 {
				t.Fatalf("%q: a message of %d bytes", s, len(err.Error()))
			}
			if RefFor(s, 1) != "" {
				t.Fatalf("RefFor took %q, which ParseRepoName refuses", s)
			}
			return
		}
		if r.String() != s || !utf8.ValidString(s) {
			t.Fatalf("%q read as %q", s, r)
		}
		if owner, name, ok := strings.Cut(r.StateKey(), "__"); !ok || owner != r.Owner || name != r.Name {
			t.Fatalf("%q: the state key %q does not name it alone", s, r.StateKey())
		}
		for _, p := range []string{r.Owner, r.Name, r.StateKey()} {
			if p == "" || p == "." || p == ".." || strings.ContainsAny(p, "/\\\x00 \t\r\n") || p[0] == '-' {
				t.Fatalf("%q: segment %q is not one safe path segment", s, p)
			}
		}
		if j := path.Join("pr-loops", r.StateKey(), "pr-1"); j != "pr-loops/"+r.StateKey()+"/pr-1" {
			t.Fatalf("%q: joined as %q", s, j)
		}
		if len(r.Owner) > MaxOwnerLen || len(r.Name) > MaxRepoNameLen {
			t.Fatalf("%q: over GitHub's bounds", s)
		}
		owner, name, n, err := ParseRef(RefFor(s, 1))
		if err != nil || owner != r.Owner || name != r.Name || n != 1 {
			t.Fatalf("%q: the ref does not read back: %s %s %d %v", s, owner, name, n, err)
		}
	})
}
