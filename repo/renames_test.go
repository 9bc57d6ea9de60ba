package repo

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestRenamesAreWhatGitSeesMovedSinceACommit(t *testing.T) {
	isolateGit(t)
	big := func(s string) string { return strings.Repeat(s+" file, a line long enough to count\n", 20) } // past git's 400 bytes for -B
	dir := t.TempDir()
	run(t, dir, "init", "-q")
	// A configuration that would hide renames or copy them.
	run(t, dir, "config", "diff.renames", "false")
	run(t, dir, "config", "diff.renameLimit", "1")
	put(t, dir, map[string]string{
		"specs/a/x.md": big("a's"), "specs/b/x.md": big("b's"), "specs/c/x.md": big("c's"),
		"specs/d/x.md": big("d's"), "specs/e/x.md": big("e's"), "outside.txt": big("out"),
	})
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-q", "-m", "base")
	base := run(t, dir, "rev-parse", "HEAD")
	run(t, dir, "mv", "specs/a", "specs/a2") // moved whole
	run(t, dir, "mv", "specs/b", "specs/t")  // b and c swapped
	run(t, dir, "mv", "specs/c", "specs/b")
	run(t, dir, "mv", "specs/t", "specs/c")
	run(t, dir, "mv", "specs/d", "specs/d2")                                        // moved and edited
	put(t, dir, map[string]string{"specs/d2/x.md": big("d's") + "one more line\n"}) // ...
	run(t, dir, "rm", "-q", "-r", "specs/e")                                        // deleted
	run(t, dir, "mv", "outside.txt", "specs/f.txt")                                 // from outside
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-q", "-m", "change")
	c := openT(t, dir)
	ctx := context.Background()
	got, err := c.Renames(ctx, base, "specs")
	if err != nil {
		t.Fatal(err)
	}
	want := []Rename{{"specs/a/x.md", "specs/a2/x.md"}, {"specs/b/x.md", "specs/c/x.md"}, {"specs/c/x.md", "specs/b/x.md"}, {"specs/d/x.md", "specs/d2/x.md"}}
	slices.SortFunc(got, func(a, b Rename) int { return strings.Compare(a.From, b.From) })
	if !slices.Equal(got, want) {
		t.Errorf("Renames = %q, want %q", got, want)
	}
	if mb, err := c.MergeBase(ctx, base); err != nil || mb != base {
		t.Errorf("MergeBase = %q, %v; want %s", mb, err, base)
	}
	head := run(t, dir, "rev-parse", "HEAD")
	added, err := c.Added(ctx, base, head, "specs")
	if err != nil || !slices.Equal(added, []string{"specs/a2/x.md", "specs/d2/x.md", "specs/f.txt"}) {
		t.Errorf("Added = %q, %v", added, err)
	}
	r, err := c.Revision(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	if dirs, err := r.Dirs("specs"); err != nil || !slices.Equal(dirs, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("Dirs(specs) = %q, %v", dirs, err)
	}
	if dirs, err := r.Dirs("nowhere"); err != nil || len(dirs) != 0 {
		t.Errorf("Dirs(nowhere) = %q, %v; want none", dirs, err)
	}
	for _, bad := range []string{"main", "-p", ""} {
		if _, err := c.Renames(ctx, bad, "specs"); err == nil {
			t.Errorf("Renames(%q) took a name that is not a commit id", bad)
		}
	}
}
