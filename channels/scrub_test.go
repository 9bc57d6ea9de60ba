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
