package builtins

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"
)

// gateCases decodes testdata/gates/<file> into a list of T.
func gateCases[T any](t *testing.T, file string) []T {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "gates", file))
	if err != nil {
		t.Fatal(err)
	}
	var cases []T
	if err := yaml.Unmarshal(data, &cases); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(cases) == 0 {
		t.Fatalf("%s: no cases", file)
	}
	return cases
}

func TestSelectionChecklistParsingMatchesTheCaseFile(t *testing.T) {
	type want struct {
		Skips        []string `yaml:"skips"`
		OptIns       []string `yaml:"optIns"`
		Refused      []string `yaml:"refused"`
		Surface      string   `yaml:"surface"`
		SessionPerPr string   `yaml:"sessionPerPr"`
	}
	type gateCase struct {
		Note string `yaml:"note"`
		Body string `yaml:"body"`
		Want want   `yaml:"want"`
	}
	skippable := []string{"requirements", "approval", "tasks"}
	optIn := []string{"deep-review"}
	protected := []string{"implementation", "security-review"}
	for _, tc := range gateCases[gateCase](t, "selection.yaml") {
		t.Run(tc.Note, func(t *testing.T) {
			sel := parseSelection(tc.Body, skippable, optIn, protected)
			if !slices.Equal(sel.Skips, tc.Want.Skips) {
				t.Errorf("skips = %q, want %q", sel.Skips, tc.Want.Skips)
			}
			if !slices.Equal(sel.OptIns, tc.Want.OptIns) {
				t.Errorf("optIns = %q, want %q", sel.OptIns, tc.Want.OptIns)
			}
			if !slices.Equal(sel.Refused, tc.Want.Refused) {
				t.Errorf("refused = %q, want %q", sel.Refused, tc.Want.Refused)
			}
			wantSurface := tc.Want.Surface
			if wantSurface == "" {
				wantSurface = surfaceWorkItem
			}
			if got := parseSurface(tc.Body); got != wantSurface {
				t.Errorf("surface = %q, want %q", got, wantSurface)
			}
			wantMode := tc.Want.SessionPerPr
			if wantMode == "" {
				wantMode = sessionPerPRAlways
			}
			if got := parsePRSessions(tc.Body, sessionPerPRAlways); got != wantMode {
				t.Errorf("sessionPerPr = %q, want %q", got, wantMode)
			}
		})
	}
}

func TestSessionPerPRModeResolvesLegacyValuesAndFailsClosed(t *testing.T) {
	cases := []struct {
		in   any
		want string
	}{
		{nil, sessionPerPRCrossRepository},
		{"always", sessionPerPRAlways},
		{"never", sessionPerPRNever},
		{"cross-repository", sessionPerPRCrossRepository},
		{true, sessionPerPRCrossRepository},
		{false, sessionPerPRNever},
		{"sometimes", sessionPerPRCrossRepository},
		{3, sessionPerPRCrossRepository},
	}
	for _, tc := range cases {
		if got := sessionPerPRMode(tc.in); got != tc.want {
			t.Errorf("sessionPerPRMode(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestPySplitLinesSplitsWherePythonDoes(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a", []string{"a"}},
		{"a\n", []string{"a"}},
		{"\n", []string{""}},
		{"a\r\nb\rc\nd", []string{"a", "b", "c", "d"}},
		{"a\n\nb", []string{"a", "", "b"}},
		{"a\u2028b\x0bc", []string{"a", "b", "c"}},
	}
	for _, tc := range cases {
		if got := pySplitLines(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("pySplitLines(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDecidedNeedsANonEmptyRecord(t *testing.T) {
	cases := []struct {
		decisions map[string]any
		want      bool
	}{
		{nil, false},
		{map[string]any{}, false},
		{map[string]any{"phase-selection": nil}, false},
		{map[string]any{"phase-selection": map[string]any{}}, false},
		{map[string]any{"phase-selection": ""}, false},
		{map[string]any{"phase-selection": false}, false},
		{map[string]any{"phase-selection": map[string]any{"at": "2026-01-01"}}, true},
		{map[string]any{"phase-selection": true}, true},
		{map[string]any{"goal-definition": map[string]any{"at": "x"}}, false},
	}
	for _, tc := range cases {
		if got := gateDecided(tc.decisions, selectionDecision); got != tc.want {
			t.Errorf("decided(%v) = %v, want %v", tc.decisions, got, tc.want)
		}
	}
}

func TestPyExpandSpellsOutThePlaceholders(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`a{ws}b`, `a[` + pyWhitespaceClass + `]b`},
		{`{nws}+`, `[^` + pyWhitespaceClass + `]+`},
		{`[#{wsc}]`, `[#` + pyWhitespaceClass + `]`},
		{`{ws}{nws}{wsc}`, `[` + pyWhitespaceClass + `][^` + pyWhitespaceClass + `]` + pyWhitespaceClass},
		{`no placeholder`, `no placeholder`},
	} {
		if got := pyExpand(tc.in); got != tc.want {
			t.Errorf("pyExpand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if !checkLine.MatchString("-\u00a0[x]\u2028design") {
		t.Error("checkLine does not read Python's whitespace")
	}
}
