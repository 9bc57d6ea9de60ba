package repo

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadFile reads whatever path the fuzzer makes up in a tree full of
// links out: nothing outside may ever come back, and a read that succeeds
// must be of a file that really lies inside.
func FuzzReadFile(f *testing.F) {
	for _, seed := range []string{"src/a.go", "abs-out.md", "rel-out.md", "docs/specs/issue-1/dir-out/secret.md",
		"../elsewhere/secret.md", "docs/../../elsewhere/secret.md", "./inside.go", "fifo", "zero", "sparse",
		"docs/specs/issue-1/dir-out/../design.md", "//etc/passwd", "a\x00b", "."} {
		f.Add(seed)
	}
	ways, _ := attackTree(f)
	f.Fuzz(func(t *testing.T, rel string) {
		for way, c := range ways {
			data, err := c.ReadFile(rel, 1<<20)
			if bytes.Contains(data, []byte(secret)) {
				t.Fatalf("%s: ReadFile(%q) returned the outside", way, rel)
			}
			if err != nil {
				if errors.Is(err, ErrOutside) && strings.Contains(err.Error(), filepath.Dir(c.Root())) {
					t.Fatalf("%s: ReadFile(%q) names the host: %v", way, rel, err)
				}
				continue
			}
			p, _ := Clean(rel)
			real, rerr := filepath.EvalSymlinks(c.Abs(p))
			if rerr != nil {
				t.Fatalf("%s: ReadFile(%q) read something EvalSymlinks cannot find: %v", way, rel, rerr)
			}
			if _, ok := c.Rel(real); !ok {
				t.Fatalf("%s: ReadFile(%q) read %s, outside the checkout", way, rel, real)
			}
		}
	})
}
