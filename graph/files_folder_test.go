package graph

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/the-loop/the-loop/repo"
)

// hostileSpecTree is a work item's folder holding what a change under
// review can put there: links in and out, a FIFO, a directory where a
// file is expected, a file where a directory is, and names that are not
// there at all.
func hostileSpecTree(t *testing.T) (root string) {
	t.Helper()
	root = t.TempDir()
	outside := t.TempDir()
	item := filepath.Join(root, "specs", "item")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(item, "design"), 0o755))
	must(os.MkdirAll(filepath.Join(item, "pr-loops", "pr-1"), 0o755))
	must(os.WriteFile(filepath.Join(item, "requirements.md"), []byte("---\nstatus: approved\n---\n# R\n"), 0o644))
	must(os.WriteFile(filepath.Join(item, "design", "a.md"), []byte("a"), 0o644))
	must(os.WriteFile(filepath.Join(root, "shared.md"), []byte("shared"), 0o644))
	must(os.WriteFile(filepath.Join(outside, "secret.md"), []byte("secret"), 0o644))
	must(os.Symlink("../../shared.md", filepath.Join(item, "design.md")))
	must(os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(item, "tasks.md")))
	must(os.Symlink(outside, filepath.Join(item, "pr-loops", "pr-2")))
	must(os.Symlink("design", filepath.Join(item, "linked-dir")))
	must(os.Symlink("nowhere.md", filepath.Join(item, "dangling.md")))
	must(syscall.Mkfifo(filepath.Join(item, "bugfix.md"), 0o644))
	must(os.WriteFile(filepath.Join(item, "not-a-dir"), []byte("x"), 0o644))
	return root
}

// TestAFolderListingAnswersExactlyAsLookingEachNameUp holds a read-only
// evaluation, which answers from one listing per directory, to what
// asking the checkout name by name says: the same kind, the same error,
// the same bytes, for every path a hook could ask after.
func TestAFolderListingAnswersExactlyAsLookingEachNameUp(t *testing.T) {
	root := hostileSpecTree(t)
	paths := []string{
		"specs/item/requirements.md", "specs/item/design.md", "specs/item/tasks.md",
		"specs/item/bugfix.md", "specs/item/dangling.md", "specs/item/missing.md",
		"specs/item/design", "specs/item/linked-dir", "specs/item/linked-dir/a.md",
		"specs/item/design/a.md", "specs/item/design/missing.md", "specs/item/pr-loops",
		"specs/item/pr-loops/pr-1", "specs/item/pr-loops/pr-2", "specs/item/pr-loops/pr-2/secret.md",
		"specs/item/not-a-dir", "specs/item/not-a-dir/x.md", "specs/missing/x.md",
		"specs/item/./requirements.md", "specs/item/design/../requirements.md",
		"specs/item/", "specs", "shared.md", "missing.md", ".", "", "../x.md", "/etc/passwd",
		"specs/item/" + strings.Repeat("n", 300) + ".md", // too long to be a name: refused as such
	}
	describe := func(f *Files, p string) string {
		kind, kerr := f.Kind(p)
		fi, serr := f.Stat(p)
		data, rerr := f.ReadFile(p)
		entries, lerr := f.ReadDir(p)
		isReg := serr == nil && fi.Mode().IsRegular()
		return fmt.Sprintf("kind=%v %v | stat regular=%v %v | read=%q %v | list=%v %v",
			kind, kerr, isReg, serr, data, rerr, entries, lerr)
	}
	co := checkoutOf(t, root)
	for _, p := range paths {
		// A fresh cache per path: a listing must not depend on what was
		// asked before it.
		got, want := describe(NewFiles(co), p), describe(DirectFiles(co), p)
		if got != want {
			t.Errorf("%q:\n listing: %s\n by name: %s", p, got, want)
		}
	}
	// And in one evaluation, asked in any order.
	cached := NewFiles(co)
	for i := len(paths) - 1; i >= 0; i-- {
		if got, want := describe(cached, paths[i]), describe(DirectFiles(co), paths[i]); got != want {
			t.Errorf("%q in one evaluation:\n listing: %s\n by name: %s", paths[i], got, want)
		}
	}
}

func TestKindFollowsLinksInsideAndRefusesThoseOut(t *testing.T) {
	co := checkoutOf(t, hostileSpecTree(t))
	for _, f := range []*Files{NewFiles(co), DirectFiles(co)} {
		for p, want := range map[string]repo.Kind{
			"specs/item/requirements.md": repo.KindRegular,
			"specs/item/design.md":       repo.KindRegular, // a link to a file inside
			"specs/item/linked-dir":      repo.KindDir,
			"specs/item/bugfix.md":       repo.KindOther, // a FIFO
		} {
			if got, err := f.Kind(p); err != nil || got != want {
				t.Errorf("Kind(%s) = %v, %v; want %v", p, got, err, want)
			}
		}
		if _, err := f.Kind("specs/item/tasks.md"); !errors.Is(err, repo.ErrOutside) {
			t.Errorf("a link out: %v, want ErrOutside", err)
		}
		if _, err := f.Kind("specs/item/missing.md"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a missing name: %v, want not-exist", err)
		}
	}
}

func TestAFolderOfTooManyNamesIsLookedUpNameByName(t *testing.T) {
	root := t.TempDir()
	for i := range 300 {
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("f%03d.md", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	co := checkoutOf(t, root)
	if co.Folder(".") != nil {
		t.Error("a directory of 300 names was kept as a listing")
	}
	if k, err := NewFiles(co).Kind("f299.md"); err != nil || k != repo.KindRegular {
		t.Errorf("Kind = %v, %v", k, err)
	}
}

// TestAnEvaluationChecksAnItemAsTheCheckoutDoes holds Files.Item, which
// takes a folder that lists for a directory inside, to Checkout.Item.
func TestAnEvaluationChecksAnItemAsTheCheckoutDoes(t *testing.T) {
	root := hostileSpecTree(t)
	outside := t.TempDir()
	specs := filepath.Join(root, "specs")
	if err := os.Symlink("item", filepath.Join(specs, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(specs, "escaped")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(specs, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	co, err := checkoutOf(t, root).WithSpecDir("specs")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"item", "linked", "escaped", "file", "missing", "..", "a/b", ""} {
		want := fmt.Sprint(co.Item(id))
		if got := fmt.Sprint(NewFiles(co).Item(id)); got != want {
			t.Errorf("Item(%q) = %s, want %s", id, got, want)
		}
	}
}

// TestAFolderThatListsButCannotBeSearchedIsAskedNameByName: read
// permission lists a directory, search permission looks a name up in it;
// where only the first is granted, a name is refused, not absent, and the
// state file of such a folder is not a fresh state.
func TestAFolderThatListsButCannotBeSearchedIsAskedNameByName(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root searches any directory; run as another user to see the refusal")
	}
	root := hostileSpecTree(t)
	item := filepath.Join(root, "specs", "item")
	if err := os.Chmod(item, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(item, 0o755) })
	co := checkoutOf(t, root)
	for _, p := range []string{"specs/item/requirements.md", "specs/item/missing.md", "specs/item/graph-state.json"} {
		_, gerr := NewFiles(co).Kind(p)
		_, werr := DirectFiles(co).Kind(p)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || gerr == nil {
			t.Errorf("%s: the listing says %v, asking says %v", p, gerr, werr)
		}
	}
	if _, err := LoadStateIn(NewFiles(co), "specs/item", "item"); err == nil {
		t.Error("the state of a folder that cannot be searched read as fresh")
	}
}

func TestANilReaderAnswersEveryQuestionWithNoCheckout(t *testing.T) {
	for _, f := range []*Files{nil, NewFiles(nil), DirectFiles(nil)} {
		if _, err := f.Kind("a.md"); !errors.Is(err, ErrNoCheckout) {
			t.Errorf("Kind: %v", err)
		}
		if _, err := f.Item("issue-1"); !errors.Is(err, ErrNoCheckout) {
			t.Errorf("Item: %v", err)
		}
	}
}

// TestARootThatListsButCannotBeSearchedIsAskedNameByName is the same
// refusal at the checkout's root, whose listing is asked for as ".".
func TestARootThatListsButCannotBeSearchedIsAskedNameByName(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root searches any directory; run as another user to see the refusal")
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	co := checkoutOf(t, root)
	if err := os.Chmod(root, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(root, 0o755) })
	for _, p := range []string{"a.md", "missing.md", StateFile} {
		_, gerr := NewFiles(co).Kind(p)
		_, werr := DirectFiles(co).Kind(p)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || gerr == nil {
			t.Errorf("%s: the listing says %v, asking says %v", p, gerr, werr)
		}
	}
	if _, err := LoadStateIn(NewFiles(co), ".", "item"); err == nil {
		t.Error("the state of a root that cannot be searched read as fresh")
	}
}

// TestAFolderTooDeepForItsNamesIsAskedNameByName: a folder whose path
// leaves less room than a name needs before the kernel's limit on a path
// lists, but a lookup of a name in it is refused as too long, whether the
// folder holds the name or not. Its state is not a fresh one.
func TestAFolderTooDeepForItsNamesIsAskedNameByName(t *testing.T) {
	root := t.TempDir()
	// 4,085 bytes of path: room for "/" and ten more bytes of name.
	var parts []string
	for n := len("specs"); n < 4085-251; n += 251 {
		parts = append(parts, strings.Repeat("d", 250))
	}
	rel := "specs/" + strings.Join(parts, "/")
	rel += "/" + strings.Repeat("p", 4085-len(rel)-1)
	// The absolute path is past the limit too: make it a step at a time.
	dir, err := os.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range strings.Split(rel, "/") {
		next, err := mkdirIn(dir, name)
		dir.Close()
		if err != nil {
			t.Fatal(err)
		}
		dir = next
	}
	// Present: a state file; absent: everything else.
	err = writeIn(dir, StateFile, "{}")
	dir.Close()
	if err != nil {
		t.Fatal(err)
	}
	co := checkoutOf(t, root)
	short := func(err error) string { return strings.ReplaceAll(fmt.Sprint(err), rel, "<folder>") }
	for _, name := range []string{StateFile, "missing.md", "x", "abcdefghij"} {
		p := rel + "/" + name
		_, gerr := NewFiles(co).Kind(p)
		_, werr := DirectFiles(co).Kind(p)
		if short(gerr) != short(werr) {
			t.Errorf("%s: the listing says %s, asking says %s", name, short(gerr), short(werr))
		}
	}
	_, listed := LoadStateIn(NewFiles(co), rel, "item")
	_, asked := LoadState(co, rel, "item")
	if listed == nil || short(listed) != short(asked) {
		t.Errorf("the state of a folder too deep read as %s; asking says %s", short(listed), short(asked))
	}
}

// mkdirIn makes the directory name in dir and opens it.
func mkdirIn(dir *os.File, name string) (*os.File, error) {
	fd := int(dir.Fd())
	if err := unix.Mkdirat(fd, name, 0o755); err != nil {
		return nil, err
	}
	nfd, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(nfd), name), nil
}

// writeIn writes the file name in dir.
func writeIn(dir *os.File, name, body string) error {
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	_, err = f.WriteString(body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
