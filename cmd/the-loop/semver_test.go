package main

import (
	"runtime/debug"
	"testing"
)

func TestTheSemanticVersionIsAlwaysSemVer(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}}
	for _, c := range []struct {
		version, ref string
		settings     []debug.BuildSetting
		want         string
	}{
		{"v1.2.3", "", nil, "1.2.3"},
		{"v0.0.0-20261201100000-0123456789ab", "", nil, "0.0.0-20261201100000-0123456789ab"},
		{"(devel)", "", rev, "0.0.0-dev+0123456789ab"},
		{"(devel)", "v2.0.1", nil, "2.0.1"},
		{"(devel)", "feature/x_y", nil, "0.0.0-dev+feature.x-y"},
		{"(devel)", "//", nil, "0.0.0-dev"},
		{"", "", nil, "0.0.0-dev"},
	} {
		old := buildRef
		buildRef = c.ref
		got := semverOf(&debug.BuildInfo{Main: debug.Module{Version: c.version}, Settings: c.settings})
		buildRef = old
		if got != c.want || !semverRE.MatchString(got) {
			t.Errorf("%q, ref %q: got %q, want %q (SemVer)", c.version, c.ref, got, c.want)
		}
	}
}
