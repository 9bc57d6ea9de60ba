package starlark

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// surveyOne surveys src as the declared module.
func surveyOne(t *testing.T, src string) ModuleSurvey {
	t.Helper()
	root := writeTree(t, map[string]string{hooksFile: src})
	s := Survey([]Module{declared}, Options{Repo: root})
	if len(s) != 1 || s[0].File != hooksFile {
		t.Fatalf("Survey: %+v", s)
	}
	return s[0]
}

func findingTexts(s ModuleSurvey) []string {
	var out []string
	for _, f := range s.Findings {
		out = append(out, f.Error())
	}
	return out
}

// TestSurveyFindsAFieldCtxCannotHave: a name ctx, ctx.repo or a predeclared
// module lacks is found at its file:line:col with the nearest name, without
// running the rule.
func TestSurveyFindsAFieldCtxCannotHave(t *testing.T) {
	cases := []struct {
		name, src string
		want      string
	}{
		{"a ctx typo in the hook function",
			"def _check(ctx):\n    return ok() if ctx.chnaged else block()\nhook(\"x-a\", _check)\n",
			":2:24: ctx.chnaged: ctx has no field chnaged; did you mean changed?"},
		{"ctx under another name",
			"def _check(c):\n    if c.work_itme:\n        return ok()\n    return block()\nhook(\"x-a\", _check)\n",
			":2:10: c.work_itme: c has no field work_itme; did you mean work_item?"},
		{"a ctx typo in a lambda",
			"hook(\"x-a\", lambda ctx: ok(ctx.parms))\n",
			":1:32: ctx.parms: ctx has no field parms; did you mean params?"},
		{"a ctx.repo typo",
			"def _check(ctx):\n    return ok(ctx.repo.reed(\"a\"))\nhook(\"x-a\", _check)\n",
			":2:24: ctx.repo.reed: ctx.repo has no field reed; did you mean read?"},
		{"a name nothing is near",
			"def _check(ctx):\n    return ok(ctx.zzzzzzzz)\nhook(\"x-a\", _check)\n",
			":2:19: ctx.zzzzzzzz: ctx has no field zzzzzzzz; it has artifacts, boundary, changed"},
		{"re.IGNORECASE",
			"def _check(ctx):\n    return ok() if re.search(\"a\", \"A\", re.IGNORECASE) else block()\nhook(\"x-a\", _check)\n",
			":2:43: re.IGNORECASE: re has no field IGNORECASE; hint: Starlark's re (RE2) takes no flags: put them in the pattern, re.search(\"(?i)draft\", s)"},
		{"re.I",
			"P = re.compile(\"a\", re.I)\nhook(\"x-a\", lambda ctx: ok())\n",
			":1:24: re.I: re has no field I; hint:"},
		{"a function registered twice is reported once",
			"def _check(ctx):\n    return ok(ctx.chnaged)\nhook(\"x-a\", _check)\nhook(\"x-b\", _check)\n",
			":2:19: ctx.chnaged: ctx has no field chnaged; did you mean changed?"},
		{"a json typo",
			"X = json.encod\nhook(\"x-a\", lambda ctx: ok())\n",
			":1:10: json.encod: json has no field encod; did you mean encode?"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := findingTexts(surveyOne(t, c.src))
			if len(got) != 1 || !strings.Contains(got[0], hooksFile+c.want) {
				t.Errorf("findings %q, want one with %q", got, hooksFile+c.want)
			}
		})
	}
}

// TestSurveyIsSilentWhereItCannotBeSure: correct names, a reassigned or
// copied ctx, a helper handed ctx, a shadowed module, a nested function.
func TestSurveyIsSilentWhereItCannotBeSure(t *testing.T) {
	every := ""
	for _, a := range ctxAttrs {
		every += fmt.Sprintf("    _%s = ctx.%s\n", a, a)
	}
	for _, a := range repoAttrs {
		every += fmt.Sprintf("    _r%s = ctx.repo.%s\n", a, a)
	}
	cases := []struct{ name, src string }{
		{"every field ctx has", "def _check(ctx):\n" + every + "    return ok(re.search, json.encode, math.pi)\nhook(\"x-a\", _check)\n"},
		{"ctx reassigned", "def _check(ctx):\n    ctx = struct(chnaged = 1)\n    return ok(ctx.chnaged)\nhook(\"x-a\", _check)\n"},
		{"ctx reassigned by a for loop", "def _check(ctx):\n    for ctx in [struct(chnaged = 1)]:\n        pass\n    return ok(ctx.chnaged)\nhook(\"x-a\", _check)\n"},
		{"ctx copied", "def _check(ctx):\n    c = ctx\n    return ok(c.chnaged)\nhook(\"x-a\", _check)\n"},
		{"a helper handed ctx", "def _helper(c):\n    return c.chnaged\ndef _check(ctx):\n    return ok(_helper(ctx))\nhook(\"x-a\", _check)\n"},
		{"a function not registered", "def _other(ctx):\n    return ctx.chnaged\nhook(\"x-a\", lambda ctx: ok())\n"},
		{"a nested function", "def _check(ctx):\n    def inner():\n        return ctx.chnaged\n    return ok(inner())\nhook(\"x-a\", _check)\n"},
		{"a comprehension's own ctx", "def _check(ctx):\n    return ok([ctx.chnaged for ctx in [struct(chnaged = 1)]])\nhook(\"x-a\", _check)\n"},
		{"ctx with a default", "def _check(ctx = None):\n    return ok(ctx.chnaged)\nhook(\"x-a\", _check)\n"},
		{"a module that does not parse", "def _check(ctx)\n    return ctx.chnaged\nhook(\"x-a\", _check)\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := findingTexts(surveyOne(t, c.src)); len(got) > 0 {
				t.Errorf("findings %q, want none", got)
			}
		})
	}
}

// TestSurveyListsRegistrationsAndSaysWhenTheListIsComplete.
func TestSurveyListsRegistrationsAndSaysWhenTheListIsComplete(t *testing.T) {
	cases := []struct {
		name, src string
		hooks     []string
		complete  bool
	}{
		{"literal names at the top level", "hook(\"x-a\", lambda ctx: ok())\nhook(\"x-b\", lambda ctx: ok())\n", []string{"x-a", "x-b"}, true},
		{"a computed name", "N = \"x-a\"\nhook(N, lambda ctx: ok())\n", nil, false},
		{"a registration inside a function", "def reg():\n    hook(\"x-b\", lambda ctx: ok())\nhook(\"x-a\", lambda ctx: ok())\nreg()\n", []string{"x-a"}, false},
		{"hook under another name", "h = hook\nh(\"x-a\", lambda ctx: ok())\n", nil, false},
		{"a loaded file", "load(\"lib.star\", \"f\")\nhook(\"x-a\", f)\n", []string{"x-a"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := surveyOne(t, c.src)
			if !slices.Equal(s.Hooks, c.hooks) || s.Complete != c.complete {
				t.Errorf("hooks %q complete %v, want %q %v", s.Hooks, s.Complete, c.hooks, c.complete)
			}
		})
	}
}
