package repo

import (
	"errors"
	"io/fs"
	"slices"
	"testing"
)

func TestAnInMemoryCheckoutReadsOnlyItsOwnFiles(t *testing.T) {
	c, err := InMemory("memory:test", map[string][]byte{
		"docs/specs/a/requirements.md": []byte("# R\n"),
		"./src/main.go":                []byte("package main\n"),
		"big.txt":                      []byte("0123456789"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.ReadFile("src/main.go", 1<<20); err != nil || string(got) != "package main\n" {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
	var tooLarge *TooLargeError
	if _, err := c.ReadFile("big.txt", 4); !errors.As(err, &tooLarge) || tooLarge.Size != 10 {
		t.Errorf("ReadFile over the limit = %v, want a TooLargeError of 10 bytes", err)
	}
	for _, tc := range []struct {
		rel  string
		want error
	}{
		{"missing.go", fs.ErrNotExist},
		{"src", ErrNotRegular},
		{"src/main.go/x", ErrNotDir},
		{"../etc/passwd", ErrOutside},
		{"/etc/passwd", ErrOutside},
	} {
		if _, err := c.ReadFile(tc.rel, 1<<20); !errors.Is(err, tc.want) {
			t.Errorf("ReadFile(%q) = %v, want %v", tc.rel, err, tc.want)
		}
	}
	if fi, err := c.Stat("docs/specs"); err != nil || !fi.IsDir() {
		t.Errorf("Stat(docs/specs) = %v, %v; want a directory", fi, err)
	}
	if _, err := c.Stat("src/main.go/x"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat through a file = %v, want fs.ErrNotExist", err)
	}
	entries, err := c.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{"big.txt", KindRegular}, {"docs", KindDir}, {"src", KindDir}}
	if !slices.Equal(entries, want) {
		t.Errorf("ReadDir(.) = %v, want %v", entries, want)
	}
	specs, err := c.WithSpecDir("docs/specs")
	if err != nil {
		t.Fatal(err)
	}
	if items, err := specs.Items(); err != nil || !slices.Equal(items, []string{"a"}) {
		t.Errorf("Items = %v, %v; want [a]", items, err)
	}
	empty, err := InMemory("memory:test", map[string][]byte{"a/b.md": nil}, "docs/specs/new", "a")
	if err != nil {
		t.Fatal(err)
	}
	if !empty.IsDir("docs/specs/new") || !empty.IsDir("docs") {
		t.Error("a directory named with no file in it is not there")
	}
	if entries, _ := empty.ReadDir("docs/specs/new"); len(entries) != 0 {
		t.Errorf("an empty directory lists %v", entries)
	}
}

func TestAnInMemoryCheckoutRefusesWrites(t *testing.T) {
	c, err := InMemory("memory:test", map[string][]byte{"a.md": nil})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WriteFile("a.md", []byte("x"), 0o644); !errors.Is(err, ErrReadOnly) {
		t.Errorf("WriteFile = %v, want ErrReadOnly", err)
	}
	if err := c.MkdirAll("d"); !errors.Is(err, ErrReadOnly) {
		t.Errorf("MkdirAll = %v, want ErrReadOnly", err)
	}
	if err := c.Mkdir("d"); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Mkdir = %v, want ErrReadOnly", err)
	}
	if _, err := c.Locker("d/.lock"); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Locker = %v, want ErrReadOnly", err)
	}
	if _, err := c.Changes(t.Context(), "main"); !errors.Is(err, ErrNotGit) {
		t.Errorf("Changes = %v, want ErrNotGit", err)
	}
}

func TestAnInMemoryCheckoutRefusesPathsThatCannotBeFiles(t *testing.T) {
	for name, files := range map[string]map[string][]byte{
		"outside":              {"../x": nil},
		"the root":             {".": nil},
		"a file as a dir":      {"a": nil, "a/b": nil},
		"the same path x2":     {"a/b": nil, "a//b": nil},
		"a file inside a file": {"a": nil, "a/b/c": nil},
	} {
		if _, err := InMemory("memory:test", files); err == nil {
			t.Errorf("%s: InMemory accepted %v", name, files)
		}
	}
}
