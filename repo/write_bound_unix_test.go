//go:build unix

package repo

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAnAppendTheDiskTookPartOfIsCutBack runs AppendFile on a real file
// into a real limit: a child that sets RLIMIT_FSIZE on itself, where a
// write past it is cut short and the next fails with EFBIG.
func TestAnAppendTheDiskTookPartOfIsCutBack(t *testing.T) {
	for _, limit := range []int{1000, 1003, 1049} {
		t.Run(strconv.Itoa(limit), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestAppendFSizeChild$")
			cmd.Env = append(os.Environ(), "REPO_FSIZE_CHILD="+dir, "REPO_FSIZE="+strconv.Itoa(limit))
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "refused after") {
				t.Fatalf("child: %v\n%s", err, out)
			}
			data, _ := os.ReadFile(filepath.Join(dir, "inbox.jsonl"))
			if len(data)%50 != 0 || len(data) > limit {
				t.Errorf("the file is %d bytes under a %d-byte limit; want whole 50-byte records only", len(data), limit)
			}
		})
	}
}

func TestAppendFSizeChild(t *testing.T) {
	dir := os.Getenv("REPO_FSIZE_CHILD")
	if dir == "" {
		t.Skip("the child of TestAnAppendTheDiskTookPartOfIsCutBack")
	}
	limit, _ := strconv.ParseUint(os.Getenv("REPO_FSIZE"), 10, 64)
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: limit, Max: limit}); err != nil {
		t.Fatal(err)
	}
	co, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	record := []byte(strings.Repeat("r", 49) + "\n")
	for i := range 1000 {
		if err := co.AppendFile("inbox.jsonl", record, 0o600); err != nil {
			if !errors.Is(err, syscall.EFBIG) {
				t.Fatalf("append %d: %v; want EFBIG", i, err)
			}
			fmt.Printf("refused after %d records: %v\n", i, err)
			return
		}
	}
	t.Fatal("1000 records fit under the limit")
}
