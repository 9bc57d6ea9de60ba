//go:build unix

package starlark

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestListDirSaysWhatEachEntryIs(t *testing.T) {
	_, root := globTree(t)
	dir := filepath.Join(root, "src")
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skip("no fifo here:", err)
	}
	got := map[string]entryKind{}
	n, err := listDir(dir, func(name string, kind entryKind) { got[strings.Clone(name)] = kind })
	want := map[string]entryKind{
		"a.go": kindRegular, "b.go": kindRegular, "alias.go": kindOther, "pipe": kindOther,
		"sub": kindDir, ".git": kindDir,
	}
	if err != nil || n != len(want) || len(got) != len(want) {
		t.Fatalf("listDir = %v (%d entries), %v; want %v", got, n, err, want)
	}
	for name, kind := range want {
		if got[name] != kind {
			t.Errorf("%s is kind %d, want %d", name, got[name], kind)
		}
	}
	if _, err := listDir(filepath.Join(root, "link"), func(string, entryKind) {}); err == nil {
		t.Error("listDir followed a symbolic link to a directory")
	}
}
