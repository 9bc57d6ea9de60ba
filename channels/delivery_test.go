package channels

import "testing"

func TestItemOfNamesTheIssueOrPullRequestAPayloadConcerns(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"repository": {"full_name": "acme/shop"}, "issue": {"number": 12}}`, "github:acme/shop#12"},
		{`{"repository": {"full_name": "acme/shop"}, "issue": {"number": 7, "pull_request": {}}}`, "github:acme/shop#7"},
		{`{"repository": {"full_name": "acme/shop"}, "pull_request": {"number": 9}}`, "github:acme/shop#9"},
		{`{"repository": {"full_name": "acme/shop"}}`, ""},
		{`{"repository": {"full_name": "acme"}, "issue": {"number": 1}}`, ""},
		{`{"repository": {"full_name": "acme/shop"}, "issue": {"number": -1}}`, ""},
		{`{"repository": {"full_name": "ac\nme/shop"}, "issue": {"number": 1}}`, ""},
		{`not json`, ""},
	} {
		if got := ItemOf([]byte(tc.body)); got != tc.want {
			t.Errorf("ItemOf(%s) = %q, want %q", tc.body, got, tc.want)
		}
	}
}

// FuzzItemOf: any body, however malformed, names a well-formed ref or none.
func FuzzItemOf(f *testing.F) {
	f.Add([]byte(`{"repository": {"full_name": "acme/shop"}, "issue": {"number": 12}}`))
	f.Add([]byte(`{"repository": {"full_name": "acme/shop"}, "pull_request": {"number": 9}}`))
	f.Add([]byte(`[[[[`))
	f.Fuzz(func(t *testing.T, body []byte) {
		ref := ItemOf(body)
		if ref == "" {
			return
		}
		if _, err := ParseRef(ref); err != nil {
			t.Fatalf("ItemOf named %q, which is not a ref: %v", ref, err)
		}
	})
}
