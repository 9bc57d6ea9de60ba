package graph

import "testing"

func TestClosestSuggestsOnlyALikelyTypo(t *testing.T) {
	nodes := []string{"brainstorming", "design", "design-approval", "implementation", "review"}
	for _, c := range []struct{ name, want string }{
		{"brainstroming", "brainstorming"}, // a transposition
		{"desing", "design"},
		{"Design", "design"},
		{"design-aproval", "design-approval"},
		{"implementaion", "implementation"},
		{"impl", ""},
		{"nowhere-at-all", ""},
		{"x", ""},
		{"", ""},
	} {
		if got := Closest(c.name, nodes); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	if got := Closest("x-rul", []string{"x-rule", "x-rules"}); got != "x-rule" {
		t.Errorf("a tie goes to the nearer, then the earlier: got %q", got)
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"design", "design", 0},
		{"desing", "design", 1}, {"kitten", "sitting", 3}, {"ab", "ba", 1}, {"né", "ne", 1},
	} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
