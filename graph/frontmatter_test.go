package graph

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestFrontMatterLinesLocateTheBlockAndItsKeys(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want FrontMatterLines
	}{
		{"no front matter", "# D\nstatus: x\n", FrontMatterLines{}},
		{"keys on their lines", "---\ntitle: x\n\n# a comment\nstatus: draft\n---\n# D\n",
			FrontMatterLines{Open: 1, Close: 6, Keys: map[string]int{"title": 2, "status": 5}}},
		{"CRLF line endings", "---\r\ntitle: x\r\nstatus: draft\r\n---\r\n# D\r\n",
			FrontMatterLines{Open: 1, Close: 4, Keys: map[string]int{"title": 2, "status": 3}}},
		{"a key after a multi-line value", "---\nnotes: |\n  one\n  two\nstatus: draft\n---\n",
			FrontMatterLines{Open: 1, Close: 6, Keys: map[string]int{"notes": 2, "status": 5}}},
		{"a repeated key is where the value read is", "---\nstatus: draft\nstatus: approved\n---\n",
			FrontMatterLines{Open: 1, Close: 4, Keys: map[string]int{"status": 3}}},
		{"a merged key is on the merge's line", "---\nbase: &b {status: approved, owner: a}\nowner: b\n<<: *b\n---\n",
			FrontMatterLines{Open: 1, Close: 5, Keys: map[string]int{"base": 2, "owner": 3, "status": 4}}},
		{"a key is named as the map names it", "---\nyes: 1\n2: 2\n---\n",
			FrontMatterLines{Open: 1, Close: 4, Keys: map[string]int{"True": 2, "2": 3}}},
		{"a list still ends the header", "---\n- a\n---\nbody", FrontMatterLines{Open: 1, Close: 3}},
		{"an empty block", "---\n---\nbody", FrontMatterLines{Open: 1, Close: 2}},
		{"a line break only YAML counts leaves the keys unknown", "---\nnote: \"a\u2028b\"\nstatus: x\n---\n", FrontMatterLines{Open: 1, Close: 4}},
		{"a lone carriage return leaves the keys unknown", "---\nnote: a\rstatus: x\n---\n", FrontMatterLines{Open: 1, Close: 3}},
		{"unterminated", "---\nstatus: approved\n", FrontMatterLines{}},
		{"invalid YAML", "---\nstatus: [\n---\n# D\n", FrontMatterLines{}},
		{"too large", "---\nstatus: x\nlong: " + strings.Repeat("x", maxFrontMatterBytes) + "\n---\n", FrontMatterLines{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			front, body, got := SplitFrontMatterLines(tc.text)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if wantFront, wantBody := SplitFrontMatter(tc.text); !reflect.DeepEqual(front, wantFront) || body != wantBody {
				t.Errorf("front matter and body differ from SplitFrontMatter's")
			}
			if got.Keys != nil && !slices.Equal(slices.Sorted(maps.Keys(got.Keys)), slices.Sorted(maps.Keys(front))) {
				t.Errorf("keys with lines %v, keys in the map %v", got.Keys, front)
			}
		})
	}
}

func TestABodyLineIsOffsetByTheFrontMatter(t *testing.T) {
	text := "---\nstatus: x\n---\nfirst\nsecond\n"
	_, body, lines := SplitFrontMatterLines(text)
	doc := strings.Split(text, "\n")
	for i, line := range strings.Split(body, "\n") {
		if n := lines.Body(i + 1); doc[n-1] != line {
			t.Errorf("body line %d is document line %d %q, want %q", i+1, n, doc[n-1], line)
		}
	}
	if n := (FrontMatterLines{}).Body(3); n != 3 {
		t.Errorf("without front matter, body line 3 is line %d", n)
	}
}

func TestAMissingKeyPointsAtTheOpeningLineOrNowhere(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"---\ntitle: x\nstatus: draft\n---\n", 3},
		{"---\ntitle: x\n---\n", 1},
		{"---\nnote: \"a\u2028b\"\nstatus: x\n---\n", 1},
		{"---\n- a\n---\n", 1},
		{"---\nstatus: [\n---\n", 0},
		{"# D\n", 0},
	} {
		_, _, lines := SplitFrontMatterLines(tc.text)
		if got := lines.Key("status"); got != tc.want {
			t.Errorf("%q: status at line %d, want %d", tc.text, got, tc.want)
		}
	}
}

func TestFilesReadFrontMatterLinesOnceWithTheValues(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("---\r\ntitle: x\r\nstatus: draft\r\n---\r\n# D\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, files := range []*Files{NewFiles(checkoutOf(t, dir)), DirectFiles(checkoutOf(t, dir))} {
		front, body, lines, err := files.FrontMatterLines("a.md")
		if err != nil {
			t.Fatal(err)
		}
		want := FrontMatterLines{Open: 1, Close: 4, Keys: map[string]int{"title": 2, "status": 3}}
		if front["status"] != "draft" || body != "# D\n" || !reflect.DeepEqual(lines, want) {
			t.Errorf("got %v %q %+v", front, body, lines)
		}
		if f2, b2, err := files.FrontMatter("a.md"); err != nil || !reflect.DeepEqual(f2, front) || b2 != body {
			t.Errorf("FrontMatter disagrees: %v %q %v", f2, b2, err)
		}
	}
	if _, _, lines, err := (*Files)(nil).FrontMatterLines("a.md"); err == nil || !reflect.DeepEqual(lines, FrontMatterLines{}) {
		t.Errorf("a nil Files: %+v %v", lines, err)
	}
}
