package channels

import "testing"

func TestScrubMasksCredentialsAndKeepsOrdinaryText(t *testing.T) {
	env := []string{"GH_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123", "HOME=/home/me", "API_KEY=s3cr3t!", "LANG=C", "SHORT_KEY=abc"}
	for _, tc := range []struct{ in, want string }{
		{"approved", "approved"},
		{"token ghp_abcdefghijklmnopqrstuvwxyz0123 here", "token <redacted:env> here"},
		{"key s3cr3t! leaked", "key <redacted:env> leaked"},
		{"a xoxb-1234567890-abcdefghijkl token", "a <redacted:token> token"},
		{"an extraordinarily-long-hyphenated-phrase survives", "an extraordinarily-long-hyphenated-phrase survives"},
		{"see /srv/build/0123456789abcdefghijkl for it", "see /srv/build/0123456789abcdefghijkl for it"},
		{"abc keeps a short value: abc", "abc keeps a short value: abc"},
		{"LANG C stays", "LANG C stays"},
	} {
		if got := Scrub(tc.in, env); got != tc.want {
			t.Errorf("Scrub(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestScrubMasksATokenByItsPrefixWhereverItStands: a GitHub or Slack
// token is pasted most often inside a URL (a clone URL's user, a path),
// where a token-shaped run is otherwise left alone as part of a path.
func TestScrubMasksATokenByItsPrefixWhereverItStands(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123@github.com/acme/shop",
			"git clone https://<redacted:token>@github.com/acme/shop"},
		{"https://x.example/hook/xoxb-1234567890-abcdefghijkl", "https://x.example/hook/<redacted:token>"},
		{"see github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "see <redacted:token>"},
		{"/srv/ghp_cache/build-output", "/srv/ghp_cache/build-output"},
		{"the ghp_ prefix and xoxb- prefix", "the ghp_ prefix and xoxb- prefix"},
	} {
		if got := Scrub(tc.in, []string{}); got != tc.want {
			t.Errorf("Scrub(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
