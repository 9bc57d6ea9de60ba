package repo

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// readerTree is the attack tree with a directory of its own to read in:
// files to read one after another, beside every kind of entry a read must
// refuse, so that each refusal is met through a directory the Reader
// holds.
func readerTree(t testing.TB) (map[string]*Checkout, []string) {
	t.Helper()
	ways, out := attackTree(t)
	c := ways["fast"]
	if c == nil {
		c = ways["openat2"]
	}
	dir := c.Abs("src")
	for i := range 3 {
		write(t, filepath.Join(dir, fmt.Sprintf("f%d.go", i)), fmt.Sprintf("package f%d\n", i))
	}
	link(t, "a.go", filepath.Join(dir, "same-dir.go"))
	link(t, "../docs/specs/issue-1/design.md", filepath.Join(dir, "up-and-in.md"))
	link(t, filepath.Join(out, "secret.md"), filepath.Join(dir, "abs-out.md"))
	link(t, "../../elsewhere/secret.md", filepath.Join(dir, "rel-out.md"))
	link(t, "../../elsewhere", filepath.Join(dir, "dir-out"))
	link(t, "/dev/zero", filepath.Join(dir, "zero"))
	link(t, "nowhere", filepath.Join(dir, "dangling"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(3 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "sub", "b.go"), "package sub\n")
	rels := []string{"f0.go", "f1.go", "same-dir.go", "up-and-in.md", "abs-out.md", "rel-out.md", "dir-out/secret.md",
		"zero", "dangling", "fifo", "sparse", "sub", "missing.go", "a.go/x", "f2.go", "sub/b.go"}
	for i, r := range rels {
		rels[i] = "src/" + r
	}
	return ways, append(rels, "inside.go", "abs-out.md", "fifo", "src/a.go")
}

// TestReaderReadsAsTheCheckoutDoes reads every path of readerTree through
// one Reader, after a file of the same directory, so that all but the
// first read in each directory go through the directory it holds, and
// wants of each exactly what Checkout.ReadFileTo answers: the same bytes
// or the same error, links out, FIFOs and oversized files refused alike.
func TestReaderReadsAsTheCheckoutDoes(t *testing.T) {
	ways, rels := readerTree(t)
	for way, c := range ways {
		r := c.Reader()
		defer r.Close()
		for _, rel := range rels {
			// A file of the same directory first: the Reader then holds it.
			if _, err := r.ReadFileTo(path.Join(path.Dir(rel), "a.go"), 1<<20, nil); err != nil && path.Dir(rel) == "src" {
				t.Fatal(err)
			}
			got, gerr := r.ReadFileTo(rel, 64<<20, nil)
			want, werr := c.ReadFileTo(rel, 64<<20, nil)
			if string(got) != string(want) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Errorf("%s: Reader read %s = %q, %v; the checkout reads %q, %v", way, rel, got, gerr, want, werr)
			}
			if strings.Contains(string(got), secret) {
				t.Errorf("%s: Reader read %s from outside", way, rel)
			}
		}
	}
}

// TestReaderHeldDirectoryRemovedReadsTheWholeWay removes the directory a
// Reader holds and puts a link out in its place: the next read is refused
// as the whole way refuses it, not answered from the directory held.
func TestReaderHeldDirectoryRemovedReadsTheWholeWay(t *testing.T) {
	ways, out := attackTree(t)
	for way, c := range ways {
		dir := c.Abs("docs/specs/issue-2")
		os.MkdirAll(dir, 0o755)
		write(t, filepath.Join(dir, "a.md"), "a")
		write(t, filepath.Join(dir, "b.md"), "b")
		write(t, filepath.Join(out, "c.md"), secret)
		r := c.Reader()
		for _, rel := range []string{"docs/specs/issue-2/a.md", "docs/specs/issue-2/b.md"} {
			if _, err := r.ReadFileTo(rel, 1<<20, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		link(t, out, dir)
		data, err := r.ReadFileTo("docs/specs/issue-2/c.md", 1<<20, nil)
		if !strings.Contains(fmt.Sprint(err), ErrOutside.Error()) || len(data) > 0 {
			t.Errorf("%s: a read in a held directory swapped for a link out = %q, %v; want ErrOutside", way, data, err)
		}
		r.Close()
		os.Remove(dir)
	}
}

func TestIsCleanFileIsCleanOnADeeperPath(t *testing.T) {
	for _, rel := range []string{"a", "a/b", "src/pkg000/file.go", ".hidden/x", "a..b/c", "...", "", ".", "..", "/a", "a/", "a//b",
		"./a", "a/./b", "a/../b", "a/..", "../a", "a\x00b"} {
		p, err := Clean(rel)
		want := err == nil && p == rel && p != "."
		if got := isCleanFile(rel); got != want {
			t.Errorf("isCleanFile(%q) = %v; Clean says %q, %v", rel, got, p, err)
		}
	}
}

// FuzzReaderReadsAsTheCheckout reads whatever path the fuzzer makes up
// through a Reader that has just read in the same directory: never the
// outside, and always what Checkout.ReadFileTo answers.
func FuzzReaderReadsAsTheCheckout(f *testing.F) {
	for _, seed := range []string{"src/f1.go", "src/abs-out.md", "src/rel-out.md", "src/dir-out/secret.md", "src/fifo",
		"src/zero", "src/sparse", "src/sub", "src/same-dir.go", "src/up-and-in.md", "src/./f1.go", "src//f1.go",
		"src/../rel-out.md", "src/sub/../f1.go", "inside.go", "src/f1.go/", "src/\x00"} {
		f.Add(seed)
	}
	ways, _ := readerTree(f)
	f.Fuzz(func(t *testing.T, rel string) {
		for way, c := range ways {
			r := c.Reader()
			r.ReadFileTo(path.Join(path.Dir(rel), "f0.go"), 1<<20, nil)
			got, gerr := r.ReadFileTo(rel, 64<<20, nil)
			r.Close()
			if strings.Contains(string(got), secret) {
				t.Fatalf("%s: Reader read %q from outside", way, rel)
			}
			want, werr := c.ReadFileTo(rel, 64<<20, nil)
			if string(got) != string(want) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Fatalf("%s: Reader read %q = %q, %v; the checkout reads %q, %v", way, rel, got, gerr, want, werr)
			}
		}
	})
}
