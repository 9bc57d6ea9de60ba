package repo

import "testing"

func TestTempTargetReadsOnlyWhatWriteFileNames(t *testing.T) {
	for name, want := range map[string]string{
		".state.json.123.tmp": "state.json",
		".a.0.tmp":            "a",
		"..x.1.tmp":           ".x",
		".a.tmp":              "",
		".a.12x.tmp":          "",
		"a.1.tmp":             "",
		".a.1.tmp.bak":        "",
		"..1.tmp":             "",
		".a..tmp":             "",
	} {
		got, ok := tempTarget(name)
		if got != want || ok != (want != "") {
			t.Errorf("tempTarget(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
}
