//go:build linux

package repo

import "testing"

// TestReaderHoldsTheDirectoryItReadsIn checks that the Reader's cheaper
// way is the one taken: from the second file of a directory on, it holds
// the directory, and it lets go of it when the reads move on or it is
// closed.
func TestReaderHoldsTheDirectoryItReadsIn(t *testing.T) {
	ways, _ := readerTree(t)
	c := ways["openat2"]
	if c == nil {
		t.Skip("no openat2 here: every read goes the whole way")
	}
	r := c.Reader()
	held := func() bool { return *r.at.fd >= 0 }
	read := func(rel, want string) {
		t.Helper()
		if data, err := r.ReadFileTo(rel, 1<<20, nil); err != nil || string(data) != want {
			t.Fatalf("ReadFileTo(%s) = %q, %v", rel, data, err)
		}
	}
	read("src/f0.go", "package f0\n")
	if held() {
		t.Fatal("the Reader holds a directory after its first file")
	}
	read("src/f1.go", "package f1\n")
	if !held() || r.at.dir != "src" {
		t.Fatalf("the Reader holds %q (%v) after two files of src", r.at.dir, held())
	}
	read("src/same-dir.go", "package a\n") // a link: the whole way
	read("src/f2.go", "package f2\n")
	if !held() {
		t.Fatal("a link read the whole way let go of the directory")
	}
	read("src/sub/b.go", "package sub\n")
	if held() {
		t.Fatal("the Reader still holds src after moving on to src/sub")
	}
	read("src/f0.go", "package f0\n")
	read("src/f1.go", "package f1\n")
	r.Close()
	if held() {
		t.Fatal("Close left the directory held")
	}
	read("src/f2.go", "package f2\n")
}
