package main

import (
	"runtime/debug"
	"testing"
)

func TestVersionSaysTheModuleVersionAndTheRevision(t *testing.T) {
	setting := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	for _, c := range []struct {
		version  string
		settings []debug.BuildSetting
		want     string
	}{
		{"v1.2.3", nil, "the-loop v1.2.3"},
		{"", nil, "the-loop (devel)"},
		{"(devel)", setting("vcs.revision", "0123456789abcdef0123", "vcs.time", "2026-12-01T10:00:00Z", "vcs.modified", "false"),
			"the-loop (devel) (0123456789ab, 2026-12-01T10:00:00Z)"},
		{"(devel)", setting("vcs.revision", "0123456789abcdef0123", "vcs.modified", "true"), "the-loop (devel) (0123456789ab-dirty)"},
	} {
		bi := &debug.BuildInfo{Main: debug.Module{Version: c.version}, Settings: c.settings}
		if got := versionOf(bi); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

// TestVersionAloneIsKongsAnswer: run answers --version alone itself; kong
// answers it beside other arguments. Both say the same.
func TestVersionAloneIsKongsAnswer(t *testing.T) {
	alone, stderr, code := runCLI(t, nil, "--version")
	if code != 0 || stderr != "" || alone != version()+"\n" {
		t.Fatalf("--version: exit %d, stdout %q, stderr %q", code, alone, stderr)
	}
	for _, args := range [][]string{{"-v", "--version"}, {"--version", "-v"}, {"check", "--version"}} {
		stdout, stderr, code := runCLI(t, nil, args...)
		if code != 0 || stderr != "" || stdout != alone {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 0 and %q", args, code, stdout, stderr, alone)
		}
	}
}
