package policy

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/the-loop/the-loop/repo"
)

func TestMissingPatternsCountsAnEntryHoweverItIsWritten(t *testing.T) {
	cases := []struct {
		name, body string
		want       []string
	}{
		{"empty file", "", []string{"graph-state.lock"}},
		{"other lines only", "bin/\n*.o\n", []string{"graph-state.lock"}},
		{"plain", "bin/\ngraph-state.lock\n", []string{}},
		{"leading slash", "/graph-state.lock", []string{}},
		{"any depth", "**/graph-state.lock\n", []string{}},
		{"trailing blanks and CRLF", "graph-state.lock  \r\n", []string{}},
		{"a comment is not an entry", "# graph-state.lock\n", []string{"graph-state.lock"}},
		{"a negation is not an entry", "!graph-state.lock\n", []string{"graph-state.lock"}},
		{"a longer name is another file", "graph-state.lock.bak\n", []string{"graph-state.lock"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := missingPatterns(c.body, ignoredFiles); !slices.Equal(got, c.want) {
				t.Errorf("missingPatterns(%q) = %q, want %q", c.body, got, c.want)
			}
		})
	}
}

func TestIgnoreLocksAppendsOnceAndKeepsTheRest(t *testing.T) {
	cases := []struct{ name, before, after string }{
		{"no final newline", "bin/", "bin/\ngraph-state.lock\n"},
		{"final newline", "bin/\n", "bin/\ngraph-state.lock\n"},
		{"already there", "graph-state.lock\nbin/", "graph-state.lock\nbin/"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, filepath.Join(root, ".gitignore"), c.before)
			co := openCO(t, root)
			for range 2 {
				if _, err := ignoreLocks(co, false); err != nil {
					t.Fatal(err)
				}
			}
			if got := read(t, filepath.Join(root, ".gitignore")); got != c.after {
				t.Errorf("after two runs .gitignore = %q, want %q", got, c.after)
			}
		})
	}
}

func TestIgnoreLocksCreatesTheFileAndADryRunDoesNot(t *testing.T) {
	root := t.TempDir()
	co := openCO(t, root)
	rep, err := ignoreLocks(co, true)
	if err != nil || !rep.Created || !slices.Equal(rep.Added, []string{"graph-state.lock"}) {
		t.Fatalf("dry run: %+v, %v", rep, err)
	}
	if _, err := os.Lstat(filepath.Join(root, ".gitignore")); !os.IsNotExist(err) {
		t.Fatalf("a dry run wrote .gitignore: %v", err)
	}
	if _, err := ignoreLocks(co, false); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(root, ".gitignore")); got != "graph-state.lock\n" {
		t.Errorf(".gitignore = %q", got)
	}
}

func TestIgnoreLocksLeavesALinkOrAFIFOAlone(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "theirs")
	write(t, outside, "keep\n")
	cases := map[string]func(t *testing.T, p string){
		"link out of the checkout": func(t *testing.T, p string) {
			if err := os.Symlink(outside, p); err != nil {
				t.Fatal(err)
			}
		},
		"link inside it": func(t *testing.T, p string) {
			write(t, p+"-real", "bin/\n")
			if err := os.Symlink(".gitignore-real", p); err != nil {
				t.Fatal(err)
			}
		},
		"fifo": func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skip(err)
			}
		},
	}
	for name, make := range cases {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			p := filepath.Join(root, ".gitignore")
			make(t, p)
			before, _ := os.Lstat(p)
			rep, err := ignoreLocks(openCO(t, root), false)
			if err != nil || rep.Skipped == "" || len(rep.Added) != 0 {
				t.Fatalf("got %+v, %v; want it skipped with a reason", rep, err)
			}
			after, _ := os.Lstat(p)
			if before.Mode() != after.Mode() {
				t.Errorf("the file changed kind: %v -> %v", before.Mode(), after.Mode())
			}
			if got := read(t, outside); got != "keep\n" {
				t.Errorf("wrote through the link: %q", got)
			}
		})
	}
}

func openCO(t *testing.T, root string) *repo.Checkout {
	t.Helper()
	co, err := repo.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return co
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
