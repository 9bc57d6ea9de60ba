package starlark

import (
	"github.com/the-loop/the-loop/repo"

	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func TestGlobPatternsMatchSegmentBySegment(t *testing.T) {
	cases := []struct {
		pattern string
		yes, no []string
	}{
		{"src/*.go", []string{"src/a.go", "src/.go"}, []string{"src/sub/a.go", "a.go", "src/a.gox"}},
		{"src/**/*.go", []string{"src/a.go", "src/sub/a.go", "src/x/y/z.go"}, []string{"a.go", "srcx/a.go", "src/a.txt"}},
		{"**", []string{"a", "a/b", "a/b/c"}, nil},
		{"**/c.go", []string{"c.go", "a/c.go", "a/b/c.go"}, []string{"a/c.gox", "c.go/x"}},
		{"a/**", []string{"a/b", "a/b/c"}, []string{"b/a"}},
		{"a/**/**/b", []string{"a/b", "a/x/b", "a/x/y/b"}, []string{"a/x"}},
		{"docs/*/tasks.md", []string{"docs/i-1/tasks.md"}, []string{"docs/tasks.md", "docs/a/b/tasks.md"}},
		{"src/?.go", []string{"src/a.go"}, []string{"src/ab.go"}},
		{"src/[ab].go", []string{"src/a.go", "src/b.go"}, []string{"src/c.go"}},
		{`src/\*.go`, []string{"src/*.go"}, []string{"src/a.go"}},
		{"README.md", []string{"README.md"}, []string{"x/README.md", "README.mdx"}},
	}
	for _, c := range cases {
		p, err := parseGlob(c.pattern, "the repository")
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		for _, name := range c.yes {
			if !p.match(name) {
				t.Errorf("%q does not match %q", c.pattern, name)
			}
		}
		for _, name := range c.no {
			if p.match(name) {
				t.Errorf("%q matches %q", c.pattern, name)
			}
		}
	}
}

func TestGlobPatternsAreReadAsPathsAre(t *testing.T) {
	for pattern, want := range map[string]string{
		"./src//*.go": "src/*.go", "src/./*.go": "src/*.go", "src/../src/*.go": "src/*.go", "src/": "src",
	} {
		p, err := parseGlob(pattern, "the repository")
		if err != nil || strings.Join(p.segs, "/") != want {
			t.Errorf("parseGlob(%q) = %v, %v; want it read as %q", pattern, p, err, want)
		}
	}
}

func TestGlobPatternsAreCheckedBeforeAnyWalk(t *testing.T) {
	cases := map[string]string{
		"":                             "an empty pattern",
		"/etc/*":                       "is absolute",
		"../x":                         "leaves the repository",
		"a/../../x":                    "leaves the repository",
		".":                            `names the repository itself; a pattern matches files (try "**")`,
		"src/..":                       "names the repository itself",
		"src/[.go":                     `syntax error in pattern (an unclosed [ or a \ at the end of a segment?)`,
		`src/\`:                        "syntax error in pattern",
		strings.Repeat("a/", 63) + "b": "more than 63 segments",
	}
	for pattern, want := range cases {
		_, err := parseGlob(pattern, "the repository")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseGlob(%q) = %v, want %q", pattern, err, want)
		}
	}
}

// globTree is a repository for the walker's tests.
func globTree(t *testing.T) (*tree, string) {
	t.Helper()
	root := writeTree(t, map[string]string{
		"src/a.go":            "",
		"src/b.go":            "",
		"src/sub/c.go":        "",
		"src/sub/deep/d.go":   "",
		"src/.git/e.go":       "",
		"docs/i-1/tasks.md":   "",
		"docs/i-1/x/tasks.md": "",
		"top.go":              "",
	})
	if err := os.Symlink("src", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.go", filepath.Join(root, "src", "alias.go")); err != nil {
		t.Fatal(err)
	}
	c, err := openTree(root, "the repository")
	if err != nil {
		t.Fatal(err)
	}
	return c, root
}

func TestGlobListsRegularFilesSortedWithoutFollowingLinks(t *testing.T) {
	c, _ := globTree(t)
	cases := map[string][]string{
		"**/*.go":         {"src/a.go", "src/b.go", "src/sub/c.go", "src/sub/deep/d.go", "top.go"},
		"src/*.go":        {"src/a.go", "src/b.go"},
		"link/*.go":       {},
		"src/.git/*.go":   {"src/.git/e.go"}, // named outright, .git is walked
		"docs/*/tasks.md": {"docs/i-1/tasks.md"},
		"nothing/**":      {},
		"top.go":          {"top.go"},
		"top.go/**":       {},
	}
	for pattern, want := range cases {
		got, _, err := c.glob(pattern, globWalk{budget: 1 << 20})
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("glob(%q) = %q, %v; want %q", pattern, got, err, want)
		}
	}
}

func TestGlobEntersOnlyDirectoriesThatCanMatch(t *testing.T) {
	c, _ := globTree(t)
	_, all, err := c.glob("**", globWalk{budget: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	_, some, err := c.glob("docs/*/tasks.md", globWalk{budget: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	// docs, then i-1 (tasks.md and x): x is listed but never entered.
	if some != 3 || some >= all {
		t.Errorf("docs/*/tasks.md visited %d entries (the whole tree has %d); want 3", some, all)
	}
}

func TestGlobStopsPastItsBudget(t *testing.T) {
	c, _ := globTree(t)
	_, seen, err := c.glob("**", globWalk{budget: 2})
	if !errors.Is(err, errGlobStopped) || seen <= 2 {
		t.Errorf("glob with a budget of 2 = %d entries, %v; want errGlobStopped past 2", seen, err)
	}
}

func TestGlobStopsWhenItsCallIsStopped(t *testing.T) {
	c, _ := globTree(t)
	_, _, err := c.glob("**", globWalk{budget: 1 << 20, stopped: func() bool { return true }})
	if !errors.Is(err, errGlobStopped) {
		t.Errorf("glob of a stopped call = %v, want errGlobStopped", err)
	}
}

func TestGlobHandsOverEveryMatchAsFound(t *testing.T) {
	files := map[string]string{}
	var want []string
	for i := range 300 {
		rel := fmt.Sprintf("src/d%02d/f%03d.go", i%30, i)
		files[rel] = ""
		want = append(want, rel)
	}
	root := writeTree(t, files)
	c, err := openTree(root, "the repository")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var found []string
	got, _, err := c.glob("src/**/*.go", globWalk{budget: 1 << 20, found: func(rels []string) {
		mu.Lock()
		defer mu.Unlock()
		found = append(found, rels...)
	}})
	slices.Sort(want)
	slices.Sort(found)
	if err != nil || !slices.Equal(got, want) || !slices.Equal(found, want) {
		t.Errorf("glob listed %d and handed over %d of %d files (%v)", len(got), len(found), len(want), err)
	}
}

// failListing makes listing the directory whose path ends in suffix fail
// with errno, for the rest of the test.
func failListing(t *testing.T, suffix string, errno syscall.Errno) {
	list := listDirectory
	listDirectory = func(co *repo.Checkout, rel string, visit func(string, repo.Kind)) (int, error) {
		if strings.HasSuffix(co.Abs(rel), suffix) {
			return 0, &os.PathError{Op: "open", Path: rel, Err: errno}
		}
		return list(co, rel, visit)
	}
	t.Cleanup(func() { listDirectory = list })
}

func TestGlobFailsWhenADirectoryCannotBeListed(t *testing.T) {
	c, _ := globTree(t)
	failListing(t, "/src/sub", syscall.EACCES)
	for _, pattern := range []string{"src/**/*.go", "src/sub/*.go", "**"} {
		_, _, err := c.glob(pattern, globWalk{budget: 1 << 20})
		if err == nil || err.Error() != "cannot list src/sub: permission denied" {
			t.Errorf("glob(%q) over an unlistable src/sub = %v; want it to fail naming src/sub", pattern, err)
		}
	}
	// A pattern that never needs the directory does not care.
	if got, _, err := c.glob("src/*.go", globWalk{budget: 1 << 20}); err != nil || len(got) != 2 {
		t.Errorf("glob(src/*.go) = %q, %v", got, err)
	}
}

func TestGlobSkipsADirectoryRemovedDuringTheWalk(t *testing.T) {
	c, _ := globTree(t)
	failListing(t, "/src/sub", syscall.ENOENT)
	got, _, err := c.glob("src/**/*.go", globWalk{budget: 1 << 20})
	if err != nil || !slices.Equal(got, []string{"src/a.go", "src/b.go"}) {
		t.Errorf("glob with src/sub gone = %q, %v; want the rest", got, err)
	}
}

func TestGlobFailsOnADirectoryItMayNotRead(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("permissions do not stop root; TestGlobFailsWhenADirectoryCannotBeListed covers the path")
	}
	c, root := globTree(t)
	sub := filepath.Join(root, "src", "sub")
	if err := os.Chmod(sub, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(sub, 0o755) })
	if _, _, err := c.glob("src/**/*.go", globWalk{budget: 1 << 20}); err == nil || !strings.Contains(err.Error(), "cannot list src/sub") {
		t.Errorf("an unreadable subdirectory: %v; want the glob to fail naming it", err)
	}
}

// matchReference is the obvious recursive definition of a pattern match,
// for FuzzGlobMatch to hold the segment automaton to.
func matchReference(pat, name []string) bool {
	if len(pat) == 0 {
		return len(name) == 0
	}
	if pat[0] == "**" {
		return matchReference(pat[1:], name) || (len(name) > 0 && matchReference(pat, name[1:]))
	}
	if len(name) == 0 {
		return false
	}
	ok, _ := path.Match(pat[0], name[0])
	return ok && matchReference(pat[1:], name[1:])
}

func FuzzGlobMatch(f *testing.F) {
	f.Add("src/**/*.go", "src/a/b.go")
	f.Add("**/**/x", "x")
	f.Add("a/*/c", "a/b/c")
	f.Add("**", "a/b")
	// Segments matched without path.Match: a name, "*.ext", "prefix*".
	f.Add("src/*.go", "src/.go")
	f.Add("docs/spec*/tasks.md", "docs/spec-1/tasks.md")
	f.Add("*", "a")
	f.Add("a\\*b/*", "a*b/c")
	f.Fuzz(func(t *testing.T, pattern, name string) {
		p, err := parseGlob(pattern, "the repository")
		if err != nil || name == "" || len(name) > 200 || strings.Count(pattern, "/") > 12 {
			return
		}
		if got, want := p.match(name), matchReference(p.segs, strings.Split(name, "/")); got != want {
			t.Errorf("%q against %q: automaton says %v, reference %v", pattern, name, got, want)
		}
	})
}
