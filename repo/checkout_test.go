package repo

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"
)

// secret is what every file outside the checkout holds; no read may ever
// return it.
const secret = "outside the checkout"

// attackTree builds a checkout holding what a change under review could
// commit, beside a directory it must never reach, and returns both
// checkouts: the fast path and, where it differs, the portable one.
func attackTree(t testing.TB) (map[string]*Checkout, string) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	out := filepath.Join(base, "elsewhere")
	for _, d := range []string{root, out, filepath.Join(root, "docs", "specs", "issue-1"), filepath.Join(root, "src")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(out, "secret.md"), secret)
	write(t, filepath.Join(root, "docs", "specs", "issue-1", "design.md"), "# design\n")
	write(t, filepath.Join(root, "src", "a.go"), "package a\n")
	link(t, filepath.Join(out, "secret.md"), filepath.Join(root, "abs-out.md"))
	link(t, "../elsewhere/secret.md", filepath.Join(root, "rel-out.md"))
	link(t, "../../../../elsewhere", filepath.Join(root, "docs", "specs", "issue-1", "dir-out"))
	link(t, "src/a.go", filepath.Join(root, "inside.go"))
	link(t, "/dev/zero", filepath.Join(root, "zero"))
	link(t, "nowhere", filepath.Join(root, "dangling"))
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(root, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(3 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ways := map[string]*Checkout{"fast": c}
	if c.fast != nil {
		portable := *c
		portable.fast = nil
		ways = map[string]*Checkout{"openat2": c, "os.Root": &portable}
	}
	return ways, out
}

func write(t testing.TB, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func link(t testing.TB, target, at string) {
	t.Helper()
	if err := os.Symlink(target, at); err != nil {
		t.Fatal(err)
	}
}

func TestReadFileRefusesWhatTheCheckoutCannotHoldAndReadsTheRest(t *testing.T) {
	ways, _ := attackTree(t)
	for way, c := range ways {
		for _, tc := range []struct {
			rel  string
			want string // contents, or "" when an error is wanted
			err  error  // errors.Is target
		}{
			{rel: "docs/specs/issue-1/design.md", want: "# design\n"},
			{rel: "./src//a.go", want: "package a\n"},
			{rel: "inside.go", want: "package a\n"},
			{rel: "abs-out.md", err: ErrOutside},
			{rel: "rel-out.md", err: ErrOutside},
			{rel: "docs/specs/issue-1/dir-out/secret.md", err: ErrOutside},
			{rel: "../elsewhere/secret.md", err: ErrOutside},
			{rel: "/etc/passwd", err: ErrOutside},
			{rel: "zero", err: ErrOutside},
			{rel: "fifo", err: ErrNotRegular},
			{rel: "src", err: ErrNotRegular},
			{rel: ".", err: ErrNotRegular},
			{rel: "dangling", err: fs.ErrNotExist},
			{rel: "missing.md", err: fs.ErrNotExist},
			{rel: "src/a.go/x", err: ErrNotDir},
		} {
			t.Run(way+"/"+tc.rel, func(t *testing.T) {
				data, err := c.ReadFile(tc.rel, 1<<20)
				if tc.err == nil {
					if err != nil || string(data) != tc.want {
						t.Fatalf("ReadFile = %q, %v; want %q", data, err, tc.want)
					}
					return
				}
				if !errors.Is(err, tc.err) {
					t.Fatalf("ReadFile = %q, %v; want an error wrapping %v", data, err, tc.err)
				}
				if bytes.Contains(data, []byte(secret)) || strings.Contains(err.Error(), filepath.Dir(c.Root())) {
					t.Fatalf("the refusal leaks the outside: %q, %v", data, err)
				}
			})
		}
	}
}

func TestReadFileRefusesAFileOverItsLimitBeforeReadingIt(t *testing.T) {
	ways, _ := attackTree(t)
	for way, c := range ways {
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := c.ReadFile("sparse", 64<<20)
		var tl *TooLargeError
		if !errors.As(err, &tl) || tl.Size != 3<<30 || tl.Limit != 64<<20 {
			t.Fatalf("%s: ReadFile(sparse) = %v; want a TooLargeError of 3 GiB against 64 MiB", way, err)
		}
		if !strings.Contains(err.Error(), "sparse") {
			t.Errorf("%s: %v does not name the file", way, err)
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
			t.Errorf("%s: refusing allocated %d bytes", way, grew)
		}
	}
}

func TestStatFollowsLinksInsideAndRefusesThoseOut(t *testing.T) {
	ways, _ := attackTree(t)
	for way, c := range ways {
		fi, err := c.Stat("inside.go")
		if err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len("package a\n")) {
			t.Errorf("%s: Stat(inside.go) = %v, %v; want the regular file it links to", way, fi, err)
		}
		if fi, err := c.Lstat("inside.go"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s: Lstat(inside.go) = %v, %v; want the link itself", way, fi, err)
		}
		if fi, err := c.Lstat("abs-out.md"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s: Lstat(abs-out.md) = %v, %v; want the link itself, described without following it", way, fi, err)
		}
		for _, rel := range []string{"abs-out.md", "rel-out.md", "docs/specs/issue-1/dir-out"} {
			if _, err := c.Stat(rel); !errors.Is(err, ErrOutside) {
				t.Errorf("%s: Stat(%s) = %v; want ErrOutside", way, rel, err)
			}
			if ok, err := c.Exists(rel); ok || !errors.Is(err, ErrOutside) {
				t.Errorf("%s: Exists(%s) = %v, %v; want an error, not an answer about the outside", way, rel, ok, err)
			}
		}
		if fi, err := c.Stat("fifo"); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
			t.Errorf("%s: Stat(fifo) = %v, %v; want a named pipe", way, fi, err)
		}
		if ok, err := c.Exists("dangling"); ok || err != nil {
			t.Errorf("%s: Exists(dangling) = %v, %v; want false", way, ok, err)
		}
		if !c.IsDir("src") || c.IsRegular("src") || !c.IsRegular("src/a.go") || c.IsRegular("fifo") {
			t.Errorf("%s: IsDir/IsRegular disagree with the tree", way)
		}
	}
}

func TestListDirNeverEntersALink(t *testing.T) {
	ways, _ := attackTree(t)
	for way, c := range ways {
		got := map[string]Kind{}
		n, err := c.ListDir(".", func(name string, k Kind) { got[strings.Clone(name)] = k })
		if err != nil || n != len(got) {
			t.Fatalf("%s: ListDir(.) = %d, %v", way, n, err)
		}
		want := map[string]Kind{"docs": KindDir, "src": KindDir, "abs-out.md": KindOther, "rel-out.md": KindOther,
			"inside.go": KindOther, "zero": KindOther, "dangling": KindOther, "fifo": KindOther, "sparse": KindRegular}
		for name, k := range want {
			if got[name] != k {
				t.Errorf("%s: %s listed as %v, want %v", way, name, got[name], k)
			}
		}
		if _, err := c.ListDir("docs/specs/issue-1/dir-out", func(string, Kind) {}); !errors.Is(err, ErrOutside) {
			t.Errorf("%s: listing a directory through a link out = %v; want ErrOutside", way, err)
		}
		// Through a link that stays inside, the same listing on every path.
		link(t, "src", c.Abs("src-link"))
		if n, err := c.ListDir("src-link", func(string, Kind) {}); err != nil || n != 1 {
			t.Errorf("%s: listing through a link inside = %d, %v; want src's one entry", way, n, err)
		}
		os.Remove(c.Abs("src-link"))
	}
}

func TestWriteFileReplacesALinkAndNeverWritesThroughIt(t *testing.T) {
	ways, out := attackTree(t)
	for way, c := range ways {
		if err := c.WriteFile("rel-out.md", []byte("mine"), 0o644); err != nil {
			t.Fatalf("%s: %v", way, err)
		}
		if data, _ := os.ReadFile(filepath.Join(out, "secret.md")); string(data) != secret {
			t.Fatalf("%s: the write went through the link: outside now holds %q", way, data)
		}
		if fi, err := os.Lstat(c.Abs("rel-out.md")); err != nil || !fi.Mode().IsRegular() {
			t.Fatalf("%s: rel-out.md is %v, %v; want a regular file in place of the link", way, fi, err)
		}
		if err := c.WriteFile("docs/specs/issue-1/dir-out/new.md", []byte("x"), 0o644); !errors.Is(err, ErrOutside) {
			t.Errorf("%s: a write through a linked directory = %v; want ErrOutside", way, err)
		}
		if _, err := os.Stat(filepath.Join(out, "new.md")); err == nil {
			t.Fatalf("%s: a file was created outside the checkout", way)
		}
		os.Remove(c.Abs("rel-out.md"))
		link(t, "../elsewhere/secret.md", c.Abs("rel-out.md"))
	}
}

func TestAppendFileAddsToTheFileItselfAndNeverThroughALink(t *testing.T) {
	ways, out := attackTree(t)
	for way, c := range ways {
		for _, line := range []string{"one\n", "two\n"} {
			if err := c.AppendFile("log/inbox.jsonl", []byte(line), 0o600); err != nil {
				t.Fatalf("%s: %v", way, err)
			}
		}
		if data, _ := os.ReadFile(c.Abs("log/inbox.jsonl")); string(data) != "one\ntwo\n" {
			t.Errorf("%s: appended file holds %q", way, data)
		}
		if fi, _ := os.Stat(c.Abs("log/inbox.jsonl")); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: created with mode %v, want 0600", way, fi.Mode().Perm())
		}
		for _, tc := range []struct {
			rel  string
			want []error // any of them; nil for any error
		}{
			// os.Root sees a link out as leading outside before it is a link
			{"rel-out.md", []error{ErrLink, ErrOutside}},
			{"inside.go", []error{ErrLink}},
			{"dangling", []error{ErrLink}},
			{"docs/specs/issue-1/dir-out/new.md", []error{ErrOutside}},
			{"src", nil},
			{"fifo", nil},
		} {
			err := c.AppendFile(tc.rel, []byte("x"), 0o600)
			if err == nil || (tc.want != nil && !slices.ContainsFunc(tc.want, func(e error) bool { return errors.Is(err, e) })) {
				t.Errorf("%s: AppendFile(%s) = %v; want one of %v", way, tc.rel, err, tc.want)
			}
		}
		if data, _ := os.ReadFile(filepath.Join(out, "secret.md")); string(data) != secret {
			t.Fatalf("%s: the append went through the link: outside now holds %q", way, data)
		}
		if _, err := os.Lstat(filepath.Join(out, "nowhere")); err == nil {
			t.Fatalf("%s: the append created a file through a dangling link", way)
		}
		os.RemoveAll(c.Abs("log"))
	}
}

func TestMkdirCreatesOnceAndNeverThroughALink(t *testing.T) {
	ways, out := attackTree(t)
	for way, c := range ways {
		if err := c.Mkdir("docs/specs/issue-2"); err != nil {
			t.Fatalf("%s: %v", way, err)
		}
		if !c.IsDir("docs/specs/issue-2") {
			t.Fatalf("%s: Mkdir made no directory", way)
		}
		for _, taken := range []string{"docs/specs/issue-2", "docs/specs/issue-1/design.md", "dangling", "rel-out.md"} {
			if err := c.Mkdir(taken); !errors.Is(err, fs.ErrExist) {
				t.Errorf("%s: Mkdir(%s) over what is there = %v; want fs.ErrExist", way, taken, err)
			}
		}
		if err := c.Mkdir("docs/specs/issue-1/dir-out/new"); !errors.Is(err, ErrOutside) {
			t.Errorf("%s: Mkdir through a linked directory = %v; want ErrOutside", way, err)
		}
		if _, err := os.Stat(filepath.Join(out, "new")); err == nil {
			t.Fatalf("%s: a directory was created outside the checkout", way)
		}
		os.Remove(c.Abs("docs/specs/issue-2"))
	}
}

func TestALockFileLinkedOutsideIsRefusedAndCreatesNothing(t *testing.T) {
	ways, out := attackTree(t)
	for way, c := range ways {
		link(t, filepath.Join(out, "created-by-lock"), c.Abs("docs/specs/issue-1/graph-state.lock"))
		l, err := c.Locker("docs/specs/issue-1/graph-state.lock")
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := l.TryLock(); ok || !(errors.Is(err, ErrLink) || errors.Is(err, ErrOutside)) || !strings.Contains(err.Error(), "graph-state.lock") {
			t.Errorf("%s: TryLock through a link = %v, %v; want it refused, naming the file", way, ok, err)
		}
		// A link that stays inside is refused too: a lock is the file itself.
		link(t, "design.md", c.Abs("docs/specs/issue-1/inside.lock"))
		l, _ = c.Locker("docs/specs/issue-1/inside.lock")
		if ok, err := l.TryLock(); ok || !errors.Is(err, ErrLink) {
			t.Errorf("%s: TryLock of a link inside = %v, %v; want ErrLink", way, ok, err)
		}
		os.Remove(c.Abs("docs/specs/issue-1/inside.lock"))
		if _, err := os.Lstat(filepath.Join(out, "created-by-lock")); err == nil {
			t.Fatalf("%s: the lock created a file outside the checkout", way)
		}
		if _, err := c.Locker("docs/specs/issue-1/dir-out/graph-state.lock"); !errors.Is(err, ErrOutside) {
			t.Errorf("%s: a lock in a linked directory = %v; want ErrOutside", way, err)
		}
		os.Remove(c.Abs("docs/specs/issue-1/graph-state.lock"))
	}
}

func TestALockIsExclusiveAcrossLockersAndAgainstPathLocks(t *testing.T) {
	ways, _ := attackTree(t)
	for way, c := range ways {
		a, _ := c.Locker("docs/specs/issue-1/graph-state.lock")
		b, _ := c.Locker("docs/specs/issue-1/graph-state.lock")
		if ok, err := a.TryLock(); !ok || err != nil {
			t.Fatalf("%s: first TryLock = %v, %v", way, ok, err)
		}
		if ok, _ := b.TryLock(); ok {
			t.Fatalf("%s: a second locker took a held lock", way)
		}
		// Another process locking by path, as gofrs/flock does, is held off.
		if ok, _ := flock.New(c.Abs("docs/specs/issue-1/graph-state.lock")).TryLock(); ok {
			t.Fatalf("%s: a path lock took a held lock", way)
		}
		a.Unlock()
		if ok, err := b.TryLock(); !ok || err != nil {
			t.Fatalf("%s: TryLock after Unlock = %v, %v", way, ok, err)
		}
		b.Unlock()
	}
}

func TestCleanTempsRemovesOnlyAKilledWritersFiles(t *testing.T) {
	ways, _ := attackTree(t)
	for way, c := range ways {
		dir := "docs/specs/issue-1"
		write(t, c.Abs(dir+"/.graph-state.json.123456.tmp"), "{")
		write(t, c.Abs(dir+"/notes.tmp"), "keep")
		write(t, c.Abs(dir+"/.hidden.tmp"), "keep")
		write(t, c.Abs(dir+"/.design.md.42.tmp"), "#")
		removed, err := c.CleanTemps(dir, func(target string, age time.Duration) bool { return target == "graph-state.json" })
		if err != nil || len(removed) != 1 || removed[0] != ".graph-state.json.123456.tmp" {
			t.Fatalf("%s: CleanTemps = %v, %v", way, removed, err)
		}
		os.Remove(c.Abs(dir + "/.design.md.42.tmp"))
		for _, keep := range []string{"notes.tmp", ".hidden.tmp", "design.md"} {
			if !c.IsRegular(dir + "/" + keep) {
				t.Errorf("%s: %s was removed", way, keep)
			}
		}
		if err := c.WriteFile(dir+"/graph-state.json", []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		if removed, _ := c.CleanTemps(dir, func(string, time.Duration) bool { return true }); len(removed) != 0 {
			t.Errorf("%s: a completed write left %v behind", way, removed)
		}
	}
}

func TestItemIsCheckedOnce(t *testing.T) {
	ways, _ := attackTree(t)
	for way, c := range ways {
		c, err := c.WithSpecDir("docs/specs")
		if err != nil {
			t.Fatal(err)
		}
		link(t, "../../../elsewhere", c.Abs("docs/specs/linked-out"))
		write(t, c.Abs("docs/specs/a-file"), "x")
		if it, err := c.Item("issue-1"); err != nil || it.Dir != "docs/specs/issue-1" {
			t.Errorf("%s: Item(issue-1) = %+v, %v", way, it, err)
		}
		for id, want := range map[string]string{
			"../x":       "want the name of a folder",
			"..":         "want the name of a folder",
			"":           "want the name of a folder",
			"issue-404":  "no spec folder at docs/specs/issue-404",
			"linked-out": "leads outside the checkout",
			"a-file":     "not a directory",
		} {
			_, err := c.Item(id)
			var ie *ItemError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: Item(%q) = %v; want an ItemError saying %q", way, id, err, want)
			}
		}
		link(t, "issue-1", c.Abs("docs/specs/linked-in"))
		items, err := c.Items()
		if err != nil || strings.Join(items, ",") != "issue-1,linked-in" {
			t.Errorf("%s: Items = %v, %v; want issue-1 and the link to it inside (no file, no link out)", way, items, err)
		}
		os.Remove(c.Abs("docs/specs/linked-in"))
		os.Remove(c.Abs("docs/specs/linked-out"))
		os.Remove(c.Abs("docs/specs/a-file"))
	}
}

func TestASpecDirThroughALinkOutIsRefused(t *testing.T) {
	ways, _ := attackTree(t)
	for way, c := range ways {
		if _, err := c.WithSpecDir("docs/specs/issue-1/dir-out"); !errors.Is(err, ErrOutside) {
			t.Errorf("%s: WithSpecDir through a link out = %v; want ErrOutside", way, err)
		}
		if _, err := c.WithSpecDir("../x"); !errors.Is(err, ErrOutside) {
			t.Errorf("%s: WithSpecDir(../x) = %v; want ErrOutside", way, err)
		}
		if c2, err := c.WithSpecDir("not/yet"); err != nil || c2.SpecDir() != "not/yet" {
			t.Errorf("%s: a spec dir that does not exist yet = %v", way, err)
		}
	}
}

func TestFindWalksUpToTheNearestMarker(t *testing.T) {
	base := t.TempDir()
	repo := filepath.Join(base, "repo")
	deep := filepath.Join(repo, "docs", "specs", "issue-1")
	os.MkdirAll(deep, 0o755)
	os.MkdirAll(filepath.Join(repo, ".git"), 0o755)
	if got, err := Find(deep, ".git"); err != nil || got != repo {
		t.Errorf("Find = %q, %v; want %q", got, err, repo)
	}
	nested := filepath.Join(repo, "tools", "sub")
	os.MkdirAll(filepath.Join(nested, ".the-loop"), 0o755)
	link(t, "nowhere", filepath.Join(nested, ".the-loop", "harness-config.yaml"))
	if got, err := Find(nested, ".git", ".the-loop/harness-config.yaml"); err != nil || got != nested {
		t.Errorf("a broken marker still marks the root: Find = %q, %v; want %q", got, err, nested)
	}
	lone := filepath.Join(base, "lone")
	os.MkdirAll(lone, 0o755)
	if _, err := Find(lone, "no-such-marker-anywhere"); !errors.Is(err, ErrNoRepository) {
		t.Errorf("Find in no repository = %v; want ErrNoRepository", err)
	}
}

func TestReadRegularIsBoundedAndDoesNotBlockOnAFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "event.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRegular(fifo, 1<<20); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadRegular(fifo) = %v; want ErrNotRegular", err)
	}
	big := filepath.Join(dir, "big.json")
	write(t, big, strings.Repeat("x", 100))
	var tl *TooLargeError
	if _, err := ReadRegular(big, 10); !errors.As(err, &tl) {
		t.Errorf("ReadRegular over its limit = %v; want a TooLargeError", err)
	}
	if data, err := ReadRegular(big, 100); err != nil || len(data) != 100 {
		t.Errorf("ReadRegular at its limit = %d bytes, %v", len(data), err)
	}
}

func TestFileIDNamesAFileWhateverPathReachedIt(t *testing.T) {
	ways, _ := attackTree(t)
	for way, c := range ways {
		a, _ := c.Stat("src/a.go")
		b, _ := c.Stat("inside.go")
		other, _ := c.Stat("docs/specs/issue-1/design.md")
		da, ia, ok := FileID(a)
		db, ib, _ := FileID(b)
		do, io, _ := FileID(other)
		if !ok || da != db || ia != ib || (da == do && ia == io) {
			t.Errorf("%s: FileID of a file and a link to it = %d:%d, %d:%d; of another %d:%d", way, da, ia, db, ib, do, io)
		}
	}
}
