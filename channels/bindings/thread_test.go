package bindings

import (
	"errors"
	"strings"
	"testing"
)

func TestParseThreadAcceptsSlacksShapeOnly(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // the error's "want" clause; "" for a thread read
	}{
		{"C0123ABC:1712345678.000100", ""},
		{"G01:1.1", ""},
		{"C0123ABC", "want CHANNEL:THREAD_TS"},
		{"c0123abc:1712345678.000100", "want a Slack channel id"},
		{"C:1712345678.000100", "want a Slack channel id"},
		{"#general:1712345678.000100", "want a Slack channel id"},
		{"C0123ABC:1712345678", "want a Slack thread timestamp"},
		{"C0123ABC:1712345678.0001000000", "want a Slack thread timestamp"},
		{"C0123ABC:1712345678.000100:x", "want a Slack thread timestamp"},
		{"C0123ABC:١٢.٣", "want a Slack thread timestamp"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			th, err := ParseThread(tc.in)
			if tc.want == "" {
				if err != nil || th.String() != tc.in {
					t.Errorf("ParseThread = %v, %v", th, err)
				}
				return
			}
			var te *ThreadError
			if !errors.As(err, &te) || !strings.Contains(err.Error(), tc.want) || te.Value != tc.in {
				t.Errorf("ParseThread = %v, want a *ThreadError saying %q", err, tc.want)
			}
		})
	}
}

func TestTargetValidateWantsOneUsableTarget(t *testing.T) {
	for _, tc := range []struct {
		name string
		t    Target
		kind string // "" when it must be refused
	}{
		{"an https URL", Target{URL: "https://hooks.example.com/x?y=1"}, TargetURL},
		{"an http URL", Target{URL: "http://127.0.0.1:8080/"}, TargetURL},
		{"a command", Target{Command: []string{"/usr/local/bin/notify", "--loud"}}, TargetCommand},
		{"neither", Target{}, ""},
		{"both", Target{URL: "https://example.com", Command: []string{"x"}}, ""},
		{"a relative URL", Target{URL: "/hook"}, ""},
		{"a URL with no host", Target{URL: "https:///hook"}, ""},
		{"another scheme", Target{URL: "ftp://example.com/"}, ""},
		{"an opaque URL", Target{URL: "mailto:ops@example.com"}, ""},
		{"an empty program", Target{Command: []string{"", "x"}}, ""},
		{"a NUL in an argument", Target{Command: []string{"x", "a\x00b"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.t.Validate()
			var te *TargetError
			switch {
			case tc.kind != "" && (err != nil || tc.t.Kind() != tc.kind):
				t.Errorf("Validate = %v, Kind = %q; want it accepted as %s", err, tc.t.Kind(), tc.kind)
			case tc.kind == "" && !errors.As(err, &te):
				t.Errorf("Validate = %v, want a *TargetError", err)
			}
		})
	}
}
