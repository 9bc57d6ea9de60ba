package repo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestCreateItemMakesANewItemsFolderAndNothingOutsideTheCheckout(t *testing.T) {
	for _, c := range []struct {
		name    string
		setup   func(t *testing.T, root, outside string)
		id      string
		wantErr error // nil: created
	}{
		{"a new item and its missing spec root", nil, "issue-99", nil},
		{"a folder already there", func(t *testing.T, root, _ string) {
			mustMkdir(t, filepath.Join(root, "docs/specs/issue-99"))
		}, "issue-99", nil},
		{"an id with ..", nil, "../issue-99", errBadID},
		{"an id with a slash", nil, "a/b", errBadID},
		{"a spec root that links out", func(t *testing.T, root, outside string) {
			mustMkdir(t, filepath.Join(root, "docs"))
			mustLink(t, outside, filepath.Join(root, "docs/specs"))
		}, "issue-99", ErrOutside},
		{"a spec root that links out to nothing", func(t *testing.T, root, outside string) {
			mustMkdir(t, filepath.Join(root, "docs"))
			mustLink(t, filepath.Join(outside, "gone"), filepath.Join(root, "docs/specs"))
		}, "issue-99", ErrOutside},
		{"an item folder that links out", func(t *testing.T, root, outside string) {
			mustMkdir(t, filepath.Join(root, "docs/specs"))
			mustLink(t, outside, filepath.Join(root, "docs/specs/issue-99"))
		}, "issue-99", ErrOutside},
		{"a spec root that is a file", func(t *testing.T, root, _ string) {
			mustMkdir(t, filepath.Join(root, "docs"))
			os.WriteFile(filepath.Join(root, "docs/specs"), nil, 0o644)
		}, "issue-99", errAny},
		{"a link to nothing where the folder would be", func(t *testing.T, root, _ string) {
			mustMkdir(t, filepath.Join(root, "docs/specs"))
			mustLink(t, "missing", filepath.Join(root, "docs/specs/issue-99"))
		}, "issue-99", errAny},
		{"a spec root that is a link to nothing inside", func(t *testing.T, root, _ string) {
			mustMkdir(t, filepath.Join(root, "docs"))
			mustLink(t, "nowhere", filepath.Join(root, "docs/specs"))
		}, "issue-99", errAny},
		{"a file where the folder would be", func(t *testing.T, root, _ string) {
			mustMkdir(t, filepath.Join(root, "docs/specs"))
			os.WriteFile(filepath.Join(root, "docs/specs/issue-99"), nil, 0o644)
		}, "issue-99", errAny},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, outside := t.TempDir(), t.TempDir()
			co, err := Open(root)
			if err != nil {
				t.Fatal(err)
			}
			defer co.Close()
			co, err = co.WithSpecDir("docs/specs")
			if err != nil {
				t.Fatal(err)
			}
			// What is on disk changes after the spec root was set, as a
			// checkout may between a config's check and a verb's write.
			if c.setup != nil {
				c.setup(t, root, outside)
			}
			// Creatable is CreateItem's answer, before anything is made.
			creatable := co.Creatable(c.id)
			it, err := co.CreateItem(c.id)
			if (creatable == nil) != (err == nil) {
				t.Errorf("Creatable said %v, CreateItem %v", creatable, err)
			}
			var ie *ItemError
			switch {
			case c.wantErr == nil:
				if err != nil || it.Dir != "docs/specs/"+c.id || !co.IsDir(it.Dir) {
					t.Errorf("got %+v, %v; want the folder created", it, err)
				}
			case !errors.As(err, &ie):
				t.Errorf("got %v; want an *ItemError", err)
			case c.wantErr == errBadID && ie.Dir != "":
				t.Errorf("got %v; want the id refused", err)
			case c.wantErr == ErrOutside && !errors.Is(err, ErrOutside):
				t.Errorf("got %v; want it refused as outside the checkout", err)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Errorf("created outside the checkout: %v", entries)
			}
			if _, err := os.Stat(filepath.Join(root, "issue-99")); !errors.Is(err, fs.ErrNotExist) {
				t.Error("an id with .. made a folder beside the spec root")
			}
		})
	}
}

var (
	errBadID = errors.New("bad id")
	errAny   = errors.New("any error")
)

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustLink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
