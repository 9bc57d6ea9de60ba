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

// FuzzParseRenames: whatever git diff --name-status -z printed, reading it
// ends without a panic, and a rename read names two paths of the output,
// in its order. Paths are the checkout's names, so any byte but NUL is in
// reach of the change under review.
func FuzzParseRenames(f *testing.F) {
	for _, seed := range []string{"", "\x00", "R100\x00docs/a\x00docs/b\x00", "M\x00x\x00R090\x00a\x00b\x00C075\x00c\x00d\x00",
		"R100\x00only-one\x00", "D\x00R100\x00", "A\x00R100\x00a\x00R100\x00"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		renames, err := parseRenames(out)
		if err != nil {
			var ge *GitError
			if !errors.As(err, &ge) {
				t.Fatalf("%q: %T, want a *GitError", out, err)
			}
			return
		}
		fields := strings.Split(string(out), "\x00")
		at := 0
		for _, r := range renames {
			if strings.Contains(r.From+r.To, "\x00") {
				t.Fatalf("%q: a path with a NUL in it: %+v", out, r)
			}
			for at+1 < len(fields) && (fields[at] != r.From || fields[at+1] != r.To) {
				at++
			}
			if at+1 >= len(fields) {
				t.Fatalf("%q: %+v is not two paths of the output, in its order", out, r)
			}
			at += 2
		}
	})
}
