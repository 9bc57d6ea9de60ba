package actionrun

import (
	"fmt"
	"strings"
	"testing"
)

func testEvaluator() *evaluator {
	ctx := map[string]any{
		"github": map[string]any{"base_ref": "", "action_ref": "v1.2.3",
			"event": map[string]any{"merge_group": map[string]any{"base_ref": "refs/heads/main"}}},
		"inputs": map[string]any{"working-directory": "sub", "all": "true"},
	}
	e := &evaluator{status: "success"}
	e.lookup = func(path []string) (value, error) {
		v, ok := ctx[path[0]]
		if !ok {
			return nil, fmt.Errorf("context %q is not one this emulator knows", path[0])
		}
		for _, k := range path[1:] {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		return v, nil
	}
	return e
}

func TestExpressionsEvaluateAsARunnerDoes(t *testing.T) {
	e := testEvaluator()
	for _, c := range []struct{ in, want string }{
		{"${{ github.base_ref || github.event.merge_group.base_ref }}", "refs/heads/main"},
		{"a/${{ inputs.working-directory }}/b", "a/sub/b"},
		{"${{ inputs.all == 'TRUE' }}", "true"},
		{"${{ startsWith(github.action_ref, 'v') && !contains(github.action_ref, '-') }}", "true"},
		{"${{ 'it''s' }}", "it's"},
		{"${{ github.event.missing.key }}", ""},
	} {
		got, err := e.expand(c.in)
		if err != nil || got != c.want {
			t.Errorf("%s: got %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestUnknownExpressionsFailLoudly(t *testing.T) {
	e := testEvaluator()
	for _, in := range []string{"${{ secrets.TOKEN }}", "${{ format('{0}', 'x') }}", "${{ github.base_ref ||", "${{ (inputs.all }}"} {
		if got, err := e.expand(in); err == nil {
			t.Errorf("%s: got %q, want an error", in, got)
		}
	}
}

func TestAnIfWithoutAStatusFunctionNeedsSuccess(t *testing.T) {
	e := testEvaluator()
	e.status = "failure"
	for _, c := range []struct {
		cond string
		want bool
	}{{"inputs.all == 'true'", false}, {"always()", true}, {"failure() && inputs.all == 'true'", true}, {"", false}} {
		got, err := e.condition(c.cond)
		if err != nil || got != c.want {
			t.Errorf("if %q after a failure: got %v, %v; want %v", c.cond, got, err, c.want)
		}
	}
	if msg := func() string { _, err := e.condition("${{ env.X }}"); return fmt.Sprint(err) }(); !strings.Contains(msg, `context "env"`) {
		t.Errorf("env context: %s", msg)
	}
}
